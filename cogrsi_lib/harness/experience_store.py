"""SAGE's experience store (zing-social-mind-report §5.5, eq. 7, §5.5.2).

:class:`Entry` is eq. 7: a dimension, an answer-independent strategy, when to use it and when
not to, helped/harmed counters and the provenance of its edits. :class:`ExperienceStore`
holds at most ``budget`` entries (the Curator, :mod:`cogrsi_lib.harness.curator`, prunes)
and round-trips through JSON; a malformed file raises :class:`StoreError` naming the file and
the entry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cogrsi_lib.harness.taxonomy import DIMENSIONS

PROVENANCE_OPS: tuple[str, ...] = ("added", "revised", "merged")
DEFAULT_BUDGET = 32


class StoreError(ValueError):
    """A malformed experience-store file; the message names the file and the entry."""


@dataclass(frozen=True)
class Provenance:
    """One edit of an entry: what happened, caused by which development item, in which round
    (``text`` is the strategy that was written or merged in)."""

    op: str
    item_id: str
    round: int = 0
    text: str = ""

    def __post_init__(self) -> None:
        if self.op not in PROVENANCE_OPS:
            raise ValueError(f"unknown provenance op {self.op!r} (not one of {PROVENANCE_OPS})")


@dataclass(frozen=True)
class Entry:
    """An experience entry (eq. 7): ``helped``/``harmed`` are h+ and h-."""

    entry_id: str
    dimension: str
    strategy: str
    use: str
    boundary: str
    helped: int = 0
    harmed: int = 0
    provenance: tuple[Provenance, ...] = ()

    def __post_init__(self) -> None:
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {self.dimension!r}")
        if self.helped < 0 or self.harmed < 0:
            raise ValueError("helped and harmed are counts (>= 0)")
        object.__setattr__(self, "provenance", tuple(self.provenance))

    @property
    def net(self) -> int:
        """h+ - h-: the helpfulness history the Selector ranks by."""
        return self.helped - self.harmed

    def render(self) -> str:
        return (
            f"[{self.dimension}] {self.strategy} | Use when: {self.use} | Not when: {self.boundary}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "dimension": self.dimension,
            "strategy": self.strategy,
            "use": self.use,
            "boundary": self.boundary,
            "helped": self.helped,
            "harmed": self.harmed,
            "provenance": [asdict(p) for p in self.provenance],
        }


_ENTRY_TEXT = ("dimension", "strategy", "use", "boundary")
_ID_NUMBER = re.compile(r"^m(\d+)$")


def _entry_from(obj: Any, where: str) -> Entry:
    if not isinstance(obj, dict):
        raise StoreError(f"{where}: not a JSON object")
    unknown = set(obj) - {"id", *_ENTRY_TEXT, "helped", "harmed", "provenance"}
    if unknown:
        raise StoreError(f"{where}: unknown field(s) {sorted(unknown)}")
    for key in ("id", *_ENTRY_TEXT):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise StoreError(f"{where}: field {key!r} must be a non-empty string")
    if obj["dimension"] not in DIMENSIONS:
        raise StoreError(f"{where}: unknown dimension {obj['dimension']!r}")
    for key in ("helped", "harmed"):
        v = obj.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise StoreError(f"{where}: field {key!r} must be a count (int >= 0), not {v!r}")
    prov = obj.get("provenance", [])
    if not isinstance(prov, list):
        raise StoreError(f"{where}: 'provenance' must be a list")
    edits = []
    for j, p in enumerate(prov):
        pw = f"{where}, provenance {j}"
        if not isinstance(p, dict) or set(p) - {"op", "item_id", "round", "text"}:
            raise StoreError(f"{pw}: must be an object with op, item_id, round, text")
        if p.get("op") not in PROVENANCE_OPS:
            raise StoreError(f"{pw}: op {p.get('op')!r} is not one of {PROVENANCE_OPS}")
        if not isinstance(p.get("item_id"), str):
            raise StoreError(f"{pw}: item_id must be a string")
        rnd, text = p.get("round", 0), p.get("text", "")
        if isinstance(rnd, bool) or not isinstance(rnd, int) or not isinstance(text, str):
            raise StoreError(f"{pw}: round must be an int and text a string")
        edits.append(Provenance(p["op"], p["item_id"], rnd, text))
    return Entry(
        obj["id"],
        obj["dimension"],
        obj["strategy"],
        obj["use"],
        obj["boundary"],
        obj.get("helped", 0),
        obj.get("harmed", 0),
        tuple(edits),
    )


class ExperienceStore:
    """The experience store M (§5.5.2): entries in insertion order, at most ``budget``.

    New entries get ids ``m1``, ``m2``, ...; an id is never reused after a prune.
    """

    def __init__(
        self,
        entries: Iterable[Entry] = (),
        budget: int = DEFAULT_BUDGET,
        next_id: int | None = None,
    ) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"budget must be a positive int, not {budget!r}")
        self.budget = budget
        self._entries: dict[str, Entry] = {}
        for e in entries:
            if e.entry_id in self._entries:
                raise ValueError(f"duplicate entry id {e.entry_id!r}")
            self._entries[e.entry_id] = e
        if len(self._entries) > budget:
            raise ValueError(f"{len(self._entries)} entries exceed the budget of {budget}")
        numbers = [int(m.group(1)) for i in self._entries if (m := _ID_NUMBER.match(i))]
        self._next = max([next_id or 1, *(n + 1 for n in numbers)])

    # -- access
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        return iter(list(self._entries.values()))

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries.values())

    def get(self, entry_id: str) -> Entry:
        if entry_id not in self._entries:
            raise KeyError(f"no entry {entry_id!r} in the store")
        return self._entries[entry_id]

    def bucket(self, dimension: str | None) -> tuple[Entry, ...]:
        """B(v): the entries of one dimension (none for ``None``)."""
        if dimension is not None and dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {dimension!r}")
        return tuple(e for e in self._entries.values() if e.dimension == dimension)

    def copy(self) -> ExperienceStore:
        return ExperienceStore(self.entries, self.budget, self._next)

    # -- edits
    def add(
        self, dimension: str, strategy: str, use: str, boundary: str, provenance: Provenance
    ) -> Entry:
        """A new entry (may leave the store over budget: the Curator prunes)."""
        entry = Entry(f"m{self._next}", dimension, strategy, use, boundary, 0, 0, (provenance,))
        self._next += 1
        self._entries[entry.entry_id] = entry
        return entry

    def put(self, entry: Entry) -> None:
        """Replace an existing entry by its changed version."""
        self.get(entry.entry_id)
        self._entries[entry.entry_id] = entry

    def remove(self, entry_id: str) -> Entry:
        self.get(entry_id)
        return self._entries.pop(entry_id)

    # -- JSON
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "budget": self.budget,
            "next_id": self._next,
            "entries": [e.to_dict() for e in self._entries.values()],
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """The store as JSON text, also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> ExperienceStore:
        """Parse a store from JSON text; :class:`StoreError` names ``source`` and the entry."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise StoreError(f"{source}: not JSON ({err.msg} at line {err.lineno})") from err
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise StoreError(f"{source}: expected an object with a list 'entries'")
        budget, nxt = data.get("budget", DEFAULT_BUDGET), data.get("next_id", 1)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise StoreError(f"{source}: budget must be a positive int, not {budget!r}")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or nxt < 1:
            raise StoreError(f"{source}: next_id must be a positive int, not {nxt!r}")
        entries: list[Entry] = []
        seen: set[str] = set()
        for i, obj in enumerate(data["entries"]):
            label = obj.get("id") if isinstance(obj, dict) else None
            where = f"{source}: entry {i}" + (f" ({label!r})" if isinstance(label, str) else "")
            entry = _entry_from(obj, where)
            if entry.entry_id in seen:
                raise StoreError(f"{where}: duplicate id")
            seen.add(entry.entry_id)
            entries.append(entry)
        if len(entries) > budget:
            raise StoreError(f"{source}: {len(entries)} entries exceed the budget of {budget}")
        return cls(entries, budget, nxt)

    @classmethod
    def from_json(cls, path: str | Path) -> ExperienceStore:
        """Load a store file written by :meth:`to_json`."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as err:
            raise StoreError(f"{p}: cannot read ({err.strerror})") from err
        return cls.loads(text, str(p))
