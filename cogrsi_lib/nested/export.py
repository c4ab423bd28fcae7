"""Items on disk and their summary tables (DESIGN: per-item records; plan §5.7 serialization).

``items.jsonl`` holds one item JSON per line (story, question, options, gold, access
facts, strata and the structured world); ``load_items`` reads it back, re-deriving
nothing from the text.  ``items.parquet`` is the same, flat.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from cogrsi_lib.nested.facts import PARTITIONS
from cogrsi_lib.nested.items import Generation, NestedItem
from cogrsi_lib.nested.strata import STRATA_COLUMNS
from cogrsi_lib.oracle.world import World


def write_items_jsonl(items: Sequence[NestedItem], path: str | Path) -> Path:
    """One item JSON per line, keys sorted, in item order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(it.to_json(), sort_keys=True, ensure_ascii=False) for it in items]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def item_from_json(raw: dict) -> NestedItem:
    """The item written by :meth:`NestedItem.to_json`."""
    world = World.from_dict(raw["world"])
    return NestedItem(
        id=raw["id"], world_index=raw["world_index"], world=world, chain=tuple(raw["chain"]),
        partition=raw["partition"], gold=raw["gold"], reality=raw["reality"],
        prefix_answers=tuple(raw["prefix_answers"]), false_belief=raw["false_belief"],
        differs_from_prefixes=raw["differs_from_prefixes"], source=raw["source_event"],
        via=raw["via"], story=raw["story"], question=raw["question"],
        options=tuple(raw["options"]), strata=dict(raw["strata"]),
    )


def load_items(path: str | Path) -> list[NestedItem]:
    """Read ``items.jsonl``."""
    text = Path(path).read_text(encoding="utf-8")
    return [item_from_json(json.loads(line)) for line in text.splitlines() if line.strip()]


def item_table(items: Sequence[NestedItem]) -> pl.DataFrame:
    """One flat row per item: the item JSON's fields, the strata as columns, the world as JSON."""
    rows = []
    for it in items:
        row = {
            "id": it.id, "world_index": it.world_index, "depth": it.depth,
            "partition": it.partition, "chain": list(it.chain), "story": it.story,
            "question": it.question, "options": list(it.options), "gold": it.gold,
            "reality": it.reality, "prefix_answers": list(it.prefix_answers),
            "false_belief": it.false_belief, "differs_from_prefixes": it.differs_from_prefixes,
            "source_event": it.source, "testimony": it.world.testimony,
            "opening": it.world.opening,
        }
        row |= {name: it.strata.get(name) for name in STRATA_COLUMNS}
        row["world_json"] = it.world.to_json()
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def strata_table(items: Sequence[NestedItem]) -> pl.DataFrame:
    """Items per depth, partition and ``via``, with the share of each boolean stratum."""
    df = item_table(items)
    flags = [c for c in STRATA_COLUMNS if df.schema[c] == pl.Boolean]
    rank = {p: i for i, p in enumerate(PARTITIONS)}
    return (
        df.group_by("depth", "partition", "via", maintain_order=True)
        .agg(pl.len().alias("n"), *[pl.col(c).cast(pl.Float64).mean().alias(c) for c in flags])
        .with_columns(pl.col("partition").replace_strict(rank, return_dtype=pl.Int64).alias("_r"))
        .sort("depth", "_r", "via").drop("_r")
    )


def generation_table(gen: Generation) -> pl.DataFrame:
    """Per cell: items, and the number of worlds sampled when the cell was full."""
    counts = gen.cell_counts()
    rows = [{"depth": k, "partition": p, "items": counts[(k, p)],
             "worlds_to_fill": gen.filled_after.get((k, p))} for k, p in gen.config.cells()]
    return pl.DataFrame(rows, schema={"depth": pl.Int64, "partition": pl.Utf8,
                                      "items": pl.Int64, "worlds_to_fill": pl.Int64})
