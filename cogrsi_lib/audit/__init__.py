"""Semantic audit of learned rules (CogRSI §4.3, §5.4, App. C "Semantic audit (J105)").

Two translators turn a rule's text into ``applies(world, q)`` and ``predict(world, q)``
(the API they see is ``API.md`` beside this file); each translation runs in a sandbox
process over a fixed sample of oracle worlds; shared counterexamples decide the verdict:
invalid, valid, vacuous or ambiguous.  Names are loaded on first use, so the sandbox child
(which imports :mod:`cogrsi_lib.audit.child`) never loads polars, numpy or the oracle.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "RECORDS": "report",
    # the API translated code sees, and the sample it runs on
    "API_VERSION": "api",
    "AuditSample": "snapshot",
    "build_sample": "snapshot",
    "sample_audit_worlds": "snapshot",
    # translation
    "PROMPTS": "translate",
    "Translation": "translate",
    "Translator": "translate",
    "build_translators": "translate",
    "extract_code": "translate",
    "text_id": "translate",
    # sandbox
    "PolicyViolation": "policy",
    "check_source": "policy",
    "RunResult": "sandbox",
    "SandboxLimits": "sandbox",
    "run_code": "sandbox",
    "run_many": "sandbox",
    # verdicts and the audit
    "VERDICTS": "verdict",
    "Verdict": "verdict",
    "VerdictConfig": "verdict",
    "decide": "verdict",
    "AuditConfig": "audit",
    "Auditor": "audit",
    "RuleAudit": "audit",
    "audit_rule": "audit",
    "AuditGate": "gate",
    "GateDecision": "gate",
    # rules, replay, reports, stage
    "HandwrittenRule": "handwritten",
    "RULES": "handwritten",
    "scripted_translator": "handwritten",
    "handwritten_part": "rules",
    "handwritten_rules": "rules",
    "load_rules": "rules",
    "read_rules": "rules",
    "Answerer": "replay",
    "question_item": "replay",
    "reader_answerer": "replay",
    "replay_counterexamples": "replay",
    "replay_summary": "replay",
    "check_expected": "report",
    "counterexample_examples": "report",
    "counterexample_summary": "report",
    "expected_check": "report",
    "translation_records": "report",
    "translation_table": "report",
    "translator_table": "report",
    "trial_gain_bins": "report",
    "trial_gain_chart": "report",
    "trial_gain_table": "report",
    "verdict_table": "report",
    "table1_with_invalid_share": "report",
    "verdicts_by_arm": "report",
    "why_no_counterexamples": "report",
    "why_no_trial_gain": "report",
    "gold_difference_table": "policies",
    "policy_samples": "policies",
    "policy_verdict_table": "policies",
    "audit_config": "stage",
    "MODEL_LABEL": "stage",
    "REFERENCE_LABEL": "stage",
    "reference_audit": "stage",
    "replay_answerer": "stage",
    "summary": "stage",
    "timings": "stage",
    "uses_models": "stage",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return __all__
