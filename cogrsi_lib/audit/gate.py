"""Audit-gated registration: admit a candidate rule only if the audit does not find it invalid.

The paper ends by calling audit-in-registration the natural next step (CogRSI §6).  An
:class:`AuditGate` has the shape of a registration gate: it takes the candidate's text (the
entry an add or revise writes, or a whole single principle) and returns a
:class:`GateDecision` with ``passed`` and a record for the registration log.  By default it
rejects ``invalid`` only, so an undecided rule (ambiguous, vacuous, or without usable code)
passes, as the issue asks.  Verdicts are cached by text, so re-proposals cost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cogrsi_lib.audit.audit import Auditor, RuleAudit
from cogrsi_lib.audit.translate import text_id
from cogrsi_lib.audit.verdict import VERDICTS


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer for one candidate, and what the registration log keeps."""

    passed: bool
    record: dict[str, Any] = field(default_factory=dict)


class AuditGate:
    """Candidate text -> pass/fail + record, backed by an :class:`Auditor`."""

    name = "audit"

    def __init__(self, auditor: Auditor, reject: Iterable[str] = ("invalid",)) -> None:
        self.auditor = auditor
        self.reject = frozenset(reject)
        unknown = self.reject - set(VERDICTS)
        if unknown:
            raise ValueError(f"unknown verdicts {sorted(unknown)}")
        self.log: list[dict[str, Any]] = []

    def audit(self, candidate: str) -> RuleAudit:
        return self.auditor.audit(candidate, text_id(candidate))

    def check(self, candidate: str) -> GateDecision:
        a = self.audit(candidate)
        v = a.verdict
        passed = v.verdict not in self.reject
        record = {
            "gate": self.name, "rule_sha": text_id(candidate), "passed": passed,
            "verdict": v.verdict, "reason": v.reason,
            "n_shared_counterexamples": v.n_shared_counterexamples,
            "applies_rate": v.applies_rate, "agreement": v.agreement,
            "translation_a": a.translations[0].status, "translation_b": a.translations[1].status,
            "example_question_id": int(a.counterexamples[0]) if len(a.counterexamples) else None,
        }  # fmt: skip
        self.log.append(record)
        return GateDecision(passed, record)

    def check_many(self, candidates: Iterable[str]) -> list[GateDecision]:
        """Decisions for several candidates; their translations are batched."""
        texts = list(candidates)
        self.auditor.audit_many([(text_id(t), t) for t in texts])
        return [self.check(t) for t in texts]

    __call__ = check
