"""The harness's control layer: a per-item gate over execution paths, a validator with bounded
repair, and the offline optimizer of the gate policy (zing-social-mind-report §5.2 eq. 3,
§5.7.0.2-5.7.0.3 eq. 10).

- :func:`gate` is eq. 3's ``pi_gate(x; theta)``: from the item's parsed question (its asked
  perspective) and which modules found evidence for it, it opens the modules whose gate weight
  in the :class:`Policy` clears ``open_at`` and picks one of three paths: ``direct`` (the
  narrative alone), ``augment`` (the opened modules' evidence in one draft) or ``staged``
  (a direct draft first; the evidence only if the validator flags it). Staged is offered for
  nested beliefs (two or more agents in the chain), where the report finds evidence most
  often misapplied; the path weights decide among the offered paths.
- :func:`validate` checks a draft against the narrative's tracked state (Starling's answers for
  the asked chain and for reality): ``over_mentalising`` (a reality question answered with
  something other than reality), ``perspective_drift`` (a belief question answered with
  reality where the chain's tracked view differs) and ``norm_override`` (with notes or
  experience in the prompt, an answer that is neither the chain's view nor reality). Where the
  story gives no tracked state, nothing is flagged.
- :func:`repair_block` is the bounded constraint a flagged draft is redrafted under, once.
- :func:`optimize` is eq. 10: each trace gets a loss (a wrong answer costs ``wrong_loss``, a
  right one with a validator flag ``flag_loss``) and every gate and path weight moves by
  ``lr`` times how much better or worse than average the traces that used it were.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

PATHS = ("direct", "augment", "staged")
FLAGS = ("over_mentalising", "perspective_drift", "norm_override")
#: modules whose evidence can pull an answer away from the story (norm_override)
NORMATIVE = ("experience", "retrieval")


@dataclass
class Policy:
    """theta: a weight per module gate and per path. A module opens when its weight is at
    least ``open_at``; among the offered paths the highest weight wins (ties: ``PATHS``
    order)."""

    gates: dict[str, float] = field(default_factory=lambda: {
        "skills": 1.0, "state": 1.0, "experience": 1.0, "retrieval": 1.0})
    paths: dict[str, float] = field(default_factory=lambda: {
        "direct": 0.0, "augment": 1.0, "staged": 1.5})
    open_at: float = 0.5

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Policy:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Decision:
    """What the gate chose for one item."""

    path: str
    opened: tuple[str, ...]
    offered: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "opened": list(self.opened), "offered": list(self.offered)}


def gate(chain: Sequence[str] | None, evidence: Mapping[str, bool], policy: Policy) -> Decision:
    """eq. 3 for one item: ``chain`` is the asked perspective (None: not a belief or reality
    question), ``evidence`` says which active modules found something for the item."""
    opened = tuple(m for m, has in evidence.items()
                   if has and policy.gates.get(m, 1.0) >= policy.open_at)
    if not opened:
        return Decision("direct", (), ("direct",))
    offered = ["direct", "augment"]
    if chain is not None and len(chain) >= 2:
        offered.append("staged")
    best = max(offered, key=lambda p: (policy.paths.get(p, 0.0), -PATHS.index(p)))
    return Decision(best, opened if best != "direct" else (), tuple(offered))


def _norm(text: str | None) -> str:
    t = (text or "").strip().lower().rstrip(".").replace("_", " ")
    return t[4:] if t.startswith("the ") else t


def option_for(value: str | None, options: Sequence[tuple[str, str]]) -> str | None:
    """The label of the option whose text is ``value`` (None: no such option)."""
    if value is None:
        return None
    return next((label for label, text in options if _norm(text) == _norm(value)), None)


@dataclass(frozen=True)
class Check:
    """A validator's reading of one draft."""

    flags: tuple[str, ...]
    view: str | None      # the chain's tracked value (None: unknown)
    reality: str | None   # the tracked reality

    def to_dict(self) -> dict[str, Any]:
        return {"flags": list(self.flags), "view": self.view, "reality": self.reality}


def validate(answer: str | None, chain: Sequence[str] | None, view: str | None,
             reality: str | None, opened: Iterable[str] = ()) -> Check:
    """The failure modes of §5.7.0.2 found in a draft's ``answer`` (option text)."""
    if chain is None or answer is None:
        return Check((), view, reality)
    a, v, r = _norm(answer), _norm(view), _norm(reality)
    flags: list[str] = []
    if not chain:
        if reality is not None and a != r:
            flags.append("over_mentalising")
    elif view is not None:
        if a == r and v != r:
            flags.append("perspective_drift")
        elif a != v and a != r and set(opened) & set(NORMATIVE):
            flags.append("norm_override")
    return Check(tuple(flags), view, reality)


def repair_block(chain: Sequence[str], obj: str, attribute: str, check: Check,
                 label: str | None = None) -> str:
    """The constraint a flagged draft is redrafted under (once); ``label``: the option whose
    text is the tracked value, when there is one."""
    who = " believes ".join(chain) if chain else "the story (reality)"
    value = check.view if chain else check.reality
    option = f" (option {label})" if label else ""
    return (f"Check before answering: the question asks what {who} "
            f"{'believes' if chain else 'says'} about the {obj} ({attribute}). "
            f"Following who saw and heard what in the story, that is: {value}{option}. "
            f"Answer from that point of view; the story overrides every note and habit.")


def trace_loss(correct: bool, flags: Sequence[str], wrong_loss: float = 1.0,
               flag_loss: float = 0.1) -> float:
    """phi(tau): a wrong answer costs far more than a flagged trace (eq. 10)."""
    return wrong_loss if not correct else (flag_loss if flags else 0.0)


def optimize(traces: Sequence[Mapping[str, Any]], policy: Policy, lr: float = 0.5,
             wrong_loss: float = 1.0, flag_loss: float = 0.1) -> tuple[Policy, dict[str, Any]]:
    """One step of eq. 10 on ``traces`` (each: ``correct``, ``path``, ``opened``, ``flags``):
    a gate whose opening went with a higher mean loss than the traces overall is tightened,
    one with a lower mean loss loosened; paths likewise. Returns the new policy and the
    credit table (decision -> traces, mean loss)."""
    if not traces:
        return policy, {}
    losses = [trace_loss(bool(t["correct"]), t.get("flags") or (), wrong_loss, flag_loss)
              for t in traces]
    overall = sum(losses) / len(losses)
    credit: dict[str, dict[str, float]] = {}

    def mean_where(pred: Any) -> tuple[int, float] | None:
        xs = [x for t, x in zip(traces, losses, strict=True) if pred(t)]
        return (len(xs), sum(xs) / len(xs)) if xs else None

    gates, paths = dict(policy.gates), dict(policy.paths)
    for m in sorted(gates):
        got = mean_where(lambda t, m=m: m in (t.get("opened") or ()))
        if got is not None:
            gates[m] -= lr * (got[1] - overall)
            credit[f"gate:{m}"] = {"traces": got[0], "loss": got[1], "weight": gates[m]}
    for p in PATHS:
        got = mean_where(lambda t, p=p: t.get("path") == p)
        if got is not None:
            paths[p] = paths.get(p, 0.0) - lr * (got[1] - overall)
            credit[f"path:{p}"] = {"traces": got[0], "loss": got[1], "weight": paths[p]}
    credit["all"] = {"traces": len(traces), "loss": overall}
    return Policy(gates, paths, policy.open_at), credit
