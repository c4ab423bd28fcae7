"""The ``scorecard`` stage: frozen items, backends, runs and gates (plan §18).

The notebook loads its parameters (:class:`~.params.ScorecardParams`, checked once) and calls
these in order: :func:`freeze` draws every suite's items once (Suite A items and Gate A, their
Suite B pairs, the games, the Suite D tasks) plus the replication items on a new seed (Gate
D); :func:`make_backend` gives a model (a scripted stand-in by default, or any backend's
settings); :func:`run_variants` answers the frozen items with each reader variant;
:func:`decide` runs Gates B-E for each intervention and records every outcome.

Suite D's cross-agent target (:func:`attach_targets`) is ``cross_model``: by default a second
scripted model (``{backend: scripted, variant: other}``), or a real one (the predictor's own
model only when it is sampled, ``cross_temperature > 0``, so that it is not the ``self``
target again).  A real target's policy change is a frozen system message
(:data:`CHANGED_POLICY`). ``reply_caps`` caps each prompt family's replies
(:data:`~.variants.REPLY_CAPS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from cogrsi_lib.llm.backend import Backend, BackendSpec, StandIns
from cogrsi_lib.llm.together import run_together, serves_concurrently
from cogrsi_lib.nested import (
    Generation,
    NestedConfig,
    baseline_curves,
    baseline_table,
    generate,
    integrity_table,
)
from cogrsi_lib.scorecard.applied import applied_items
from cogrsi_lib.scorecard.direct import DEFAULT_MAX_TOKENS, DirectSystem
from cogrsi_lib.scorecard.gates import (
    Decision,
    GateConfig,
    GateOutcome,
    Replication,
    gate_a,
    gate_b,
    gate_c,
    gate_d,
    gate_e,
)
from cogrsi_lib.scorecard.params import ScorecardParams
from cogrsi_lib.scorecard.runs import Suites, SystemRun, run_suites
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill
from cogrsi_lib.scorecard.selfpred import CROSS, SelfPredConfig, Target
from cogrsi_lib.scorecard.strategic import StrategicConfig, generate_strategic
from cogrsi_lib.scorecard.variants import (
    INTERVENTIONS,
    make_variant,
    needed_variants,
    reply_caps,
)

# The alternate scripted model of Gate D: a weaker bare prompt, the same interventions.
ALT_SKILLS = {
    "bare": Skill(depth_limit=1, leak_period=3, gap_period=2, confidence=0.6),
    "perspective": Skill(depth_limit=3, leak_period=6, confidence=0.7),
    "store": Skill(depth_limit=4, confidence=0.85),
}
# Suite D's cross-agent target and its changed policy (preferred option per task class).
OTHER_PREFERENCES = {"colour": 2, "number": 3, "place": 1}
CHANGED_PREFERENCES = {"colour": 3, "number": 0, "place": 0}
# A real cross-agent target's policy change (plan §19 Experiment 6): a frozen system message.
CHANGED_POLICY = ("Your policy has changed. From now on, whatever the task, answer with the "
                  "last of the listed options.")


def gate_config(p: ScorecardParams) -> GateConfig:
    """The gate thresholds of the stage's parameters (:meth:`ScorecardParams.gate_config`)."""
    return p.gate_config()


@dataclass(frozen=True)
class Frozen:
    """Every frozen item set of one stage run."""

    generation: Generation
    suites: Suites
    replication_generation: Generation
    replication: Suites
    integrity: pl.DataFrame
    curves: pl.DataFrame

    def all_suites(self) -> list[Suites]:
        return [self.suites, self.replication]

    def core(self) -> Suites:
        """Suites A-B only: what Gates B, D and E read (for the alternate-model replication)."""
        return replace(self.suites, strategic=(), selfpred=None, cross_targets=(), changed={})


def _nested_config(p: ScorecardParams, seed: int) -> NestedConfig:
    return NestedConfig(n_per_cell=p.n_per_cell, n_agents=p.n_agents,
                        n_containers=p.n_containers, min_events=p.min_events,
                        max_events=p.max_events, seed=seed)


def freeze(p: ScorecardParams) -> Frozen:
    """Draw the items once; Suites C-D and the cross targets are attached later by
    :func:`attach_targets` (they need the backends)."""
    gen = generate(_nested_config(p, p.seed))
    table = baseline_table(gen.items)
    curves = baseline_curves(gen.items)
    strategic = generate_strategic(StrategicConfig(
        n_per_game=p.n_per_game, seed=p.strategic_seed,
        history_length=p.history_length, noise=p.opponent_noise))
    spc = SelfPredConfig(n_test=p.selfpred_test, counts=tuple(p.observation_counts),
                         classes=tuple(p.selfpred_classes), seed=p.selfpred_seed)
    depths = tuple(p.applied_depths)
    suites = Suites(tuple(gen.items), tuple(applied_items(gen.items, depths)),
                    tuple(strategic), spc, n_resamples=p.bootstrap_resamples,
                    baselines=table)
    rep = generate(_nested_config(p, p.replication_seed))
    replication = Suites(tuple(rep.items), tuple(applied_items(rep.items, depths)),
                         n_resamples=p.bootstrap_resamples)
    return Frozen(gen, suites, rep, replication, integrity_table(gen, table, curves), curves)


