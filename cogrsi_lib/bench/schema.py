"""One item schema for every benchmark (CogRSI §3, App. E.1).

A system receives a context (story or conversation) and a question in the benchmark's
native format and returns an answer in that format (App. E.1).  Every loader turns its
benchmark's official release into :class:`Item` records; :func:`items_to_frame` gives the
same records as a polars frame with the fixed :data:`ITEM_SCHEMA`.

``story_id`` is always the *sampling and resampling unit* of the benchmark: the story,
the conversation, or (ExploreToM) the structural group (App. E.2).  Samples are drawn by
it and paired bootstraps resample it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

__all__ = [
    "ITEM_SCHEMA",
    "BenchmarkFormatError",
    "Item",
    "items_to_frame",
    "validate_items",
]


class BenchmarkFormatError(ValueError):
    """A benchmark file that does not have its documented format.

    The message names the file, the record (line, row, key or id) and the problem, e.g.
    ``data/x.jsonl, record 12: missing field 'answer'``.
    """

    def __init__(self, file: str | Path, record: object, problem: str):
        self.file = str(file)
        self.record = record
        self.problem = problem
        where = f"{self.file}, record {record}" if record is not None else self.file
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Item:
    """One question of one benchmark.

    ``gold`` is what the benchmark's own rule compares against: the option label for
    multiple choice (``options`` then lists ``(label, text)`` pairs), the answer text for
    free text, ``yes``/``no`` for binary questions.  List questions (FANToM) carry the
    names that must be named in ``gold_set`` and those that must not in ``wrong_set``;
    FANToM free-text belief questions carry the wrong (omniscient) answer in ``wrong_set``.
    ``group_id`` is a scoring group inside the unit (FANToM's question set for All*).
    ``source`` is ``file:record`` in the official release.  ``extra["choices"]``, where a
    loader sets it, is the closed answer set of a free-text question (OpenToM's labels,
    ToMi's story locations); the uniform protocol asks it as a choice among them and judges
    the chosen text.
    """

    benchmark: str
    id: str
    story_id: str
    context: str
    question: str
    question_type: str
    gold: str
    options: tuple[tuple[str, str], ...] = ()
    gold_set: tuple[str, ...] = ()
    wrong_set: tuple[str, ...] = ()
    group_id: str | None = None
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def labels(self) -> tuple[str, ...]:
        """Option labels, in order (empty for free-text questions)."""
        return tuple(label for label, _ in self.options)

    @property
    def choices(self) -> tuple[str, ...]:
        """The closed answer set of a free-text question (empty when there is none)."""
        return tuple(self.extra.get("choices", ())) if not self.options else ()

    def option_text(self, label: str) -> str:
        """Text of the option with this label."""
        for lab, text in self.options:
            if lab == label:
                return text
        raise KeyError(f"{self.id}: no option {label!r}")


ITEM_SCHEMA: dict[str, pl.DataType] = {
    "benchmark": pl.Utf8(),
    "id": pl.Utf8(),
    "story_id": pl.Utf8(),
    "group_id": pl.Utf8(),
    "question_type": pl.Utf8(),
    "context": pl.Utf8(),
    "question": pl.Utf8(),
    "gold": pl.Utf8(),
    "option_labels": pl.List(pl.Utf8()),
    "option_texts": pl.List(pl.Utf8()),
    "gold_set": pl.List(pl.Utf8()),
    "wrong_set": pl.List(pl.Utf8()),
    "source": pl.Utf8(),
    "extra": pl.Utf8(),
}


def items_to_frame(items: Iterable[Item]) -> pl.DataFrame:
    """Items as a polars frame with :data:`ITEM_SCHEMA` (``extra`` as sorted JSON)."""
    rows = [
        {
            "benchmark": it.benchmark,
            "id": it.id,
            "story_id": it.story_id,
            "group_id": it.group_id,
            "question_type": it.question_type,
            "context": it.context,
            "question": it.question,
            "gold": it.gold,
            "option_labels": [lab for lab, _ in it.options],
            "option_texts": [text for _, text in it.options],
            "gold_set": list(it.gold_set),
            "wrong_set": list(it.wrong_set),
            "source": it.source,
            "extra": json.dumps(dict(it.extra), sort_keys=True, ensure_ascii=False, default=str),
        }
        for it in items
    ]
    return pl.DataFrame(rows, schema=ITEM_SCHEMA)


def validate_items(items: Sequence[Item], file: str | Path) -> list[Item]:
    """Check what every benchmark's items must satisfy; raise :class:`BenchmarkFormatError`.

    Ids are unique; ids, units, questions and gold answers are non-empty; options have
    unique labels and non-empty text; a multiple-choice gold answer is one of the labels.
    Returns the items unchanged so loaders can end with ``return validate_items(...)``.
    """
    seen: dict[str, str] = {}
    for it in items:
        record = it.source or it.id
        for name in ("id", "story_id", "question"):
            if not str(getattr(it, name)).strip():
                raise BenchmarkFormatError(file, record, f"empty {name}")
        if it.id in seen:
            raise BenchmarkFormatError(
                file, record, f"duplicate id {it.id!r} (first at record {seen[it.id]})"
            )
        seen[it.id] = record
        if not it.gold.strip() and not it.gold_set and not it.wrong_set:
            raise BenchmarkFormatError(file, record, "empty gold answer")
        if it.options:
            labels = it.labels
            if len(set(labels)) != len(labels):
                raise BenchmarkFormatError(file, record, f"repeated option labels {labels}")
            for label, text in it.options:
                if not text.strip():
                    raise BenchmarkFormatError(file, record, f"option {label!r} has empty text")
            if it.gold not in labels:
                raise BenchmarkFormatError(
                    file, record, f"gold answer {it.gold!r} is not one of the options {labels}"
                )
    return list(items)


def read_jsonl(path: Path, fields: Sequence[str] = ()) -> Iterator[tuple[int, str, dict]]:
    """``(line number, record label, record)`` for each non-blank line of a JSON-lines file.

    A line that is not JSON, or lacks one of ``fields``, raises :class:`BenchmarkFormatError`
    naming the file and the line.
    """
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            record = f"line {lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                raise BenchmarkFormatError(path, record, f"not JSON ({err})") from err
            missing = [k for k in fields if k not in rec]
            if missing:
                raise BenchmarkFormatError(path, record, f"missing field(s) {', '.join(missing)}")
            yield lineno, record, rec
