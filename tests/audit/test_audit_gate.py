"""Audit-gated registration: the gate's shape, decisions, records and cache."""

from __future__ import annotations

import pytest

from cogrsi_lib.audit import AuditGate, GateDecision
from cogrsi_lib.audit.handwritten import DISTRACTED, IN_ROOM, NEVER, NOTHING_REACHED


def test_gate_rejects_invalid_and_admits_the_rest(auditor):
    gate = AuditGate(auditor)
    bad = gate(IN_ROOM.text)
    assert isinstance(bad, GateDecision) and not bad.passed
    assert bad.record["verdict"] == "invalid" and bad.record["n_shared_counterexamples"] > 0
    assert isinstance(bad.record["example_question_id"], int)
    for rule in (NOTHING_REACHED, NEVER, DISTRACTED):
        d = gate.check(rule.text)
        assert d.passed and d.record["verdict"] == rule.expected
        assert d.record["example_question_id"] is None
    assert [r["passed"] for r in gate.log] == [False, True, True, True]


def test_gate_caches_verdicts_and_batches_translations(auditor):
    gate = AuditGate(auditor)
    backend_a = auditor.translators[0].backend
    decisions = gate.check_many([IN_ROOM.text, NOTHING_REACHED.text])
    assert [d.passed for d in decisions] == [False, True]
    assert backend_a.batches == [2]  # one batch for both candidates
    calls = backend_a.calls
    assert not gate.check(IN_ROOM.text).passed
    assert backend_a.calls == calls  # re-proposal: no new translation


def test_gate_can_reject_more_verdicts(auditor):
    strict = AuditGate(auditor, reject=("invalid", "ambiguous", "vacuous"))
    assert not strict.check(NEVER.text).passed
    assert strict.check(NOTHING_REACHED.text).passed
    with pytest.raises(ValueError):
        AuditGate(auditor, reject=("wrong",))
