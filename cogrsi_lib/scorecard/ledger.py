"""The prediction ledger: predict, then query, then compare (plan §12, §4 Suite D, §25.5).

One entry per prediction: target, task class, predicted answer, confidence, actual answer
and residual.  The ledger enforces the order of §12 ("predict -> query -> compare ->
update"): a prediction is frozen when it is written, :meth:`PredictionLedger.before_query`
refuses to let a target be queried on an item without an open prediction, and an entry can
be resolved once, only after it was predicted.  Every step is stamped with a logical clock,
so the order is on record.

The residual is ``1[correct] - confidence``: positive when the predictor was right and
under-confident, negative when it was wrong or over-confident (its square is the entry's
Brier term for the predicted answer).  An entry whose target gave no answer (its reply did
not parse) is resolved but has nothing to be scored against: ``correct`` and ``residual``
are None, so it is counted apart and never as a miss of the predictor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl


class LedgerOrderError(RuntimeError):
    """A step out of order: a query before its prediction, a double prediction or resolve."""


Key = tuple[str, str, str, int]  # target, item id, phase, observations shown


@dataclass
class LedgerEntry:
    """One prediction of one target's answer to one task."""

    target: str
    relation: str
    task_class: str
    item_id: str
    phase: str
    n_observations: int
    predicted: str | None
    confidence: float | None
    since_change: int | None = None
    heuristics: dict[str, str | None] = field(default_factory=dict)
    actual: str | None = None
    resolved: bool = False
    predicted_at: int = -1
    queried_at: int | None = None
    resolved_at: int | None = None

    @property
    def key(self) -> Key:
        return (self.target, self.item_id, self.phase, self.n_observations)

    @property
    def target_answered(self) -> bool | None:
        return self.actual is not None if self.resolved else None

    @property
    def correct(self) -> bool | None:
        """Whether the prediction matched; None while open or when the target gave no answer."""
        if not self.target_answered:
            return None
        return self.predicted is not None and self.predicted == self.actual

    @property
    def residual(self) -> float | None:
        if self.correct is None or self.confidence is None:
            return None
        return float(self.correct) - self.confidence

    def residual_note(self) -> str:
        if not self.resolved:
            return "open"
        if not self.target_answered:
            return "the target gave no answer: not scored"
        if self.correct:
            return "match"
        return f"predicted {self.predicted!r}, target answered {self.actual!r}"


class PredictionLedger:
    """Entries in the order they were predicted."""

    def __init__(self) -> None:
        self._entries: dict[Key, LedgerEntry] = {}
        self._clock = 0

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[LedgerEntry]:
        return list(self._entries.values())

    def predict(
        self, *, target: str, relation: str, task_class: str, item_id: str, phase: str,
        n_observations: int, predicted: str | None, confidence: float | None,
        since_change: int | None = None, heuristics: Mapping[str, str | None] | None = None,
    ) -> LedgerEntry:
        """Write a prediction before the target is queried; one per key."""
        entry = LedgerEntry(target, relation, task_class, item_id, phase, n_observations,
                            predicted, confidence, since_change, dict(heuristics or {}))
        if entry.key in self._entries:
            raise LedgerOrderError(f"a prediction for {entry.key} is already on the ledger")
        entry.predicted_at = self._tick()
        self._entries[entry.key] = entry
        return entry

    def before_query(self, entries: Sequence[LedgerEntry]) -> None:
        """Stamp the query; refuse unless each entry is on the ledger, predicted and open."""
        for e in entries:
            if self._entries.get(e.key) is not e:
                raise LedgerOrderError(f"no prediction on the ledger for {e.key}")
            if e.resolved or e.queried_at is not None:
                raise LedgerOrderError(f"{e.key} was already queried")
        stamp = self._tick()
        for e in entries:
            e.queried_at = stamp

    def resolve(self, entry: LedgerEntry, actual: str | None) -> None:
        """Record the target's actual answer, once, after the query."""
        if self._entries.get(entry.key) is not entry:
            raise LedgerOrderError(f"no prediction on the ledger for {entry.key}")
        if entry.queried_at is None:
            raise LedgerOrderError(f"{entry.key} is resolved before its target was queried")
        if entry.resolved:
            raise LedgerOrderError(f"{entry.key} is already resolved")
        entry.actual = actual
        entry.resolved = True
        entry.resolved_at = self._tick()

    def frame(self) -> pl.DataFrame:
        """One row per entry (heuristics as ``<name>_prediction`` and ``<name>_correct``)."""
        names = sorted({h for e in self._entries.values() for h in e.heuristics})
        rows = []
        for e in self._entries.values():
            row: dict[str, object] = {
                "target": e.target, "relation": e.relation, "task_class": e.task_class,
                "item_id": e.item_id, "phase": e.phase, "n_observations": e.n_observations,
                "since_change": e.since_change, "predicted": e.predicted,
                "confidence": e.confidence, "actual": e.actual,
                "target_answered": e.target_answered, "correct": e.correct,
                "residual": e.residual, "residual_note": e.residual_note(),
                "predicted_at": e.predicted_at, "queried_at": e.queried_at,
                "resolved_at": e.resolved_at,
            }
            for h in names:
                guess = e.heuristics.get(h)
                row[f"{h}_prediction"] = guess
                row[f"{h}_correct"] = (guess is not None and guess == e.actual
                                       if e.target_answered else None)
            rows.append(row)
        schema = {"target": pl.Utf8, "relation": pl.Utf8, "task_class": pl.Utf8,
                  "item_id": pl.Utf8, "phase": pl.Utf8, "n_observations": pl.Int64,
                  "since_change": pl.Int64, "predicted": pl.Utf8, "confidence": pl.Float64,
                  "actual": pl.Utf8, "target_answered": pl.Boolean, "correct": pl.Boolean,
                  "residual": pl.Float64,
                  "residual_note": pl.Utf8, "predicted_at": pl.Int64, "queried_at": pl.Int64,
                  "resolved_at": pl.Int64}
        for h in names:
            schema |= {f"{h}_prediction": pl.Utf8, f"{h}_correct": pl.Boolean}
        return pl.DataFrame(rows, schema=schema)
