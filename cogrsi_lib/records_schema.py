"""The one shape of the model stages' per-item records: ``reports/<stage>/records.parquet``.

Every model stage (reader_eval, harness, pddl_mind, scorecard, loops, audit, train) writes one
row per item it put to a model (and per system that answered it) in the :data:`CORE` columns,
declared here once, followed by its own columns, declared beside the stage's code as a
:class:`RecordSchema` extension. Types are fixed by the declaration, never inferred: a column
whose values are all null in a run keeps its type.

The core columns:

==================  ========================================================================
``stage``           the stage that wrote the record
``run``             the repeat within the stage: the loops' seed; 0 where a stage runs once
``system``          what answered: the reader or a baseline (reader_eval), the harness
                    configuration (harness), the ladder variant (pddl_mind), the intervention
                    variant (scorecard), the principle's label, an arm or ``none``/``expert``
                    (loops), ``base``/``trained`` (train), the translator (audit)
``model``           the model behind it, as its backend names it
``source``          where the item comes from: ``pairs``, ``oracle`` or a benchmark; the suite
                    (scorecard: ``nested``, ``applied``, ``strategic``); the evaluation set
                    (train); the arm that wrote the rule (audit)
``item_id``         the item's id
``story_id``        the unit items cluster in, which bootstraps resample (a story, a pair)
``prompt``          JSON ``{call: [{"role": ..., "content": ...}, ...]}``: the chat messages
                    of each model call the stage keeps for the item, by call (the reader's
                    answering views, PDDL-Mind's ``problem``/``actions``/``answer``, ...)
``reply``           JSON ``{call: [text, ...]}``: the replies to those calls, samples in order
``parse_status``    ``ok`` when an answer was read from the reply; else the stage's word for
                    why not (``unparsed``, ``failed``, ``abstained``, ...)
``answer``          the answer read (an option label, or normalised free text)
``gold``            the gold answer in the same form (null where there is none)
``correct``         the answer is the gold (null without a gold)
``n_options``       the number of options (null: a free-text question)
``calls``           model calls made for the item (a sample is a call; cache hits count)
``cached_calls``    those of them replayed from the completion cache
``prompt_tokens``   prompt tokens over those calls
``completion_tokens``  completion tokens over those calls
==================  ========================================================================

The audit's item is not a question but a rule's translation: one record per rule and
translator, ``system`` the translator, ``item_id`` and ``story_id`` the rule id, ``source``
the arm the rule came from, ``prompt``/``reply`` the translation call, ``parse_status`` the
translation's status (``ok``, ``no_code``, ``capped``, ``failed``), ``answer`` the translated
code; a translation has no gold (``gold`` and ``correct`` are null): whether the rule is valid
is the verdict, which compares the two translators (``verdicts.parquet``).

:func:`stage_schema` finds a stage's declaration without importing every stage.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from polars.datatypes import DataType, DataTypeClass

__all__ = [
    "CORE",
    "FILE",
    "STAGES",
    "RecordSchema",
    "calls_json",
    "messages_of",
    "stage_schema",
]

Dtype = DataType | DataTypeClass

#: the core columns, in order, and their types
CORE: dict[str, Dtype] = {
    "stage": pl.Utf8,
    "run": pl.Int64,
    "system": pl.Utf8,
    "model": pl.Utf8,
    "source": pl.Utf8,
    "item_id": pl.Utf8,
    "story_id": pl.Utf8,
    "prompt": pl.Utf8,
    "reply": pl.Utf8,
    "parse_status": pl.Utf8,
    "answer": pl.Utf8,
    "gold": pl.Utf8,
    "correct": pl.Boolean,
    "n_options": pl.Int64,
    "calls": pl.Int64,
    "cached_calls": pl.Int64,
    "prompt_tokens": pl.Int64,
    "completion_tokens": pl.Int64,
}

#: the records file every model stage writes in its output folder
FILE = "records.parquet"

#: where each model stage declares its records: ``module:attribute`` (imported on demand)
_DECLARED = {
    "reader_eval": "cogrsi_lib.reader.evaluate:RECORDS",
    "harness": "cogrsi_lib.harness.stage:RECORDS",
    "pddl_mind": "cogrsi_lib.pddl.ladder:RECORDS",
    "scorecard": "cogrsi_lib.scorecard.runs:RECORDS",
    "loops": "cogrsi_lib.loops.records:RECORDS",
    "audit": "cogrsi_lib.audit.report:RECORDS",
    "train": "cogrsi_lib.train.compare:RECORDS",
}
STAGES = tuple(_DECLARED)


@dataclass(frozen=True)
class RecordSchema:
    """One stage's records: the core columns, then the stage's own (``extension``, in order).

    ``stage`` is the value of the ``stage`` column (None: records not yet tied to a stage,
    e.g. a list of reader records tabulated in memory)."""

    stage: str | None
    extension: Mapping[str, Dtype] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = sorted(set(self.extension) & set(CORE))
        if clash:
            raise ValueError(f"extension columns {clash} are core columns")

    @property
    def schema(self) -> dict[str, Dtype]:
        """Every column and its type: the core's, then the extension's."""
        return {**CORE, **self.extension}

    def frame(self, rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
        """Rows (mappings of column to value; a missing column is null) as a frame in this
        schema, ``stage`` filled in; a column the schema does not declare is an error."""
        schema = self.schema
        rows = list(rows)
        unknown = sorted({k for r in rows for k in r} - set(schema))
        if unknown:
            raise ValueError(f"{self.stage or 'records'}: undeclared columns {unknown}")
        data = [{**{c: r.get(c) for c in schema}, "stage": self.stage} for r in rows]
        return pl.DataFrame(data, schema=schema, orient="row")

    def empty(self) -> pl.DataFrame:
        return pl.DataFrame(schema=self.schema)

    def conform(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` in this schema: declared order and types, absent columns null, ``stage``
        set; a column the schema does not declare is an error."""
        schema = self.schema
        unknown = sorted(set(frame.columns) - set(schema))
        if unknown:
            raise ValueError(f"{self.stage or 'records'}: undeclared columns {unknown}")
        cols = [(pl.col(c) if c in frame.columns else pl.lit(None)).cast(t).alias(c)
                for c, t in schema.items()]
        return frame.select(cols).with_columns(pl.lit(self.stage, dtype=pl.Utf8).alias("stage"))

    def check(self, frame: pl.DataFrame) -> None:
        """Raise ``ValueError`` unless ``frame`` has exactly this schema's columns and types."""
        got, want = dict(frame.schema), self.schema
        if list(got) != list(want) or any(got[c] != want[c] for c in want):
            diff = {c: (got.get(c), want.get(c)) for c in {*got, *want}
                    if got.get(c) != want.get(c)}
            order = "" if diff else " (column order)"
            raise ValueError(f"{self.stage}: records differ from the declaration{order}: {diff}")

    def write(self, frame: pl.DataFrame, out_dir: str | Path) -> Path:
        """Check ``frame`` and write it as ``<out_dir>/records.parquet``."""
        self.check(frame)
        path = Path(out_dir) / FILE
        frame.write_parquet(path)
        return path


def stage_schema(stage: str) -> RecordSchema:
    """The records declaration of a model stage (:data:`STAGES`)."""
    if stage not in _DECLARED:
        raise KeyError(f"no records declared for stage {stage!r}; one of {list(STAGES)}")
    module, attr = _DECLARED[stage].split(":")
    schema = getattr(importlib.import_module(module), attr)
    if not isinstance(schema, RecordSchema) or schema.stage != stage:
        raise TypeError(f"{_DECLARED[stage]} is not the records declaration of {stage}")
    return schema


def calls_json(calls: Mapping[str, Sequence[Any]]) -> str:
    """The ``prompt`` or ``reply`` column's JSON: ``{call: [...]}`` (non-ASCII kept)."""
    return json.dumps({k: list(v) for k, v in calls.items()}, ensure_ascii=False)


def messages_of(messages: Iterable[Any]) -> list[dict[str, str]]:
    """Chat messages (:class:`~cogrsi_lib.llm.types.Message` or ``(role, content)`` pairs)
    as ``{"role", "content"}`` dicts."""
    out = []
    for m in messages:
        role, content = (m.role, m.content) if hasattr(m, "role") else m
        out.append({"role": role, "content": content})
    return out
