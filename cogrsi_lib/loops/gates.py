"""Gates an update must pass at registration, besides the accuracy rule (CogRSI §4.2, §5.3).

A gate is any object with a ``name`` and ``check(candidate, incumbent) -> GateResult``:
pass or fail, an optional gain (points; ties between admissible candidates go to the larger
gain of the first gate that reports one) and a JSON-able record for the log. Two exist:

- :class:`CounterfactualGate`: the update must not lose pair validity on the gate split (96
  pairs) beyond a tolerance, in pairs; its gain is the change in pair validity, in points.
- :class:`AuditRegistrationGate`: the semantic audit of the text the update writes (the
  audit-in-registration arm, §6); it wraps ``cogrsi_lib.audit``'s gate and fails loudly with
  :class:`GateUnavailable` when that is not installed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import polars as pl

from cogrsi_lib.loops.devdata import pair_items
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.pairs.validity import pair_validity


class GateUnavailable(RuntimeError):
    """A configured gate whose implementation is not importable."""


@dataclass(frozen=True)
class CandidateView:
    """What a gate sees of a candidate: the principle it would install and the text it writes
    (an added or revised entry, or a whole principle; empty for a retire)."""

    principle: str
    written: str
    operation: str


@dataclass(frozen=True)
class GateResult:
    gate: str
    passed: bool
    gain: float | None = None
    record: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Gate(Protocol):
    name: str

    def check(self, candidate: CandidateView, incumbent: str) -> GateResult: ...


class CounterfactualGate:
    """Pair validity on the gate split may not drop by more than ``tolerance`` pairs."""

    name = "counterfactual"

    def __init__(self, scorer: Scorer, records: pl.DataFrame, tolerance: int = 2) -> None:
        if records.height == 0:
            raise ValueError("the counterfactual gate needs pair records")
        self.scorer = scorer
        self.records = records
        self.items = pair_items(records)
        self.tolerance = int(tolerance)
        self.n_pairs = records["pair_id"].n_unique()
        self._valid: dict[str, int] = {}

    def valid_pairs(self, principle: str) -> int:
        """How many gate pairs the reader gets right on both sides under ``principle``."""
        if principle not in self._valid:
            recs = self.scorer.answer(principle, self.items)
            preds = {(it.meta["pair_id"], it.meta["side"]): r.answer_text
                     for it, r in zip(self.items, recs, strict=True)}
            pv = pair_validity(self.records, preds)
            self._valid[principle] = int(pv.pairs["valid"].sum())
        return self._valid[principle]

    def check(self, candidate: CandidateView, incumbent: str) -> GateResult:
        inc, cand = self.valid_pairs(incumbent), self.valid_pairs(candidate.principle)
        gain = 100.0 * (cand - inc) / self.n_pairs
        return GateResult(self.name, cand >= inc - self.tolerance, gain,
                          {"incumbent_valid": inc, "candidate_valid": cand,
                           "n_pairs": self.n_pairs, "tolerance": self.tolerance})


def audit_gate_from_params(params: Any, base_dir: str | None = None) -> Any:
    """``cogrsi_lib.audit``'s :class:`AuditGate` from its settings (``loops.audit``:
    :class:`~cogrsi_lib.audit.settings.AuditGateSettings`, or a mapping of them): the
    audit's sample, translators, verdict and sandbox settings, and the verdicts it
    rejects."""
    try:
        from cogrsi_lib.audit import AuditGate, Auditor, build_translators
        from cogrsi_lib.audit.settings import AuditGateSettings
    except (ImportError, AttributeError) as err:
        raise GateUnavailable(
            "the audit gate needs cogrsi_lib.audit (the semantic audit, CogRSI §4.3), which is "
            f"not available here ({err}); drop 'audit' from the arm's gates") from err
    from pydantic import ValidationError

    from cogrsi_lib.settings import describe_errors

    try:
        p = (params if isinstance(params, AuditGateSettings)
             else AuditGateSettings.model_validate(dict(params)))
    except ValidationError as err:
        raise ValueError(f"audit gate: {describe_errors(err, dict(params), 'loops.audit')}"
                         ) from None
    translators = build_translators(p.translators, p.max_tokens, base_dir=base_dir)
    return AuditGate(Auditor(p.sample(), translators, p.config()), reject=p.reject)


class AuditRegistrationGate:
    """The semantic audit at registration: the written text must not be found invalid.

    ``audit`` is ``cogrsi_lib.audit.AuditGate`` or anything with ``check(text) -> decision``
    where the decision has ``passed`` and a ``record`` mapping (logged as the gate's record);
    built from ``params`` with :func:`audit_gate_from_params` when not given. A retire writes
    nothing and passes. Loops side by side share one gate: it audits one text at a time.
    """

    name = "audit"

    def __init__(self, audit: Any | None = None, params: Mapping[str, Any] | None = None,
                 base_dir: str | None = None) -> None:
        if audit is None:
            if params is None:
                raise ValueError("give an audit gate or the settings to build one")
            audit = audit_gate_from_params(params, base_dir)
        self.audit = audit
        self._lock = threading.Lock()

    def check(self, candidate: CandidateView, incumbent: str) -> GateResult:
        if not candidate.written:
            return GateResult(self.name, True, None, {"skipped": "nothing written"})
        with self._lock:
            res = self.audit.check(candidate.written)
        record = getattr(res, "record", None)
        return GateResult(self.name, bool(res.passed), None,
                          _jsonable(dict(record) if isinstance(record, Mapping) else {}))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set | frozenset):
        return [_jsonable(v) for v in obj]
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    return str(obj)
