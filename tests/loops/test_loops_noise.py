"""Registration noise (App. C.2): null candidates admitted at a 1-point and a 3-point margin."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from cogrsi_lib.loops.noise import (
    PAPER_SD,
    calibration_table,
    measured_cohort_sd,
    simulate_admission,
    simulate_gains,
)

N = 100_000


def test_paper_calibration_is_reproduced():
    """SD 2.7, four null candidates, three cohorts: ~70% at 1 point, ~10% at 3 points."""
    one = simulate_admission(1.0, 0, PAPER_SD, n_rounds=N, seed=0)
    three = simulate_admission(3.0, 2, PAPER_SD, n_rounds=N, seed=0)
    assert one.share == pytest.approx(0.70, abs=0.015)
    assert three.share == pytest.approx(0.10, abs=0.01)
    # the analytic value: P(max of 4 means >= d), each mean ~ N(0, sd^2 / 3)
    z = 1.0 / (PAPER_SD / math.sqrt(3))
    single = 0.5 * math.erfc(z / math.sqrt(2))
    assert one.share == pytest.approx(1 - (1 - single) ** 4, abs=0.01)


def test_the_cohort_rule_only_lowers_admissions():
    t = calibration_table(PAPER_SD, n_rounds=N, seed=1)
    share = {(r["delta"], r["min_nonneg"]): r["share"] for r in t.iter_rows(named=True)}
    assert share[(1.0, 2)] <= share[(1.0, 0)]
    assert share[(3.0, 2)] <= share[(3.0, 0)]
    assert share[(3.0, 2)] < share[(1.0, 2)] / 4


def test_real_gains_are_admitted_and_more_noise_admits_more_nulls():
    assert simulate_admission(3.0, 2, PAPER_SD, n_rounds=20_000, true_gain=6.0).share > 0.99
    lo = simulate_admission(3.0, 2, 1.5, n_rounds=20_000).share
    hi = simulate_admission(3.0, 2, 4.0, n_rounds=20_000).share
    assert lo < 0.01 < hi


def test_shared_incumbent_keeps_the_gain_sd_and_correlates_candidates():
    g = simulate_gains(PAPER_SD, n_rounds=50_000, shared_incumbent=True)
    assert g.std() == pytest.approx(PAPER_SD, rel=0.02)
    c = pl.DataFrame({"a": g[:, 0, 0], "b": g[:, 1, 0]})
    assert c.select(pl.corr("a", "b")).item() == pytest.approx(0.5, abs=0.03)


def test_cohort_size_rounds_gains_to_whole_questions():
    g = simulate_gains(PAPER_SD, n_rounds=1000, cohort_size=80)
    steps = g / 1.25
    assert (abs(steps - steps.round()) < 1e-9).all()


def test_measured_sd_pools_within_principle_variation():
    rows = []
    for rnd, accs in enumerate([[60.0, 62.5, 57.5], [70.0, 70.0, 70.0]]):
        for k, a in enumerate(accs):
            rows.append({"arm": "x", "seed": 0, "round": rnd, "cohort": f"trial{k + 1}",
                         "role": "incumbent", "candidate": None, "accuracy": a})
    rows.append({"arm": "x", "seed": 0, "round": 0, "cohort": "discovery", "role": "incumbent",
                 "candidate": None, "accuracy": 0.0})
    df = pl.DataFrame(rows, schema_overrides={"candidate": pl.Int64})
    # variances 6.25 and 0 with 2 degrees of freedom each: pooled sd = sqrt(12.5 / 4)
    assert measured_cohort_sd(df) == pytest.approx(math.sqrt(12.5 / 4))
    assert measured_cohort_sd(df.filter(pl.col("cohort") == "discovery")) is None


def test_gain_sd_from_an_accuracy_sd():
    from cogrsi_lib.loops.noise import gain_sd

    assert gain_sd(2.7) == pytest.approx(2.7 * math.sqrt(2))
    assert gain_sd(2.7, correlation=0.5) == pytest.approx(2.7)
    assert gain_sd(2.7, correlation=1.0) == 0.0
    with pytest.raises(ValueError):
        gain_sd(2.7, correlation=1.5)


def test_engine_model_matches_a_direct_simulation_of_the_engine():
    """The engine's round: the incumbent scored once per cohort of 80 questions, four null
    candidates scored on the same cohorts, gain = candidate accuracy - incumbent accuracy."""
    from cogrsi_lib.loops.noise import noise_models

    table = noise_models(PAPER_SD, n_rounds=N, seed=3)
    share = {(r["model"], r["delta"], r["min_nonneg"]): r["share"]
             for r in table.iter_rows(named=True)}
    rng = np.random.default_rng(11)
    def acc(size):  # accuracy in points, whole questions of 80
        return np.round(rng.normal(0.0, PAPER_SD, size=size) / 1.25) * 1.25
    gains = acc((N, 4, 3)) - acc((N, 1, 3))
    for delta, m in ((1.0, 0), (3.0, 2)):
        admitted = ((gains.mean(axis=2) >= delta - 1e-9)
                    & ((gains >= -1e-9).sum(axis=2) >= m)).any(axis=1).mean()
        se = math.sqrt(admitted * (1 - admitted) / N)
        assert share[("engine", delta, m)] == pytest.approx(admitted, abs=4 * se + 1e-3)
    # the paper's model is the independent one that reproduces App. C.2
    assert share[("paper", 1.0, 0)] == pytest.approx(0.70, abs=0.015)
    assert share[("paper", 3.0, 2)] == pytest.approx(0.10, abs=0.01)
    rows = table.filter(pl.col("model") == "engine")
    assert rows["shared_incumbent"].all() and rows["gain_sd"][0] == pytest.approx(
        PAPER_SD * math.sqrt(2))
