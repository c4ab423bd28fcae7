"""SAGE's Selector: selective activation of a frozen experience store (zing-social-mind-report
§5.5.3, eq. 8; the component ablation of §5.8.5).

:class:`Selector` recalls entries for an item through a fallback cascade: exact recall, then
the predicted dimension's bucket, then the generic scaffold (eq. 8); :func:`coverage` is
§5.5.3's cov. Its ``mode`` also gives the component ablation of §5.8.5 (Figure 26): the whole
store (curation without a Selector), exact recall only, dimension routing only, full cascade.
The predicted dimension comes from :mod:`cogrsi_lib.harness.dimension`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from cogrsi_lib.embedding import Embedder, cosine
from cogrsi_lib.harness.experience_store import Entry, ExperienceStore
from cogrsi_lib.harness.scaffold import scaffold_block
from cogrsi_lib.harness.taxonomy import DIMENSIONS
from cogrsi_lib.reader.items import ReaderItem

Level = Literal["exact", "dimension", "scaffold", "store", "none"]
Mode = Literal["cascade", "exact_only", "dimension_only", "store"]
LEVELS: tuple[str, ...] = ("exact", "dimension", "scaffold", "store", "none")
MODES: tuple[str, ...] = ("cascade", "exact_only", "dimension_only", "store")
#: Figure 26's configurations (besides the memory-free baseline) -> Selector mode
ABLATION_MODES: dict[str, str] = {
    "curation": "store", "selector": "exact_only", "dimension_routing": "dimension_only",
    "full": "cascade",
}  # fmt: skip

#: cosine between a question (+ options) and an entry's ``use`` at or above which the entry is
#: recalled exactly. all-MiniLM-L6-v2 gives short texts low cosines: a ``use`` written as the
#: kind of question it serves scores 0.30-0.47 against matching questions and 0.15-0.26 against
#: unrelated ones; question-like emotion items that share the objects score higher and are
#: kept out by the boundary veto (measured in tests/harness/test_experience.py)
DEFAULT_EXACT_THRESHOLD = 0.28


def guidance_block(entries: Sequence[Entry]) -> str:
    """The injected text of recalled entries (empty for none)."""
    if not entries:
        return ""
    lines = [f"{i}. {e.render()}" for i, e in enumerate(entries, 1)]
    return "Guidance from similar past cases (apply only where it fits):\n" + "\n".join(lines)


def query_text(item: ReaderItem) -> str:
    """What exact recall compares an entry's ``use`` with: the question and its options."""
    return " ".join([item.question, *(item.options or ())])


@dataclass(frozen=True)
class Activation:
    """What the Selector injected for one item (eq. 8's A-dagger), and from which level."""

    item_id: str
    level: str
    entries: tuple[Entry, ...]
    scores: tuple[float, ...]
    predicted_dimension: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "level": self.level,
            "entries": [e.entry_id for e in self.entries],
            "scores": [round(s, 6) for s in self.scores],
            "predicted_dimension": self.predicted_dimension,
            "text": self.text,
        }


