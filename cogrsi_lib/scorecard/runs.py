"""One system through Suites A-D on frozen items (plan §4, §6, §18 "Baseline run").

:class:`Suites` holds the frozen items of one evaluation (Suite A items and their Suite B
pairs, the strategic items, the Suite D config and the other targets); :func:`run_suites`
answers all of them with one system and returns a :class:`SystemRun`, from which the
profile (:mod:`.profile`) and the gates (:mod:`.gates`) are computed.  Suite B reuses the
Suite A records as its belief answers, so the two suites read one set of replies.  In
Suite D the system is the predictor and, under the frozen bare prompt on its own backend,
its own ``self`` target.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.nested.baselines import baseline_table
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.reader.records import ITEM_COLUMNS, ItemRecord, records_to_frame
from cogrsi_lib.reader.system import System
from cogrsi_lib.records_schema import RecordSchema
from cogrsi_lib.scorecard.answers import NestedRun, cost_per_100, run_nested
from cogrsi_lib.scorecard.applied import AppliedItem, AppliedRun, run_applied
from cogrsi_lib.scorecard.direct import DEFAULT_MAX_TOKENS, DirectSystem
from cogrsi_lib.scorecard.ledger import PredictionLedger
from cogrsi_lib.scorecard.selfpred import (
    SELF,
    SelfPredConfig,
    SelfPredScore,
    Target,
    run_selfpred,
    score_selfpred,
)
from cogrsi_lib.scorecard.strategic import StrategicItem, StrategicRun, run_strategic

#: the scorecard's records (``records.parquet``): the core (``source`` is the suite: ``nested``,
#: ``applied`` or ``strategic``) and the reader's columns
RECORDS = RecordSchema("scorecard", ITEM_COLUMNS)
SELF_DESCRIPTION = ("a fresh copy of you, asked the task directly with a frozen prompt and no "
                    "memory of this conversation")


@dataclass(frozen=True)
class Suites:
    """The frozen items of one evaluation."""

    nested: tuple[NestedItem, ...]
    applied: tuple[AppliedItem, ...] = ()
    strategic: tuple[StrategicItem, ...] = ()
    selfpred: SelfPredConfig | None = None
    cross_targets: tuple[Target, ...] = ()
    changed: Mapping[str, Target] = field(default_factory=dict)
    n_resamples: int = 2000
    baselines: pl.DataFrame | None = field(default=None, compare=False)

    def heuristic_baselines(self) -> pl.DataFrame:
        """Suite A's shortcut-heuristic table (computed once per item set)."""
        return self.baselines if self.baselines is not None else baseline_table(self.nested)


@dataclass(frozen=True)
class SystemRun:
    """Everything one system answered on one set of frozen items."""

    system: str
    backend: str
    nested: NestedRun
    applied: AppliedRun | None = None
    strategic: StrategicRun | None = None
    selfpred: SelfPredScore | None = None

    def task_records(self) -> list[ItemRecord]:
        """The records of Suites A-C (the tasks that cost per 100 tasks is counted over)."""
        return [r for _, recs in self.suite_records() for r in recs]

    def suite_records(self) -> list[tuple[str, Sequence[ItemRecord]]]:
        """:meth:`task_records` by suite: ``nested`` (A), ``applied`` (B), ``strategic`` (C)."""
        out: list[tuple[str, Sequence[ItemRecord]]] = [("nested", self.nested.records)]
        if self.applied is not None:
            out.append(("applied", self.applied.behaviour_records))
        if self.strategic is not None:
            out.append(("strategic", self.strategic.records))
        return out

    def records(self) -> pl.DataFrame:
        """:meth:`task_records` as the stage's records (:data:`RECORDS`), source the suite."""
        return pl.concat([records_to_frame(recs, RECORDS, run=0, source=suite)
                          for suite, recs in self.suite_records()])

    def cost(self) -> dict[str, float]:
        return cost_per_100(self.task_records())


def self_target(backend: Backend, max_tokens: int = DEFAULT_MAX_TOKENS,
                structured: bool = True) -> Target:
    """The system's own model under the frozen bare prompt (plan §19 Experiment 5)."""
    return Target("self", SELF, DirectSystem(backend, name="self", max_tokens=max_tokens,
                                             structured=structured), SELF_DESCRIPTION)


def run_suites(system: System, backend: Backend, suites: Suites,
               baselines: pl.DataFrame | None = None,
               self_max_tokens: int = DEFAULT_MAX_TOKENS, structured: bool = True
               ) -> SystemRun:
    """Answer every suite of ``suites`` with ``system`` (``backend`` is its model); the
    ``self`` target of Suite D answers under the bare prompt capped at ``self_max_tokens``."""
    table = baselines if baselines is not None else suites.heuristic_baselines()
    nested = run_nested(system, suites.nested, table)
    applied = (run_applied(system, suites.applied, nested.records)
               if suites.applied else None)
    strategic = (run_strategic(system, suites.strategic, n_resamples=suites.n_resamples)
                 if suites.strategic else None)
    selfpred = None
    if suites.selfpred is not None:
        targets: Sequence[Target] = (self_target(backend, self_max_tokens, structured),
                                     *suites.cross_targets)
        ledger = run_selfpred(system, targets, suites.selfpred, suites.changed,
                              PredictionLedger())
        selfpred = score_selfpred(ledger)
    return SystemRun(system.name, backend.identity, nested, applied, strategic, selfpred)


def stage_records(runs: Mapping[str, SystemRun]) -> pl.DataFrame:
    """Every run's Suite A-C records (:meth:`SystemRun.records`), run after run."""
    parts = [run.records() for run in runs.values()]
    return pl.concat(parts) if parts else RECORDS.empty()


def stack(runs: Mapping[str, SystemRun], table: Callable[[SystemRun], pl.DataFrame]
          ) -> pl.DataFrame:
    """One table per run (e.g. ``lambda r: r.applied.score.cells``), stacked with a
    ``system`` column naming the run."""
    return pl.concat([table(run).with_columns(pl.lit(name).alias("system"))
                      for name, run in runs.items()])
