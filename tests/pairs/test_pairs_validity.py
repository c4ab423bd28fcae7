"""The pair validity metric: a pair counts only if both versions are right (CogRSI §3)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogrsi_lib.pairs import (
    ANSWERERS,
    check_oracle,
    generate_form,
    normalize_answer,
    pair_validity,
    predictions,
    sanity_table,
    to_frame,
)


@pytest.fixture(scope="module")
def records():
    """Two pairs of each narrative variant and one of each dialogue variant (gate lexicon)."""
    pairs = generate_form("gate", 3, "narrative", 16) + generate_form("gate", 3, "dialogue", 6)
    return to_frame(pairs)


def gold_map(records: pl.DataFrame) -> dict[tuple[str, str], str]:
    return {(p, s): g for p, s, g in records.select(["pair_id", "side", "gold"]).iter_rows()}


def wrong_option(records: pl.DataFrame, pair_id: str, side: str) -> str:
    row = records.filter((pl.col("pair_id") == pair_id) & (pl.col("side") == side)).row(
        0, named=True)
    return next(o for o in row["options"] if o != row["gold"])


def test_all_right_is_fully_valid(records):
    res = pair_validity(records, gold_map(records))
    (overall,) = res.overall.iter_rows(named=True)
    assert overall["pair_validity"] == 1.0 and overall["item_accuracy"] == 1.0
    assert overall["n_pairs"] == 22 and overall["n_items"] == 44
    assert overall["n_missing"] == 0 and overall["n_unparsed"] == 0


def test_a_pair_with_one_wrong_version_does_not_count(records):
    preds = gold_map(records)
    first = records["pair_id"][0]
    preds[(first, "b")] = wrong_option(records, first, "b")
    res = pair_validity(records, preds)
    (overall,) = res.overall.iter_rows(named=True)
    assert overall["valid_pairs"] == 21 and overall["n_pairs"] == 22
    assert overall["items_right"] == 43
    pair = res.pairs.filter(pl.col("pair_id") == first).row(0, named=True)
    assert pair["right_a"] and not pair["right_b"] and not pair["valid"]
    variant = records.filter(pl.col("pair_id") == first)["variant"][0]
    row = res.by_variant.filter(pl.col("variant") == variant).row(0, named=True)
    assert row["valid_pairs"] == row["n_pairs"] - 1
    assert row["item_accuracy"] == pytest.approx((row["n_items"] - 1) / row["n_items"])


def test_missing_and_unparsed_count_as_wrong_and_are_counted(records):
    preds = gold_map(records)
    ids = records["pair_id"].unique(maintain_order=True).to_list()
    del preds[(ids[0], "a")]                 # missing
    preds[(ids[1], "a")] = None              # reply the reader could not parse
    preds[(ids[2], "b")] = "on the moon"     # names no option
    preds[(ids[3], "a")] = "  The " + preds[(ids[3], "a")].upper() + ". "  # normalised: right
    res = pair_validity(records, preds)
    (overall,) = res.overall.iter_rows(named=True)
    assert overall["n_missing"] == 1 and overall["n_unparsed"] == 2
    assert overall["valid_pairs"] == 19 and overall["items_right"] == 41
    status = dict(zip(zip(res.items["pair_id"], res.items["side"], strict=True),
                      res.items["status"], strict=True))
    assert status[(ids[0], "a")] == "missing"
    assert status[(ids[1], "a")] == status[(ids[2], "b")] == "unparsed"
    assert status[(ids[3], "a")] == "right"


def test_frame_predictions_and_bad_input(records):
    frame = records.select(["pair_id", "side", pl.col("gold").alias("answer")])
    assert pair_validity(records, frame).overall["pair_validity"][0] == 1.0
    with pytest.raises(ValueError, match="more than one"):
        pair_validity(records, pl.concat([frame, frame.head(1)]))
    with pytest.raises(ValueError, match="unknown items"):
        pair_validity(records, {("nope", "a"): "jar"})
    with pytest.raises(ValueError, match="lack column"):
        pair_validity(records, frame.drop("answer"))


def test_normalize_answer():
    assert normalize_answer(" The Crate. ") == "crate"
    assert normalize_answer("crate") == "crate"
    assert normalize_answer("the  crate!?") == "crate"


def test_by_condition_pools_narrative_and_dialogue(records):
    res = pair_validity(records, gold_map(records))
    conds = res.by_condition["condition"].to_list()
    assert conds == ["watch", "leave", "asleep", "told", "lied", "look"]
    n = dict(zip(conds, res.by_condition["n_items"], strict=True))
    assert sum(n.values()) == records.height
    # narrative watch: 2 + 2 + 2 items, dialogue hear: 1 + 1 + 1
    assert n["watch"] == 9


def test_oracle_is_valid_and_blind_shortcuts_fail_every_flip_pair(records):
    sanity = sanity_table(records)
    check_oracle(sanity)
    flips = sanity.filter(pl.col("kind") == "flip")
    assert (flips["reality"] == 0).all() and (flips["initial"] == 0).all()
    same = sanity.filter(pl.col("kind") == "same").select(["variant", "reality", "initial"])
    assert dict(zip(same["variant"], same["reality"], strict=True)) == {
        "leave/asleep": 0.0, "watch/told": 1.0, "away/muted": 0.0, "hear/relayed": 1.0}
    rows = {v: r for v, r in zip(sanity["variant"], sanity["in_room"], strict=True)}
    assert rows["watch/leave"] == 1.0 and rows["watch/asleep"] == 0.0  # CogRSI §5.4


def test_check_oracle_raises_on_failure(records):
    sanity = sanity_table(records, {"oracle": ANSWERERS["initial"]})
    with pytest.raises(AssertionError, match="oracle fails"):
        check_oracle(sanity)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20),
       form=st.sampled_from(["narrative", "dialogue"]))
def test_any_seed_yields_valid_pairs(seed, n, form):
    pairs = generate_form("eval", seed, form, n)
    assert len(pairs) == n
    df = to_frame(pairs)
    res = pair_validity(df, predictions(df, ANSWERERS["oracle"]))
    assert res.overall["pair_validity"][0] == 1.0
    for p in pairs:
        assert (p.a.gold.value != p.b.gold.value) == (p.kind == "flip")
        assert len(p.a.facts.differing(p.b.facts)) == 1


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_validity_matches_a_direct_count(records, data):
    golds = gold_map(records)
    keys = list(golds)
    choice = {k: data.draw(st.sampled_from(["right", "wrong", "none", "missing"])) for k in keys}
    preds = {}
    for (pid, side), c in choice.items():
        if c == "right":
            preds[(pid, side)] = golds[(pid, side)]
        elif c == "wrong":
            preds[(pid, side)] = wrong_option(records, pid, side)
        elif c == "none":
            preds[(pid, side)] = None
    res = pair_validity(records, preds)
    pair_ids = {pid for pid, _ in keys}
    valid = sum(choice[(p, "a")] == choice[(p, "b")] == "right" for p in pair_ids)
    assert res.overall["valid_pairs"][0] == valid
    assert res.overall["n_missing"][0] == sum(c == "missing" for c in choice.values())
    assert res.overall["n_unparsed"][0] == sum(c == "none" for c in choice.values())
    assert res.overall["items_right"][0] == sum(c == "right" for c in choice.values())