class Selector:
    """The deployment-time Selector over a frozen store (§5.5.3).

    ``exact`` recall takes the entries whose ``use`` has cosine >= ``exact_threshold`` with the
    item's question and options (with ``boundary_veto``, not those the query resembles more
    through their ``boundary``), best similarity first, then best h+ - h-, at most ``k``. The
    cascade (eq. 8) falls back to the predicted dimension's bucket (best h+ - h- first, at most
    ``k``), then to the generic scaffold. Other modes: ``exact_only`` (exact, else nothing),
    ``dimension_only`` (the bucket, else nothing), ``store`` (every entry: no Selector).
    """

    def __init__(
        self,
        store: ExperienceStore,
        embedder: Embedder,
        k: int = 2,
        exact_threshold: float = DEFAULT_EXACT_THRESHOLD,
        *,
        mode: str = "cascade",
        boundary_veto: bool = True,
    ) -> None:
        if k < 1:
            raise ValueError("k must be >= 1")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (not one of {MODES})")
        self.store, self.embedder, self.k = store, embedder, k
        self.exact_threshold, self.mode, self.boundary_veto = exact_threshold, mode, boundary_veto
        self._entries = store.entries
        if self._entries:
            self._use = embedder.embed([e.use for e in self._entries])
            self._bnd = embedder.embed([e.boundary for e in self._entries])

    def _similarities(self, items: Sequence[ReaderItem]) -> tuple[np.ndarray, np.ndarray]:
        n = len(self._entries)
        if not n or not items:
            z = np.zeros((len(items), n), dtype=np.float32)
            return z, z
        q = self.embedder.embed([query_text(it) for it in items])
        return cosine(q, self._use), cosine(q, self._bnd)

    def _exact(self, use: np.ndarray, bnd: np.ndarray) -> list[tuple[Entry, float]]:
        hits = []
        for j, e in enumerate(self._entries):
            s = float(use[j])
            if s >= self.exact_threshold and not (self.boundary_veto and float(bnd[j]) > s):
                hits.append((j, e, s))
        hits.sort(key=lambda t: (-t[2], -t[1].net, t[0]))
        return [(e, s) for _, e, s in hits[: self.k]]

    def _bucket(self, use: np.ndarray, dimension: str | None) -> list[tuple[Entry, float]]:
        pool = [
            (j, e, float(use[j]))
            for j, e in enumerate(self._entries)
            if dimension is not None and e.dimension == dimension
        ]
        pool.sort(key=lambda t: (-t[1].net, -t[2], t[0]))
        return [(e, s) for _, e, s in pool[: self.k]]

    def _activate(
        self, item: ReaderItem, dim: str | None, use: np.ndarray, bnd: np.ndarray
    ) -> Activation:
        if dim is not None and dim not in DIMENSIONS:
            raise ValueError(f"unknown predicted dimension {dim!r} for item {item.item_id!r}")
        chosen: list[tuple[Entry, float]] = []
        level = "none"
        if self.mode == "store":
            chosen = [(e, float(use[j])) for j, e in enumerate(self._entries)]
            level = "store" if chosen else "none"
        else:
            if self.mode in ("cascade", "exact_only"):
                chosen = self._exact(use, bnd)
                level = "exact" if chosen else "none"
            if not chosen and self.mode in ("cascade", "dimension_only"):
                chosen = self._bucket(use, dim)
                level = "dimension" if chosen else "none"
            if not chosen and self.mode == "cascade":
                level = "scaffold"
        entries = tuple(e for e, _ in chosen)
        text = scaffold_block() if level == "scaffold" else guidance_block(entries)
        return Activation(item.item_id, level, entries, tuple(s for _, s in chosen), dim, text)

    def select_batch(
        self, items: Sequence[ReaderItem], predicted: Sequence[str | None]
    ) -> list[Activation]:
        """One activation per item (one embedding call for all the questions)."""
        if len(predicted) != len(items):
            raise ValueError("one predicted dimension (or None) per item")
        use, bnd = self._similarities(items)
        return [
            self._activate(it, d, use[i], bnd[i])
            for i, (it, d) in enumerate(zip(items, predicted, strict=True))
        ]

    def select(self, item: ReaderItem, predicted_dimension: str | None) -> Activation:
        return self.select_batch([item], [predicted_dimension])[0]


@dataclass(frozen=True)
class Coverage:
    """cov (§5.5.3: the share of items with a non-empty exact recall) and the share per level."""

    n: int
    exact: float
    shares: dict[str, float]


def coverage(activations: Sequence[Activation]) -> Coverage:
    if not activations:
        raise ValueError("coverage of no activations")
    n = len(activations)
    shares = {lv: sum(a.level == lv for a in activations) / n for lv in LEVELS}
    return Coverage(n, shares["exact"], shares)
