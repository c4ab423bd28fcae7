"""SAGE's Curator (zing-social-mind-report §5.5.1-5.5.2): an accepted reflection updates the
shown entries' helped/harmed counts, then revises an entry, merges into a close one or adds a
new one, and the store is pruned back to its budget.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cogrsi_lib.embedding import Embedder, cosine
from cogrsi_lib.harness.experience_store import ExperienceStore, Provenance
from cogrsi_lib.harness.reflector import Reflection

#: cosine between two strategies of one dimension at or above which the Curator merges them
DEFAULT_MERGE_THRESHOLD = 0.85


@dataclass(frozen=True)
class Curation:
    """What the Curator did with one reflection."""

    action: str  # "added" | "merged" | "revised" | "labels"
    entry_id: str | None
    similarity: float | None
    applied: dict[str, str]
    stale: tuple[str, ...]
    pruned: tuple[str, ...]


def _embed_one(embedder: Embedder, text: str) -> np.ndarray:
    return embedder.embed([text])


def prune(store: ExperienceStore, embedder: Embedder) -> list[str]:
    """Remove entries while over budget: the worst h- - h+ first, then the most redundant (the
    highest cosine of its strategy with another entry's), then the newest."""
    removed: list[str] = []
    while len(store) > store.budget:
        entries = store.entries
        vecs = embedder.embed([e.strategy for e in entries])
        sims = cosine(vecs, vecs)
        np.fill_diagonal(sims, -np.inf)
        redundancy = sims.max(axis=1) if len(entries) > 1 else np.zeros(len(entries))
        worst = max(
            range(len(entries)),
            key=lambda j: (entries[j].harmed - entries[j].helped, float(redundancy[j]), j),
        )
        removed.append(store.remove(entries[worst].entry_id).entry_id)
    return removed


def curate(
    store: ExperienceStore,
    reflection: Reflection,
    item_id: str,
    embedder: Embedder,
    *,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    round_: int = 0,
) -> Curation:
    """Apply one reflection in place: labels -> h+/h-, then revise, merge or add, then prune."""
    applied, stale = {}, []
    for eid, lab in reflection.labels.items():
        if eid not in store:
            stale.append(eid)  # pruned since it was shown
            continue
        e = store.get(eid)
        if lab == "helpful":
            store.put(replace(e, helped=e.helped + 1))
        elif lab == "harmful":
            store.put(replace(e, harmed=e.harmed + 1))
        applied[eid] = lab
    action, eid, sim = "labels", None, None
    if reflection.strategy and reflection.dimension:

        def prov(op: str) -> Provenance:
            return Provenance(op, item_id, round_, reflection.strategy)

        if reflection.revise is not None and reflection.revise in store:
            old = store.get(reflection.revise)
            store.put(
                replace(
                    old,
                    dimension=reflection.dimension,
                    strategy=reflection.strategy,
                    use=reflection.use,
                    boundary=reflection.boundary,
                    provenance=(*old.provenance, prov("revised")),
                )
            )
            action, eid = "revised", old.entry_id
        else:
            bucket = store.bucket(reflection.dimension)
            if bucket:
                sims = cosine(
                    _embed_one(embedder, reflection.strategy),
                    embedder.embed([e.strategy for e in bucket]),
                )[0]
                j = int(np.argmax(sims))
                sim = float(sims[j])
            if bucket and sim is not None and sim >= merge_threshold:
                host = bucket[j]
                store.put(replace(host, provenance=(*host.provenance, prov("merged"))))
                action, eid = "merged", host.entry_id
            else:
                new = store.add(
                    reflection.dimension,
                    reflection.strategy,
                    reflection.use,
                    reflection.boundary,
                    prov("added"),
                )
                action, eid = "added", new.entry_id
    pruned = tuple(prune(store, embedder))
    return Curation(action, eid, sim, applied, tuple(stale), pruned)
