"""Per-item records of a stage, for reading: ``cogrsi records show PATH``.

Stages keep one row per item (and system) as parquet: the reader's and the harness's
``items.parquet``, PDDL-Mind's ``records.parquet``, the loops' cohort logs, the audit's
translations. Nested data is held in JSON-string columns (``*_json``, ``usage``, ...); here
they are decoded and laid out one record at a time, the story, question, samples, parse
status, answer, gold, calls and tokens first.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

__all__ = ["RecordsError", "filter_records", "load_records", "render_record", "to_json_lines"]

#: columns shown first, in this order, when a record has them
LEADING = (
    "item_id", "example_id", "rule_id", "system", "translator", "variant", "source", "benchmark",
    "story", "context", "question", "options_json", "samples_json", "reply", "status",
    "answer_status", "parse_status", "answer", "answer_text", "gold", "correct", "score",
    "calls", "cached_calls", "prompt_tokens", "completion_tokens",
)
_FILTER = re.compile(r"^(?P<col>[^=!~]+?)(?P<op>!=|=|~)(?P<value>.*)$")


class RecordsError(ValueError):
    """A records file cannot be read or a filter does not fit it."""


def load_records(path: str | Path) -> pl.DataFrame:
    """A parquet, CSV or JSON-lines records file as a frame."""
    path = Path(path)
    if not path.is_file():
        raise RecordsError(f"no records file at {path}")
    readers = {".parquet": pl.read_parquet, ".csv": pl.read_csv, ".jsonl": pl.read_ndjson}
    if path.suffix not in readers:
        raise RecordsError(f"{path}: not a records file (expected {', '.join(readers)})")
    try:
        return readers[path.suffix](path)
    except Exception as err:  # polars raises several kinds for a damaged file
        raise RecordsError(f"{path}: cannot be read as {path.suffix[1:]}: {err}") from err


def filter_records(frame: pl.DataFrame, filters: Iterable[str]) -> pl.DataFrame:
    """Rows that pass every filter: ``COL=VALUE``, ``COL!=VALUE`` (equality on the value as
    text; ``true``/``false`` for booleans, ``null`` for missing) or ``COL~TEXT`` (contains)."""
    for spec in filters:
        m = _FILTER.match(spec)
        if m is None:
            raise RecordsError(f"filter {spec!r}: expected COL=VALUE, COL!=VALUE or COL~TEXT")
        col, op, value = m["col"].strip(), m["op"], m["value"]
        if col not in frame.columns:
            raise RecordsError(f"filter {spec!r}: no column {col!r} "
                               f"(columns: {', '.join(frame.columns)})")
        text = frame[col].cast(pl.String)
        if frame[col].dtype == pl.Boolean:
            text = text.str.to_lowercase()
        if op == "~":
            keep = text.str.contains(value, literal=True).fill_null(False)
        else:
            same = text.is_null() if value == "null" else (text == value).fill_null(False)
            keep = same if op == "=" else ~same
        frame = frame.filter(keep)
    return frame


def _decoded(name: str, value: Any) -> Any:
    if isinstance(value, str) and value[:1] in "[{" and (
            name.endswith("_json") or value.rstrip()[-1:] in "]}"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _block(value: Any) -> str:
    """A list one element per line (compact), a mapping indented, anything else as text."""
    if isinstance(value, list):
        return "\n".join(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v
                         for v in value)
    if isinstance(value, dict):
        return json.dumps(value, indent=2, ensure_ascii=False)
    return str(value)


def render_record(row: dict[str, Any], columns: Sequence[str] | None = None) -> str:
    """One record as text: leading fields first, JSON decoded and indented, empty ones left
    out unless asked for by name."""
    names = list(columns) if columns else (
        [c for c in LEADING if c in row] + sorted(c for c in row if c not in LEADING))
    lines = []
    for name in names:
        if name not in row:
            raise RecordsError(f"no column {name!r} (columns: {', '.join(row)})")
        value = _decoded(name, row[name])
        if not columns and value in (None, "", [], {}):
            continue
        text = _block(value)
        if "\n" in text or len(text) > 80:
            lines.append(f"{name}:")
            lines.append(textwrap.indent(text, "    "))
        else:
            lines.append(f"{name}: {text}")
    return "\n".join(lines)


def to_json_lines(frame: pl.DataFrame) -> Iterable[str]:
    """Each record as one JSON line, JSON-string columns decoded."""
    for row in frame.iter_rows(named=True):
        yield json.dumps({k: _decoded(k, v) for k, v in row.items()}, ensure_ascii=False,
                         default=str)
