"""Shared counterexamples and the four verdicts (CogRSI §4.3, §5.4).

A *shared counterexample* is a question where both translations apply, give the same
answer, and the oracle answers differently: two independent readings agree on what the rule
says, and it is wrong.  In order:

- **invalid**: at least one shared counterexample;
- **vacuous**: the rule almost never applies (at most ``vacuous_threshold`` of the questions
  are covered by either translation);
- **valid**: the translations agree on at least ``agreement_threshold`` of the questions
  where they apply (``agreement_over``: ``either`` = where at least one applies, so a
  disagreement about scope counts against agreement; ``both`` = where both apply);
- **ambiguous** otherwise, and whenever a translation has no results (no code, cut off by
  the output cap, rejected, failed or out of time or memory), as the paper counts them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from cogrsi_lib.audit.sandbox import RunResult, answers_equal

VERDICTS = ("invalid", "valid", "vacuous", "ambiguous")


@dataclass(frozen=True)
class VerdictConfig:
    """Thresholds of the verdict (``params.yaml: audit``)."""

    agreement_threshold: float = 0.8
    vacuous_threshold: float = 0.001
    agreement_over: Literal["either", "both"] = "either"

    def __post_init__(self) -> None:
        if not 0 <= self.agreement_threshold <= 1 or not 0 <= self.vacuous_threshold <= 1:
            raise ValueError("thresholds are shares in [0, 1]")
        if self.agreement_over not in ("either", "both"):
            raise ValueError("agreement_over is 'either' or 'both'")


@dataclass(frozen=True)
class Verdict:
    """The verdict of one rule and the counts behind it."""

    verdict: str
    reason: str
    n_questions: int
    outcome_a: str
    outcome_b: str
    n_applies_a: int = 0
    n_applies_b: int = 0
    n_either: int = 0
    n_both: int = 0
    n_agree: int = 0
    n_shared_counterexamples: int = 0
    applies_rate: float = 0.0
    agreement: float | None = None
    agreement_either: float | None = None
    agreement_both: float | None = None

    @property
    def decided(self) -> bool:
        """Invalid or valid: the audit could decide the rule (§5.4)."""
        return self.verdict in ("invalid", "valid")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"decided": self.decided}


def _share(num: int, den: int) -> float | None:
    return num / den if den else None


def decide(run_a: RunResult, run_b: RunResult, gold: np.ndarray,
           config: VerdictConfig | None = None) -> tuple[Verdict, np.ndarray]:
    """The verdict and the indices of the shared counterexamples.

    ``gold`` holds the oracle's answers, normalised like the runs' answers.
    """
    cfg = config or VerdictConfig()
    n = len(gold)
    empty = np.zeros(0, dtype=np.int64)
    if not (run_a.ok and run_b.ok):
        failed = [f"{k}: {r.outcome}" for k, r in (("A", run_a), ("B", run_b)) if not r.ok]
        return Verdict("ambiguous", "no usable translation (" + ", ".join(failed) + ")", n,
                       run_a.outcome, run_b.outcome), empty
    a, b = run_a.applies(), run_b.applies()
    both, either = a & b, a | b
    agree = both & answers_equal(run_a.answers, run_b.answers)
    wrong = ~answers_equal(run_a.answers, gold)
    shared = np.flatnonzero(agree & wrong)
    n_either, n_both, n_agree = int(either.sum()), int(both.sum()), int(agree.sum())
    rate = n_either / n if n else 0.0
    agreement_either, agreement_both = _share(n_agree, n_either), _share(n_agree, n_both)
    agreement = agreement_either if cfg.agreement_over == "either" else agreement_both
    if len(shared):
        verdict, reason = "invalid", f"{len(shared)} shared counterexample(s)"
    elif rate <= cfg.vacuous_threshold:
        verdict, reason = "vacuous", f"applies to {n_either} of {n} questions"
    elif agreement is not None and agreement >= cfg.agreement_threshold:
        verdict, reason = "valid", f"no counterexample; agreement {agreement:.3f}"
    else:
        shown = "undefined" if agreement is None else f"{agreement:.3f}"
        verdict, reason = "ambiguous", f"no shared counterexample; agreement {shown}"
    v = Verdict(
        verdict, reason, n, run_a.outcome, run_b.outcome,
        n_applies_a=int(a.sum()), n_applies_b=int(b.sum()), n_either=n_either, n_both=n_both,
        n_agree=n_agree, n_shared_counterexamples=len(shared), applies_rate=rate,
        agreement=agreement, agreement_either=agreement_either, agreement_both=agreement_both,
    )
    return v, shared.astype(np.int64)
