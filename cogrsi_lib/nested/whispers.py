"""How whispers decide the deep adversarial items, under semantics v1 and v2 (SEMANTICS.md).

Under v1 a whisper S -> L set only ``[L]``, ``[S, L]`` and ``[L, S]``, so a depth-3 chain
over {S, L} kept an older value after the whisper: an incoherent answer the adversarial
filter selected (it differs from reality and from its prefixes).  Under v2 a taken whisper
sets every chain over {S, L} but ``[S]``.  :func:`whisper_table` counts, per depth, the
adversarial items whose answer a whisper fixed (``via_whisper``), and those with a later
whisper between exactly the chain's agents (``later_whisper_over_chain``; of them, taken by
the listener: ``later_whisper_taken``, which v2 makes impossible).  The v1 row is the
measurement recorded in ``semantics_v1.json`` (v1 is not kept as code).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from cogrsi_lib.nested.facts import ADVERSARIAL
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.oracle.state import replay

V1_REFERENCE = Path(__file__).with_name("semantics_v1.json")
_SCHEMA = {
    "semantics": pl.Utf8, "depth": pl.Int64, "n": pl.Int64, "via_whisper": pl.Int64,
    "via_whisper_share": pl.Float64, "later_whisper_over_chain": pl.Int64,
    "later_whisper_taken": pl.Int64, "later_whisper_taken_share": pl.Float64,
}


def _counts(items: Sequence[NestedItem]) -> tuple[int, int, int]:
    via = later = taken = 0
    for it in items:
        via += it.via == "whisper"
        over = [i for i, e in enumerate(it.world.events) if i > it.source
                and e.type == "whisper" and set(it.chain) <= {e.actor, e.listener}]
        if over:
            later += 1
            state = replay(it.world, only=[(it.world.agents[0],)])
            taken += any(i in state.taken_whispers for i in over)
    return via, later, taken


def _row(semantics: str, depth: int, n: int, via: int, later: int, taken: int) -> dict:
    return {"semantics": semantics, "depth": depth, "n": n, "via_whisper": via,
            "via_whisper_share": via / n if n else None, "later_whisper_over_chain": later,
            "later_whisper_taken": taken, "later_whisper_taken_share": taken / n if n else None}


def whisper_table(items: Sequence[NestedItem], depths: Sequence[int] = (3, 4),
                  reference: Path = V1_REFERENCE) -> pl.DataFrame:
    """Per depth: the v1 measurement (``reference``), then these (v2) items' counts."""
    rows = []
    recorded = json.loads(reference.read_text(encoding="utf-8"))["depths"]
    for k in depths:
        if str(k) in recorded:
            r = recorded[str(k)]
            rows.append(_row("v1 (recorded)", k, r["n"], r["via_whisper"],
                             r["later_whisper_over_chain"], r["later_whisper_taken"]))
        adv = [it for it in items if it.depth == k and it.partition == ADVERSARIAL]
        rows.append(_row("v2", k, len(adv), *_counts(adv)))
    return pl.DataFrame(rows, schema=_SCHEMA)