def scripted_model(frozen: Frozen, name: str = "scripted",
                   skills: Mapping[str, Skill] | None = None) -> ScriptedModel:
    """A scripted model that knows every frozen item."""
    m = ScriptedModel(name=name) if skills is None else ScriptedModel(name=name,
                                                                      skills=dict(skills))
    for s in frozen.all_suites():
        m.add_nested(s.nested).add_applied(s.applied).add_strategic(s.strategic)
    if frozen.suites.selfpred is not None:
        m.add_tasks(frozen.suites.selfpred.tasks())
    return m


def stand_ins(frozen: Frozen) -> StandIns:
    """The stage's scripted models by variant (``backend: scripted``), knowing every frozen
    item. The cross-agent target's ``other`` is a pair of scripted models (before and after
    its policy change), built by :func:`attach_targets`."""
    return {"default": lambda: scripted_model(frozen).backend(),
            "alt": lambda: scripted_model(frozen, "scripted-alt", ALT_SKILLS).backend()}


def make_backend(spec: BackendSpec | None, frozen: Frozen,
                 base_dir: str | None = None) -> Backend | None:
    """The model ``spec`` names (a scripted one from :func:`stand_ins`), or None (none)."""
    return None if spec is None else spec.build(base_dir, stand_ins(frozen))


def _scripted_other(spec: BackendSpec) -> bool:
    return spec.backend == "scripted" and getattr(spec, "variant", None) == "other"


def cross_backend(p: ScorecardParams, frozen: Frozen, model_backend: Backend | None,
                  base_dir: str | None = None, model: BackendSpec | None = None
                  ) -> Backend | None:
    """The backend of Suite D's cross-agent target; None for the scripted ``other`` one.
    The predictor's own model (``model``, default ``p.model``) is reused rather than loaded
    twice."""
    spec = p.cross_model
    if _scripted_other(spec):
        return None
    if spec == (model if model is not None else p.model) and model_backend is not None:
        return model_backend
    return make_backend(spec, frozen, base_dir)


def attach_targets(frozen: Frozen, backend: Backend | None = None, temperature: float = 0.0,
                   max_tokens: int = DEFAULT_MAX_TOKENS, structured: bool = True) -> Frozen:
    """Suite D's cross-agent target and its changed version.

    Without ``backend``: a second scripted model, whose preferences change.  With one: that
    model asked each task directly under the bare prompt at ``temperature`` (each task's
    draw fixed by its prompt), and after the change the same under :data:`CHANGED_POLICY`.
    The predictor is told what the target is, never that it changed.
    """
    spc = frozen.suites.selfpred
    if spc is None:
        return frozen
    if backend is None:
        tasks = spc.tasks()
        other = ScriptedModel(name="scripted-other", preferences=OTHER_PREFERENCES)
        new = ScriptedModel(name="scripted-other-v2", preferences=CHANGED_PREFERENCES)
        before = DirectSystem(other.add_tasks(tasks).backend(), name="other")
        after = DirectSystem(new.add_tasks(tasks).backend(), name="other")
        desc = "another model, asked the task directly"
    else:
        kw = {"name": "other", "max_tokens": max_tokens, "temperature": temperature,
              "structured": structured}
        before = DirectSystem(backend, **kw)
        after = DirectSystem(backend, system=CHANGED_POLICY, **kw)
        how = f"sampling at temperature {temperature:g}" if temperature else "greedy"
        desc = f"another system ({backend.model}, {how}), asked the task directly"
    cross = Target("other", CROSS, before, desc)
    changed = Target("other", CROSS, after, desc)
    return replace(frozen, suites=replace(frozen.suites, cross_targets=(cross,),
                                          changed={"other": changed}))


def targets_for(p: ScorecardParams, frozen: Frozen, backend: Backend | None,
                base_dir: str | None = None, model: BackendSpec | None = None) -> Frozen:
    """:func:`attach_targets` with the stage's ``cross_model``, ``cross_temperature`` and the
    bare prompt's reply cap (``model``: the predictor's spec, default ``p.model``)."""
    return attach_targets(frozen, cross_backend(p, frozen, backend, base_dir, model),
                          p.cross_temperature, p.reply_caps.bare, p.structured)


def run_variants(backend: Backend, suites: Suites, variants: Sequence[str],
                 caps: Mapping[str, int] | None = None, structured: bool = True
                 ) -> dict[str, SystemRun]:
    """Every variant on the same frozen items; ``caps``: reply caps per prompt family;
    ``structured``: enforce each reply's declared format while decoding. The variants are
    independent: side by side on a backend that serves concurrent requests
    (:mod:`cogrsi_lib.llm.together`)."""
    c = reply_caps(caps)
    runs = run_together([
        lambda v=v: run_suites(make_variant(v, backend, c, structured), backend, suites,
                               self_max_tokens=c["bare"], structured=structured)
        for v in variants], serves_concurrently(backend))
    return dict(zip(variants, runs, strict=True))


