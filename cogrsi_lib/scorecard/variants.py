"""Reader variants measured on the same frozen items, and the interventions they test
(plan §10, §11, §18 intervention order, §19 Experiment 3).

* ``bare``: the bare-model prompt (:mod:`.direct`);
* ``perspective``: the recursive-perspective prompt (§10); ``perspective_no_state`` is the
  same format without the state slots, its ablation;
* ``store``: the explicit epistemic store (§11); ``store_ablated`` builds the same store
  but answers with the model's own answer field, its ablation;
* any registered reader system (:mod:`cogrsi_lib.baselines.registry`: zero-shot, CoT, SC,
  SimToM, PercepToM, the grounded reader) for comparison.

An :class:`Intervention` names what it is compared with: Phase 1 against the bare model,
Phase 2 against Phase 1 (§11 keep criterion: "Compare Phase 2 against Phase 1"), and the
ablation that Gate E disables.

Reply caps come per prompt family (:data:`REPLY_CAPS`: ``bare``, ``perspective``, ``store``);
a variant's fallback to the bare prompt uses the ``bare`` cap, so its requests are the bare
variant's own (one completion-cache entry each) and every variant answers the other suites
with the same replies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.system import System
from cogrsi_lib.scorecard import perspective, store_system
from cogrsi_lib.scorecard.direct import DEFAULT_MAX_TOKENS, DirectSystem
from cogrsi_lib.scorecard.perspective import PerspectiveSystem
from cogrsi_lib.scorecard.store_system import StoreSystem

VARIANTS = ("bare", "perspective", "perspective_no_state", "store", "store_ablated")
# default reply caps (tokens) of each prompt family
REPLY_CAPS = {"bare": DEFAULT_MAX_TOKENS, "perspective": perspective.MAX_TOKENS,
              "store": store_system.MAX_TOKENS}


def reply_caps(given: Mapping[str, int] | None = None) -> dict[str, int]:
    """:data:`REPLY_CAPS` overridden by ``given``; unknown families or caps below 1 are errors."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(REPLY_CAPS))
    if unknown:
        raise ValueError(f"unknown reply caps {unknown}; known: {sorted(REPLY_CAPS)}")
    caps = REPLY_CAPS | given
    bad = {k: v for k, v in caps.items() if isinstance(v, bool) or not isinstance(v, int)
           or v < 1}
    if bad:
        raise ValueError(f"reply caps must be whole numbers of tokens >= 1: {bad}")
    return caps


@dataclass(frozen=True)
class Intervention:
    """A treatment variant, the variant it must beat, and its ablation."""

    name: str
    baseline: str
    ablation: str
    plan: str
    architectural: bool = True


INTERVENTIONS: dict[str, Intervention] = {
    "perspective": Intervention("perspective", "bare", "perspective_no_state", "§10"),
    "store": Intervention("store", "perspective", "store_ablated", "§11"),
}


def make_variant(name: str, backend: Backend, caps: Mapping[str, int] | None = None,
                 structured: bool = True) -> System:
    """A variant (or a baseline of :mod:`cogrsi_lib.baselines`) on ``backend``; ``caps``
    overrides :data:`REPLY_CAPS`; ``structured``: enforce each reply's declared format."""
    c = reply_caps(caps)
    bare = c["bare"]
    if name == "bare":
        return DirectSystem(backend, name=name, max_tokens=bare, structured=structured)
    if name in ("perspective", "perspective_no_state"):
        return PerspectiveSystem(backend, name=name, state=name == "perspective",
                                 max_tokens=c["perspective"], bare_max_tokens=bare,
                                 structured=structured)
    if name in ("store", "store_ablated"):
        return StoreSystem(backend, name=name, read_store=name == "store",
                           max_tokens=c["store"], bare_max_tokens=bare, structured=structured)
    from cogrsi_lib.baselines import is_system, make_system, registry
    from cogrsi_lib.reader import ReaderConfig

    if is_system(name):
        return make_system(name, backend, ReaderConfig(structured=structured))
    raise ValueError(f"unknown variant {name!r}; known: {', '.join(VARIANTS)} and the reader "
                     f"systems {', '.join(registry.known())}")


def needed_variants(interventions: list[str]) -> list[str]:
    """Every variant the named interventions need (treatments, baselines, ablations), bare
    first, without repeats."""
    out = ["bare"]
    for name in interventions:
        iv = INTERVENTIONS[name]
        out += [iv.baseline, iv.name, iv.ablation]
    return list(dict.fromkeys(out))
