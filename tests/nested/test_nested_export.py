"""Strata tags, item files on disk and the stage notebook (plan §4, §5.7 serialization)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import polars as pl

from cogrsi_lib.nested import (
    generation_table,
    item_table,
    load_items,
    strata_table,
    write_items_jsonl,
)
from cogrsi_lib.nested.strata import STRATA_COLUMNS

from .helpers import CLASSIC, item, small_generation, world

ROOT = Path(__file__).resolve().parents[2]


def test_strata_of_a_private_lie_and_a_stale_belief() -> None:
    w = world("Anne move box", "Anne whisper Sally tray", "Carla leave", "Sally leave",
              "Bob move drawer", "Sally enter", "Sally peek")
    lie = item(w, "Anne", "Sally").strata
    assert lie["via"] == "whisper" and lie["source_whisper_lie"] and lie["source_whisper_false"]
    assert lie["chain_in_whisper"] and lie["has_whisper"] and lie["has_peek"]
    assert lie["stale"] and lie["missed_last_move"] and lie["divergent"]
    assert item(w, "Bob", "Carla").strata["chain_in_whisper"] is False
    carla = item(w, "Sally", "Carla").strata
    assert carla["via"] == "move" and carla["source_whisper_lie"] is None
    assert carla["stale"] and carla["missed_last_move"] and carla["divergent"]
    peek = item(w, "Sally").strata
    assert peek["via"] == "peek" and not peek["stale"]
    deep = item(world(*CLASSIC), "Anne", "Sally", "Anne").strata
    assert deep["repeated_agent"] and deep["n_distinct_agents"] == 2
    truthful = item(world("Anne whisper Sally basket", "Bob leave"), "Anne", "Sally").strata
    assert truthful["source_whisper_lie"] is False and truthful["source_whisper_false"] is False


def test_a_true_whisper_by_a_speaker_with_no_belief_is_not_tagged_a_lie() -> None:
    """``opening: unknown``: Carla, out at the start, enters with no belief and tells Sally
    "basket", which is true: no lie (SEMANTICS.md, "Lie conditions"); "box" would be one."""
    for said, lie in (("basket", False), ("box", True)):
        w = replace(world("Carla enter", f"Carla whisper Sally {said}",
                          present=["Anne", "Sally", "Bob"]), opening="unknown")
        tags = item(w, "Sally").strata
        assert tags["via"] == "whisper"
        assert tags["source_whisper_lie"] is lie and tags["source_whisper_false"] is lie


def test_jsonl_round_trip_and_item_json(tmp_path: Path) -> None:
    items = small_generation(4).items
    path = write_items_jsonl(items, tmp_path / "items.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(items)
    first = json.loads(lines[0])
    for key in ("id", "story", "question", "options", "gold", "depth", "partition", "world"):
        assert key in first
    back = load_items(path)
    assert [b.to_json() for b in back] == [it.to_json() for it in items]
    assert back == list(items)
    again = write_items_jsonl(back, tmp_path / "again.jsonl")
    assert again.read_bytes() == path.read_bytes()


def test_tables(tmp_path: Path) -> None:
    gen = small_generation(4)
    df = item_table(gen.items)
    assert df.height == len(gen.items) and set(STRATA_COLUMNS) <= set(df.columns)
    df.write_parquet(tmp_path / "items.parquet")
    assert pl.read_parquet(tmp_path / "items.parquet").equals(df)
    strata = strata_table(gen.items)
    assert strata["n"].sum() == len(gen.items)
    cells = generation_table(gen)
    assert cells["items"].to_list() == [3] * 9
    assert cells["worlds_to_fill"].max() == gen.worlds_sampled


