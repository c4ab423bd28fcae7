"""Tables 4 and 26: paired differences per benchmark, Holm over the benchmarks."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.baselines.benchmark_paired import (
    STRONGEST,
    is_baseline,
    paired_by_benchmark,
    strongest_baseline,
    verdict_counts,
)
from cogrsi_lib.stats import holm


def _records(scores: dict[tuple[str, str], list[float]], runs: int = 1,
             model: str = "m") -> pl.DataFrame:
    """One record per (system, benchmark) item and run; item i is in story i // 2."""
    rows = []
    for (system, bench), values in scores.items():
        for run in range(runs):
            for i, v in enumerate(values):
                rows.append({"model": model, "system": system, "source": bench, "run": run,
                             "item_id": f"{bench}/{i}", "story_id": f"{bench}/s{i // 2}",
                             "score": v})
    return pl.DataFrame(rows)


def test_reader_variants_are_not_baselines():
    assert is_baseline("sc9") and is_baseline("perceptom") and is_baseline("zero_shot")
    assert not any(map(is_baseline, ["cogrsi", "cogrsi_noarb", "cogrsi_l"]))


def test_strongest_baseline_is_the_best_mean_among_baselines_only():
    items = _records({("cogrsi_noarb", "b"): [1.0] * 4, ("sc6", "b"): [1, 1, 0, 0],
                      ("sc9", "b"): [1, 1, 1, 0], ("cogrsi", "b"): [0.0] * 4,
                      ("sc9", "c"): [0.0] * 4, ("zero_shot", "c"): [0, 1, 0, 0]})
    assert strongest_baseline(items, "b", "cogrsi") == "sc9"
    assert strongest_baseline(items, "c", "cogrsi") == "zero_shot"
    assert strongest_baseline(items, "missing", "cogrsi") is None


def test_difference_interval_and_holm_are_over_the_benchmarks():
    n = 40
    half = [1.0, 0.0] * (n // 2)
    items = _records({("cogrsi", "a"): [1.0] * n, ("sc9", "a"): [0.0] * n,
                      ("cogrsi", "b"): half, ("sc9", "b"): half,
                      ("cogrsi", "c"): [0.0] * n, ("sc9", "c"): sorted(half, reverse=True)},
                     runs=2)
    table = paired_by_benchmark(items, "cogrsi", "sc9", ["a", "b", "c", "absent"],
                                n_resamples=500)
    assert table["benchmark"].to_list() == ["a", "b", "c"]
    by = {r["benchmark"]: r for r in table.iter_rows(named=True)}
    assert by["a"]["difference"] == pytest.approx(100.0)
    assert by["b"]["difference"] == pytest.approx(0.0)
    assert by["c"]["difference"] == pytest.approx(-50.0)
    assert by["a"]["items"] == 2 * n and by["a"]["runs"] == 2 and by["a"]["stories"] == n // 2
    assert (by["a"]["verdict"], by["b"]["verdict"], by["c"]["verdict"]) == ("win", "tie", "loss")
    expected = holm({b: by[b]["p_value"] for b in "abc"})
    assert table["p_holm"].to_list() == pytest.approx(expected["p_holm"].to_list())


def test_holm_can_turn_an_uncorrected_win_into_a_tie():
    # one benchmark (7 wins in 7 of 30 stories) clears the uncorrected interval and its
    # power check, among 59 null ones: 60 hypotheses multiply its p-value past 0.05
    nulls = [f"n{i}" for i in range(59)]
    wins = [1.0, 0.0] * 7 + [0.0] * 46
    items = _records({("cogrsi", "x"): wins, ("sc9", "x"): [0.0] * 60,
                      **{("cogrsi", b): [1.0, 0.0] * 30 for b in nulls},
                      **{("sc9", b): [1.0, 0.0] * 30 for b in nulls}})
    table = paired_by_benchmark(items, "cogrsi", "sc9", ["x", *nulls], n_resamples=2000)
    x = table.filter(pl.col("benchmark") == "x").row(0, named=True)
    assert x["low"] > 0 and not x["underpowered"] and x["p_value"] < 0.05 < x["p_holm"]
    assert (x["verdict"], x["verdict_holm"]) == ("win", "tie")
    counts = verdict_counts(table)
    assert counts.select("correction", "benchmarks", "wins", "ties", "losses").rows() == [
        ("uncorrected", 60, 1, 59, 0), ("Holm", 60, 0, 60, 0)]


def test_strongest_reference_is_chosen_per_benchmark_and_per_model():
    items = pl.concat([
        _records({("cogrsi", "a"): [1, 0, 1, 0], ("sc6", "a"): [1, 1, 1, 0],
                  ("perceptom", "a"): [0, 0, 0, 0], ("cogrsi", "b"): [1, 1, 0, 0],
                  ("sc6", "b"): [0, 0, 0, 0], ("perceptom", "b"): [1, 0, 0, 0]}, model="m1"),
        _records({("cogrsi", "a"): [1, 1, 1, 1], ("sc6", "a"): [0, 0, 0, 0],
                  ("perceptom", "a"): [1, 1, 0, 0]}, model="m2")])
    table = paired_by_benchmark(items, "cogrsi", STRONGEST, ["a", "b"], n_resamples=200)
    refs = {(r["model"], r["benchmark"]): r["reference"] for r in table.iter_rows(named=True)}
    assert refs == {("m1", "a"): "sc6", ("m1", "b"): "perceptom", ("m2", "a"): "perceptom"}


def test_a_few_items_in_one_story_are_underpowered_and_never_a_win():
    """One story resamples to itself: the interval is a point; the verdict stays a tie."""
    items = _records({("cogrsi", "a"): [1.0, 1.0], ("sc9", "a"): [0.0, 0.0]}, runs=4)
    row = paired_by_benchmark(items, "cogrsi", "sc9", ["a"], n_resamples=200).row(0, named=True)
    assert row["stories"] == 1 and row["low"] == row["high"] == pytest.approx(100.0)
    assert row["underpowered"] and (row["verdict"], row["verdict_holm"]) == ("tie", "tie")


def test_no_records_gives_an_empty_table():
    assert paired_by_benchmark(_records({("sc9", "a"): [1.0]}), "cogrsi", "sc9",
                               ["a"]).height == 0
    assert verdict_counts(pl.DataFrame()).height == 0
