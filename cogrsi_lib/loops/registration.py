"""Calibrated registration (CogRSI §4.2 "Calibrated registration", App. C.2 "Loop settings").

Each candidate is scored against the incumbent on three trial cohorts of 80; its gain on a
cohort is the difference in accuracy, in points. A candidate is *admissible* if its mean gain
is at least the margin delta (3 points by default; the accuracy-only loop uses 1), its gain is
at least zero on ``min_nonneg`` of the cohorts (two of three; 0 switches the rule off), and it
passes every gate. Among admissible candidates the largest mean gain wins; ties go to the
larger gate gain, then to the earlier candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cogrsi_lib.loops.gates import GateResult

EPS = 1e-9


def cohort_gain(candidate_correct: int, incumbent_correct: int, n: int) -> float:
    """Accuracy gain on one cohort of ``n`` questions, in points."""
    if n <= 0:
        raise ValueError("an empty cohort has no gain")
    return 100.0 * (candidate_correct - incumbent_correct) / n


@dataclass(frozen=True)
class RegistrationRule:
    """The margin (points) and the cohort rule (gains >= 0 on at least ``min_nonneg``)."""

    delta: float = 3.0
    min_nonneg: int = 2

    def passes_margin(self, gains: Sequence[float]) -> bool:
        return mean(gains) >= self.delta - EPS

    def passes_cohorts(self, gains: Sequence[float]) -> bool:
        if self.min_nonneg > len(gains):
            raise ValueError(f"the cohort rule needs {self.min_nonneg} cohorts, got {len(gains)}")
        return sum(g >= -EPS for g in gains) >= self.min_nonneg


def mean(xs: Sequence[float]) -> float:
    if not xs:
        raise ValueError("no cohort gains")
    return sum(xs) / len(xs)


@dataclass(frozen=True)
class Scored:
    """A candidate's registration evidence: per-cohort gains and gate results."""

    index: int
    gains: tuple[float, ...]
    gates: tuple[GateResult, ...] = ()

    @property
    def mean_gain(self) -> float:
        return mean(self.gains)

    @property
    def gate_gain(self) -> float | None:
        for g in self.gates:
            if g.gain is not None:
                return g.gain
        return None

    @property
    def passes_gates(self) -> bool:
        return all(g.passed for g in self.gates)


@dataclass(frozen=True)
class Verdict:
    """Why a candidate is or is not admissible."""

    index: int
    passes_margin: bool
    passes_cohorts: bool
    passes_gates: bool

    @property
    def accuracy_admissible(self) -> bool:
        return self.passes_margin and self.passes_cohorts

    @property
    def admissible(self) -> bool:
        return self.accuracy_admissible and self.passes_gates

    @property
    def reason(self) -> str:
        if not self.passes_margin:
            return "below_margin"
        if not self.passes_cohorts:
            return "cohort_rule"
        if not self.passes_gates:
            return "gate"
        return "admissible"


def verdict(rule: RegistrationRule, s: Scored) -> Verdict:
    return Verdict(s.index, rule.passes_margin(s.gains), rule.passes_cohorts(s.gains),
                   s.passes_gates)


def select(rule: RegistrationRule, scored: Sequence[Scored]) -> tuple[int | None, list[Verdict]]:
    """The winning candidate's index (``None``: no admission) and every verdict."""
    verdicts = [verdict(rule, s) for s in scored]
    pool = [s for s, v in zip(scored, verdicts, strict=True) if v.admissible]
    if not pool:
        return None, verdicts

    def key(s: Scored) -> tuple[float, float, int]:
        gg = s.gate_gain
        # round away float noise so equal gains tie exactly
        return (round(s.mean_gain, 6), round(gg, 6) if gg is not None else float("-inf"),
                -s.index)

    return max(pool, key=key).index, verdicts
