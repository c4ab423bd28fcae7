"""Fix phase 2: a lightweight explicit epistemic state store (plan §11).

Entries follow the §11.1 schema: who holds the attitude (``subject``), about whom
(``about``: the nested subjects, so ``["Anne", "Bob"]`` is "Anne believes Bob believes"),
the proposition, the attitude, a confidence, the source it rests on and its depth.

Rules the store enforces:

* absence is not belief (§11.2): :meth:`EpistemicStore.lookup` returns :data:`UNKNOWN`
  when no valid entry holds the asked chain and topic; it never falls back to a shallower
  chain, to another agent's entry or to reality, and an entry without a source is refused;
* provenance (§11.3): every entry names its source line and may name entries it depends
  on; a later entry for the same chain and topic supersedes the earlier one, and every entry
  that depended on a superseded or invalidated entry is invalidated in turn;
* bounded depth (§11.4): entries deeper than ``max_persistent_depth`` are transient (kept
  for the current task only, dropped by :meth:`EpistemicStore.end_task`); nothing deeper
  than ``max_depth`` is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

DEFAULT_PERSISTENT_DEPTH = 2
DEFAULT_MAX_DEPTH = 4


class StoreError(ValueError):
    """An entry the store refuses (no source, bad depth, bad confidence, unknown dependency)."""


class Unknown:
    """The store's answer when it holds no evidence (§11.2); falsy, one instance."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        return False


UNKNOWN = Unknown()


def attitude(depth: int) -> str:
    """``believes``, ``believes_that_believes``, ... for a chain of ``depth`` agents."""
    return "_that_".join(["believes"] * depth)


@dataclass(frozen=True)
class Entry:
    """One attitude: ``chain[0]`` believes (that ``chain[1]`` believes ...) ``topic = value``."""

    chain: tuple[str, ...]
    topic: str
    value: str
    confidence: float
    source: int | None
    depends_on: tuple[int, ...] = ()

    @property
    def subject(self) -> str:
        return self.chain[0]

    @property
    def about(self) -> tuple[str, ...]:
        return self.chain[1:]

    @property
    def depth(self) -> int:
        return len(self.chain)

    @property
    def attitude(self) -> str:
        return attitude(self.depth)

    @property
    def proposition(self) -> str:
        return f"{self.topic} = {self.value}"


@dataclass
class _Slot:
    entry: Entry
    status: str = "current"  # current | superseded | invalidated
    superseded_by: int | None = None
    transient: bool = False


class EpistemicStore:
    """Entries by id, with the current entry per (chain, topic)."""

    def __init__(
        self, n_sources: int | None = None, max_persistent_depth: int = DEFAULT_PERSISTENT_DEPTH,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        if not 1 <= max_persistent_depth <= max_depth:
            raise ValueError("need 1 <= max_persistent_depth <= max_depth")
        self.n_sources = n_sources
        self.max_persistent_depth = max_persistent_depth
        self.max_depth = max_depth
        self._slots: dict[int, _Slot] = {}
        self._current: dict[tuple[tuple[str, ...], str], int] = {}
        self._next = 0

    def __len__(self) -> int:
        return len(self._slots)

    def check(self, entry: Entry) -> None:
        """Raise :class:`StoreError` if ``entry`` may not be stored."""
        if not entry.chain or not all(isinstance(a, str) and a for a in entry.chain):
            raise StoreError("an entry needs a non-empty subject chain of names")
        if any(a == b for a, b in zip(entry.chain, entry.chain[1:], strict=False)):
            raise StoreError("a chain may not name one agent twice in a row")
        if entry.depth > self.max_depth:
            raise StoreError(f"depth {entry.depth} exceeds the store's maximum {self.max_depth}")
        if isinstance(entry.confidence, bool) or not 0 <= entry.confidence <= 1:
            raise StoreError(f"confidence {entry.confidence!r} is outside [0, 1]")
        if entry.source is None:
            raise StoreError("no source: absence of evidence is UNKNOWN, not a belief")
        if isinstance(entry.source, bool) or not isinstance(entry.source, int):
            raise StoreError("the source must be a line number")
        if entry.source < 1 or (self.n_sources is not None and entry.source > self.n_sources):
            raise StoreError(f"source line {entry.source} does not exist")
        missing = [d for d in entry.depends_on if d not in self._slots]
        if missing:
            raise StoreError(f"unknown dependencies {missing}")

    def add(self, entry: Entry) -> int:
        """Store ``entry`` and return its id; it supersedes an older entry on the same chain
        and topic (later source wins; on equal sources, the later entry)."""
        self.check(entry)
        eid = self._next
        self._next += 1
        slot = _Slot(entry, transient=entry.depth > self.max_persistent_depth)
        self._slots[eid] = slot
        if any(self._slots[d].status != "current" for d in entry.depends_on):
            slot.status = "invalidated"
            return eid
        key = (entry.chain, entry.topic)
        old = self._current.get(key)
        if old is not None and (self._slots[old].entry.source or 0) > (entry.source or 0):
            slot.status, slot.superseded_by = "superseded", old
            return eid
        if old is not None:
            self._retire(old, "superseded", eid)
        self._current[key] = eid
        return eid

    def _retire(self, eid: int, status: str, by: int | None) -> None:
        slot = self._slots[eid]
        if slot.status != "current":
            return
        slot.status, slot.superseded_by = status, by
        key = (slot.entry.chain, slot.entry.topic)
        if self._current.get(key) == eid:
            del self._current[key]
        for other, s in self._slots.items():
            if eid in s.entry.depends_on:
                self._retire(other, "invalidated", None)

    def lookup(self, chain: Sequence[str], topic: str) -> Entry | Unknown:
        """The current entry for ``chain`` and ``topic``, or :data:`UNKNOWN`."""
        eid = self._current.get((tuple(chain), topic))
        return UNKNOWN if eid is None else self._slots[eid].entry

    def status(self, eid: int) -> str:
        return self._slots[eid].status

    def end_task(self) -> int:
        """Drop the transient (deeper than persistent) entries; returns how many."""
        drop = [eid for eid, s in self._slots.items() if s.transient]
        for eid in drop:
            self._retire(eid, "invalidated", None)
            del self._slots[eid]
        return len(drop)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per entry in the §11.1 schema, with its id and status."""
        out = []
        for eid, s in self._slots.items():
            e = s.entry
            out.append({
                "id": eid, "subject": e.subject, "about": list(e.about),
                "proposition": e.proposition, "attitude": e.attitude,
                "confidence": e.confidence, "source": e.source, "depth": e.depth,
                "depends_on": list(e.depends_on), "status": s.status,
                "superseded_by": s.superseded_by, "transient": s.transient,
            })
        return out

    def table(self) -> pl.DataFrame:
        schema = {"id": pl.Int64, "subject": pl.Utf8, "about": pl.List(pl.Utf8),
                  "proposition": pl.Utf8, "attitude": pl.Utf8, "confidence": pl.Float64,
                  "source": pl.Int64, "depth": pl.Int64, "depends_on": pl.List(pl.Int64),
                  "status": pl.Utf8, "superseded_by": pl.Int64, "transient": pl.Boolean}
        return pl.DataFrame(self.rows(), schema=schema)
