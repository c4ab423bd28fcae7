"""Per-item records of a stage, for reading: ``cogrsi records show PATH``.

Every model stage keeps one row per item (and system) in ``reports/<stage>/records.parquet``,
in the shared core columns (:mod:`cogrsi_lib.records_schema`) followed by its own. Nested
data is held in JSON-string columns (``*_json``, ``prompt``, ``reply``); here they are decoded
and laid out one record at a time: the core columns first, in their declared order (ids,
system and model, the prompt's messages and the replies verbatim, parse status, answer, gold,
calls and tokens), then the stage's own in the file's order. Any other parquet, CSV or
JSON-lines table is shown the same way.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib.records_schema import CORE

__all__ = ["RecordsError", "filter_records", "load_records", "render_record", "to_json_lines"]

_FILTER = re.compile(r"^(?P<col>[^=!~<>]+?)(?P<op>!=|<=|>=|=|<|>|~)(?P<value>.*)$")
_ORDER = {"<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
#: the columns whose JSON is ``{call: [...]}``: messages (prompt) or texts (reply)
_CALLS = ("prompt", "reply")


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
    """Rows that pass every filter: ``COL=VALUE`` and ``COL!=VALUE`` (equality: as numbers on
    a numeric column, ``true``/``false`` in any case on a boolean one, else as text; ``null``
    for missing), ``COL<VALUE``, ``COL<=VALUE``, ``COL>VALUE``, ``COL>=VALUE`` (numeric
    columns) or ``COL~TEXT`` (contains)."""
    for spec in filters:
        m = _FILTER.match(spec)
        if m is None:
            raise RecordsError(f"filter {spec!r}: expected COL=VALUE, COL!=VALUE, COL<VALUE, "
                               f"COL<=VALUE, COL>VALUE, COL>=VALUE or COL~TEXT")
        col, op, value = m["col"].strip(), m["op"], m["value"]
        if col not in frame.columns:
            raise RecordsError(f"filter {spec!r}: no column {col!r} "
                               f"(columns: {', '.join(frame.columns)})")
        frame = frame.filter(_keep(spec, frame[col], op, value))
    return frame


def _number(spec: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise RecordsError(f"filter {spec!r}: {value!r} is not a number") from None


def _keep(spec: str, column: pl.Series, op: str, value: str) -> pl.Series:
    """The rows of ``column`` that ``op value`` keeps (nulls are kept only by ``=null``)."""
    dtype = column.dtype
    if op in _ORDER:
        if not dtype.is_numeric():
            raise RecordsError(f"filter {spec!r}: {column.name!r} is not numeric ({dtype}); "
                               f"compare it with = != or ~")
        return getattr(column, _ORDER[op])(_number(spec, value)).fill_null(False)
    if op == "~":
        return column.cast(pl.String).str.contains(value, literal=True).fill_null(False)
    if value.strip().lower() == "null":
        same = column.is_null()
    elif dtype == pl.Boolean:
        word = value.strip().lower()
        if word not in ("true", "false"):
            raise RecordsError(f"filter {spec!r}: {column.name!r} is boolean: "
                               f"true, false or null")
        same = (column == (word == "true")).fill_null(False)
    elif dtype.is_numeric():
        number = _number(spec, value)
        same = (column == number).fill_null(False) if not math.isnan(number) else (
            column.is_nan().fill_null(False))
    else:
        same = (column.cast(pl.String) == value).fill_null(False)
    return same if op == "=" else ~same


def _decoded(name: str, value: Any) -> Any:
    """A JSON column's value decoded (``*_json``, ``prompt``, ``reply``); any other value as
    it is, so a model's reply that happens to be JSON is shown as the model wrote it."""
    if isinstance(value, str) and (name.endswith("_json") or name in _CALLS):
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


def _calls_block(value: dict[str, Any]) -> str | None:
    """A ``prompt`` or ``reply`` value (``{call: [messages or texts]}``) with its texts
    verbatim, each under its call (and role, or sample number); None if it is not one."""
    lines = []
    for call, entries in value.items():
        if not isinstance(entries, list):
            return None
        for i, entry in enumerate(entries):
            if isinstance(entry, str):
                head, text = (f"[{call}]" if len(entries) == 1 else f"[{call} {i}]"), entry
            elif isinstance(entry, dict) and {"role", "content"} <= set(entry):
                head, text = f"[{call}] {entry['role']}", str(entry["content"])
            else:
                return None
            lines.append(head)
            lines.append(textwrap.indent(text, "  ") if text else "  (empty)")
    return "\n".join(lines)


#: columns holding a question's options, shown one per line with their letters
_OPTIONS = ("options_json", "options")


def _letter(i: int) -> str:
    """A, B, ..., Z, AA, AB, ...: the label an option is asked by."""
    return _letter(i // 26 - 1) + chr(65 + i % 26) if i >= 26 else chr(65 + i)


def _ordered(row: dict[str, Any]) -> list[str]:
    """The core columns a row has, in their declared order, then the rest in its order."""
    return [c for c in CORE if c in row] + [c for c in row if c not in CORE]


def render_record(row: dict[str, Any], columns: Sequence[str] | None = None) -> str:
    """One record as text: the core columns first, JSON decoded and indented (the prompt's
    messages and the replies verbatim), empty ones left out unless asked for by name."""
    names = list(columns) if columns else _ordered(row)
    lines = []
    for name in names:
        if name not in row:
            raise RecordsError(f"no column {name!r} (columns: {', '.join(row)})")
        value = _decoded(name, row[name])
        if not columns and value in (None, "", [], {}):
            continue
        text = (_calls_block(value) if name in _CALLS and isinstance(value, dict) else None)
        if text is None and name in _OPTIONS and isinstance(value, list):
            text = "\n".join(f"{_letter(i)}. {v}" for i, v in enumerate(value))
        if text is None:
            text = _block(value)
        if "\n" in text or len(text) > 80 or name in _CALLS and isinstance(value, dict):
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
