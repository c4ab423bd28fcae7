"""The underpowered mark: n, the minimum detectable effect from a 95% interval."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.stats import (
    benjamini_hochberg,
    minimum_detectable_effect,
    underpowered,
    why_underpowered,
    with_power,
)


def test_the_minimum_detectable_effect_is_2_8_standard_errors() -> None:
    # a 95% interval of half-width 1.96 is one standard error each side
    assert minimum_detectable_effect(-1.96, 1.96) == pytest.approx(1.96 + 0.8416, abs=1e-3)


@pytest.mark.parametrize("diff,low,high,n,why", [
    (-0.125, -0.2195, -0.04444, 40, "|difference| 0.125 < detectable 0.125"),
    (-0.2, -0.2195, -0.04444, 40, ""),
    (1.0, 1.0, 1.0, 2, "n = 2 < 30"),
    (0.3, 0.2, 0.4, 100, ""),
    (0.0, 0.0, 0.0, 50, ""),
    (0.2, None, None, 50, "no interval"),
])
def test_why_a_row_is_underpowered(diff, low, high, n, why) -> None:
    got = why_underpowered(diff, low, high, n)
    assert got == why
    assert underpowered(diff, low, high, n) == bool(got)


def test_the_reader_eval_row_of_the_cpu_run_is_underpowered() -> None:
    # reader_eval/paired.md on 40 near-chance items: CogRSI - SC-6 = -0.125 [-0.22, -0.04]
    t = with_power(pl.DataFrame({"diff": [-0.125, 0.3], "low": [-0.2195, 0.25],
                                 "high": [-0.0444, 0.35], "n": [40, 400]}))
    assert t["underpowered"].to_list() == [True, False]
    assert t["power_note"][0].startswith("|difference| 0.125 < detectable")
    assert t["mde"][1] == pytest.approx(0.0714, abs=1e-3)


def test_benjamini_hochberg_matches_the_step_up_rule() -> None:
    adjusted, reject = benjamini_hochberg([0.01, 0.04, 0.03, 0.20])
    assert adjusted == pytest.approx([0.04, 0.0533, 0.0533, 0.20], abs=1e-3)
    assert reject == [True, False, False, False]
    assert benjamini_hochberg([]) == ([], [])