def variants_for(p: ScorecardParams) -> list[str]:
    return needed_variants(list(p.interventions))


def decide(
    name: str, runs: Mapping[str, SystemRun], replications: Sequence[Replication],
    gate_a_outcome: GateOutcome, cfg: GateConfig,
) -> Decision:
    """Gates A-E for intervention ``name``; every outcome is kept in the decision."""
    iv = INTERVENTIONS[name]
    treat, base, abl = runs[iv.name], runs[iv.baseline], runs[iv.ablation]
    b = gate_b(treat, base, cfg)
    return Decision(name, (
        gate_a_outcome, b, gate_c(treat, base, cfg),
        gate_d(replications, iv.architectural, cfg, primary=b), gate_e(treat, abl, cfg),
    ))


def replications_for(name: str, seed_runs: Mapping[str, SystemRun] | None,
                     model_runs: Mapping[str, SystemRun] | None, seed_label: str,
                     model_label: str) -> list[Replication]:
    """The Gate D replications available for intervention ``name``."""
    iv = INTERVENTIONS[name]
    out = []
    for kind, runs, label in (("seed", seed_runs, seed_label), ("model", model_runs,
                                                                 model_label)):
        if runs is not None:
            out.append(Replication(kind, label, runs[iv.name], runs[iv.baseline]))
    return out


def check_gate_a(frozen: Frozen, runs: Sequence[SystemRun]) -> GateOutcome:
    return gate_a(frozen.integrity, runs)


def summary_json(profiles: Sequence[Any], decisions: Sequence[Decision]) -> dict[str, Any]:
    """What the stage's ``summary.json`` holds: each profile's full vector with RR beside
    it, and each intervention's gate statuses and decision."""
    return {
        "profiles": {p.system: {"vector": p.values, "rr": p.rr} for p in profiles},
        "decisions": [d.summary() for d in decisions],
    }



@dataclass(frozen=True)
class ModelScorecard:
    """One model's scorecard on the frozen items: its backend, the items with its Suite D
    targets attached, every variant's runs, the Gate D replications' runs (new seed; the
    alternate model, None without one) and each intervention's decision."""

    backend: Backend
    frozen: Frozen
    runs: dict[str, SystemRun]
    seed_runs: dict[str, SystemRun]
    model_runs: dict[str, SystemRun] | None
    decisions: list[Decision]

    @property
    def model(self) -> str:
        """The model's name, as its backend gives it (its rows' ``model``)."""
        return self.backend.model


@dataclass(frozen=True)
class Alternate:
    """Gate D's alternate model and its variants' runs on the frozen Suites A-B: the same for
    every predictor, so drawn once per stage (:func:`alternate`)."""

    backend: Backend
    runs: dict[str, SystemRun]


def alternate(p: ScorecardParams, frozen: Frozen, base_dir: str | None = None
              ) -> Alternate | None:
    """``p.alt_model``'s variants on the frozen core items (None without an alternate)."""
    backend = make_backend(p.alt_model, frozen, base_dir)
    if backend is None:
        return None
    runs = run_variants(backend, frozen.core(), variants_for(p), p.reply_caps.model_dump(),
                        p.structured)
    return Alternate(backend, runs)


def score_model(p: ScorecardParams, frozen: Frozen, spec: BackendSpec, alt: Alternate | None,
                base_dir: str | None = None) -> ModelScorecard:
    """The stage's work for one model of ``p.model_list()``: its variants on the frozen
    items, the Gate D replications on the new seed and on the alternate model (``alt``,
    from :func:`alternate`), and Gates A-E for each intervention."""
    backend = make_backend(spec, frozen, base_dir)
    if backend is None:
        raise ValueError("the scorecard needs a model")
    own = targets_for(p, frozen, backend, base_dir, spec)
    variants, caps = variants_for(p), p.reply_caps.model_dump()
    runs = run_variants(backend, own.suites, variants, caps, p.structured)
    seed_runs = run_variants(backend, own.replication, variants, caps, p.structured)
    model_runs = alt.runs if alt is not None else None
    gate_a_outcome = check_gate_a(own, list(runs.values()))
    decisions = [decide(name, runs, replications_for(
        name, seed_runs, model_runs, f"seed {p.replication_seed}",
        alt.backend.identity if alt is not None else ""), gate_a_outcome, p.gate_config())
        for name in p.interventions]
    return ModelScorecard(backend, own, runs, seed_runs, model_runs, decisions)


def over_models(cards: Sequence[ModelScorecard],
                table: Callable[[ModelScorecard], pl.DataFrame]) -> pl.DataFrame:
    """``table`` of each model's scorecard, stacked with ``model`` as the first column."""
    from cogrsi_lib.matrix import by_model

    return by_model([(c.model, table(c)) for c in cards])
