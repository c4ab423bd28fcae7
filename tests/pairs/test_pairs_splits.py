"""Split sizes, seeds and determinism of the pair generator (CogRSI §3, App. C)."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.pairs import (
    SCHEMA,
    VARIANTS,
    allocate,
    build_splits,
    counts_table,
    generate_form,
    read_split,
    write_splits,
)


@pytest.fixture(scope="module")
def full():
    return build_splits(gate_seed=11, eval_seed=23)


def test_allocate():
    assert allocate(48, 8) == [6] * 8
    assert allocate(48, 6) == [8] * 6
    assert allocate(160, 8) == [20] * 8
    assert allocate(160, 6) == [27, 27, 27, 27, 26, 26]
    assert allocate(0, 6) == [0] * 6
    assert sum(allocate(97, 8)) == 97
    with pytest.raises(ValueError):
        allocate(-1, 3)


def test_split_sizes(full):
    gate, ev = full["gate"], full["eval"]
    for df, n in ((gate, 48), (ev, 160)):
        a = df.filter(pl.col("side") == "a")
        for form in ("narrative", "dialogue"):
            assert a.filter(pl.col("form") == form).height == n
        assert df.height == 4 * n  # two versions per pair, two forms
    counts = counts_table(full)

    def per_variant(split: str, form: str) -> list[int]:
        rows = counts.filter((pl.col("split") == split) & (pl.col("form") == form)
                             & (pl.col("variant") != "all"))
        assert rows["variant"].to_list() == [v.name for v in VARIANTS[form]]
        return rows["pairs"].to_list()

    assert per_variant("gate", "narrative") == [6] * 8
    assert per_variant("gate", "dialogue") == [8] * 6
    assert per_variant("eval", "narrative") == [20] * 8
    assert per_variant("eval", "dialogue") == [27, 27, 27, 27, 26, 26]
    totals = counts.filter(pl.col("form") == "all")
    assert totals.select(["split", "pairs"]).rows() == [("gate", 96), ("eval", 320)]


def test_records_shape(full):
    for split, df in full.items():
        assert df.schema == pl.Schema(SCHEMA)
        assert (df["split"] == split).all()
        sides = df.group_by("pair_id").agg(pl.col("side").sort())
        assert all(s == ["a", "b"] for s in sides["side"].to_list())
        assert df.select(["pair_id", "side"]).is_duplicated().sum() == 0
        assert df["story"].n_unique() == df.height  # every version is its own story
        for row in df.iter_rows(named=True):
            assert row["gold"] in row["options"] and len(row["options"]) == 3
            assert row["kind"] in ("flip", "same")
        pair_kinds = (df.group_by(["pair_id", "kind"])
                      .agg(pl.col("gold").n_unique().alias("golds")))
        assert ((pair_kinds["golds"] == 2) == (pair_kinds["kind"] == "flip")).all()


def test_deterministic_and_byte_identical(full, tmp_path):
    again = build_splits(gate_seed=11, eval_seed=23)
    for split in ("gate", "eval"):
        assert again[split].equals(full[split])
    first = write_splits(full, tmp_path / "one")
    second = write_splits(again, tmp_path / "two")
    for split in ("gate", "eval"):
        assert first[split].read_bytes() == second[split].read_bytes()
        assert read_split(first[split]).equals(full[split])


def test_seeds_matter_and_must_differ():
    a = generate_form("gate", 11, "narrative", 16)
    b = generate_form("gate", 12, "narrative", 16)
    assert [p.a.story for p in a] != [p.a.story for p in b]
    with pytest.raises(ValueError, match="different seeds"):
        build_splits(gate_seed=5, eval_seed=5)


def test_small_split_is_part_of_a_larger_one():
    small = {(p.variant.name, p.cast) for p in generate_form("eval", 23, "dialogue", 12)}
    large = {(p.variant.name, p.cast) for p in generate_form("eval", 23, "dialogue", 160)}
    assert small <= large


def test_read_split_refuses_other_tables(tmp_path):
    path = tmp_path / "x.parquet"
    pl.DataFrame({"a": [1]}).write_parquet(path)
    with pytest.raises(ValueError, match="pair records"):
        read_split(path)
