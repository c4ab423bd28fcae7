"""Accuracy against chance: the interval, the verdict and the best constant answer."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.stats import against_chance, chance_table
from cogrsi_lib.stats.chance import verdict


def test_verdicts_follow_the_interval_and_the_constant_answer() -> None:
    assert verdict(0.1, 0.4, 0.25) == "near chance"
    assert verdict(0.3, 0.6, 0.25) == "above chance"
    assert verdict(0.0, 0.2, 0.25) == "below chance"
    assert verdict(0.3, 0.6, 0.25, 0.45, 0.5) == "above chance, not above a constant answer"


def test_a_perfect_system_is_above_chance_and_a_coin_is_near_it() -> None:
    stories = [f"s{i // 2}" for i in range(40)]
    right = against_chance([1.0] * 40, [2] * 40, stories)
    assert right["verdict"] == "above chance" and right["accuracy"] == 1.0
    coin = against_chance([i % 2 for i in range(40)], [2] * 40, stories)
    assert coin["verdict"] == "near chance" and coin["chance"] == 0.5
    with pytest.raises(ValueError):
        against_chance([1.0], [1], ["s"])


def test_chance_table_leaves_free_text_out_and_reports_the_constant_answer() -> None:
    rows = pl.DataFrame({
        "system": ["a"] * 6, "story_id": ["s1", "s1", "s2", "s2", "s3", "s3"],
        "correct": [True, True, True, True, False, None], "gold": ["A", "A", "A", "A", "B", "x"],
        "n_options": [2, 2, 2, 2, 2, None],
    })
    (row,) = chance_table(rows, ["system"]).to_dicts()
    assert row["items"] == 5 and row["accuracy"] == pytest.approx(0.8)
    assert row["best_constant"] == pytest.approx(0.8) and row["chance"] == 0.5
    assert row["top_answer"] is None and row["top_answer_share"] is None  # no answer column


def test_chance_table_names_the_answer_a_system_gives_throughout() -> None:
    rows = pl.DataFrame({
        "system": ["one"] * 4 + ["mixed"] * 4, "story_id": ["s1", "s2", "s3", "s4"] * 2,
        "correct": [True, False, True, False, True, False, False, True],
        "gold": ["A", "B", "A", "C"] * 2, "n_options": [3] * 8,
        "answer": ["A", "A", "A", "A", "A", "C", None, "C"],
    })
    rows_out = {r["system"]: r for r in chance_table(rows, ["system"]).to_dicts()}
    assert (rows_out["one"]["top_answer"], rows_out["one"]["top_answer_share"]) == ("A", 1.0)
    # an unparsed answer counts among the items the share is of
    assert (rows_out["mixed"]["top_answer"], rows_out["mixed"]["top_answer_share"]) == ("C", 0.5)
