"""Bootstraps and Holm against answers known by hand or from scipy/statsmodels."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from cogrsi_lib import stats
from cogrsi_lib.stats.bootstrap import resample_counts


def test_resample_counts_draw_n_clusters_per_resample():
    counts = resample_counts(np.random.default_rng(0), 7, 1000)
    assert counts.shape == (1000, 7)
    assert np.all(counts.sum(axis=1) == 7)
    assert counts.mean() == pytest.approx(1.0, abs=0.05)


def test_two_clusters_by_hand():
    # clusters {0} and {1}: resampled means are 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4
    res = stats.cluster_bootstrap([0.0, 1.0], ["s1", "s2"], n_resamples=40000, seed=0)
    assert res.estimate == 0.5
    freq = {v: np.mean(np.isclose(res.distribution, v)) for v in (0.0, 0.5, 1.0)}
    assert freq[0.0] == pytest.approx(0.25, abs=0.01)
    assert freq[0.5] == pytest.approx(0.5, abs=0.01)
    assert freq[1.0] == pytest.approx(0.25, abs=0.01)
    assert (res.low, res.high) == (0.0, 1.0)


def test_cluster_sizes_weight_the_mean():
    # cluster A: 3 questions all right, cluster B: 1 question wrong -> 3/4, not 1/2
    res = stats.cluster_bootstrap([1, 1, 1, 0], ["A", "A", "A", "B"], n_resamples=200)
    assert res.estimate == 0.75
    # a resample is AA (1), AB (3/4) or BB (0)
    assert set(np.round(np.unique(res.distribution), 6)) <= {0.0, 0.75, 1.0}


def test_constant_difference_has_a_degenerate_interval():
    a = np.array([1.0, 0.0, 1.0, 1.0])
    res = stats.paired_bootstrap(a, a - 0.25, [0, 1, 2, 3], n_resamples=500)
    assert res.estimate == pytest.approx(0.25)
    assert res.low == pytest.approx(0.25) and res.high == pytest.approx(0.25)
    assert res.p_value == pytest.approx(2 / 501)  # every resample >= 0: (1 + 0) / (B + 1), x2


def test_agrees_with_scipy_bootstrap_on_an_unpaired_mean():
    x = np.random.default_rng(7).normal(0.3, 1.0, 400)
    ours = stats.cluster_bootstrap(x, np.arange(len(x)), n_resamples=20000, seed=1)
    ref = scipy_stats.bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                                random_state=np.random.default_rng(2))
    assert ours.estimate == pytest.approx(x.mean())
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.03 * width)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.03 * width)
    assert np.std(ours.distribution) == pytest.approx(ref.standard_error, rel=0.03)


def test_cells_and_strata_reproduce_mean_of_means():
    values = np.array([1, 0, 1, 1, 0, 0, 1, 1], dtype=float)
    cells = ["b", "b", "j", "j", "j", "j", "b", "b"]
    strata = ["X"] * 4 + ["Y"] * 4
    clusters = ["s1", "s2", "s1", "s2", "t1", "t2", "t1", "t2"]
    res = stats.cluster_bootstrap(values, clusters, cells, strata, n_resamples=300)
    # X: cells b (1, 0) = 0.5 and j (1, 1) = 1 -> 0.75; Y: j (0, 0) = 0, b (1, 1) = 1 -> 0.5
    assert res.estimate == pytest.approx((0.75 + 0.5) / 2)


def test_paired_difference_is_linear_in_the_rows():
    rng = np.random.default_rng(3)
    a, b = rng.random(300) < 0.7, rng.random(300) < 0.5
    clusters = rng.integers(0, 60, 300)
    d = stats.paired_bootstrap(a, b, clusters, n_resamples=400, seed=5)
    ra = stats.cluster_bootstrap(a.astype(float), clusters, n_resamples=400, seed=5)
    rb = stats.cluster_bootstrap(b.astype(float), clusters, n_resamples=400, seed=5)
    np.testing.assert_allclose(d.distribution, ra.distribution - rb.distribution)
    assert d.estimate == pytest.approx(a.mean() - b.mean())


def test_seed_scenario_bootstrap():
    rng = np.random.default_rng(11)
    n, clusters = 200, np.repeat(np.arange(50), 4)
    a = (rng.random((3, n)) < 0.7).astype(float)
    b = (rng.random((3, n)) < 0.6).astype(float)
    res = stats.seed_scenario_bootstrap(a, b, clusters, n_resamples=1000)
    assert res.estimate == pytest.approx(a.mean() - b.mean())
    assert res.low < res.estimate < res.high
    # one seed per arm: only scenarios vary, as in the paired bootstrap
    one = stats.seed_scenario_bootstrap(a[:1], b[:1], clusters, n_resamples=1000, seed=4)
    flat = stats.paired_bootstrap(a[0], b[0], clusters, n_resamples=1000, seed=4)
    np.testing.assert_allclose(one.distribution, flat.distribution)
    # identical seeds and paired seed draws: the seed variance vanishes
    same = stats.seed_scenario_bootstrap(np.vstack([a[0]] * 3), np.vstack([b[0]] * 3),
                                         clusters, paired_seeds=True, n_resamples=500, seed=9)
    assert same.estimate == pytest.approx(flat.estimate)
    # seed variance widens the interval relative to one seed
    spread = stats.seed_scenario_bootstrap(a, b, clusters, n_resamples=2000, seed=1)
    assert spread.high - spread.low > 0
    with pytest.raises(ValueError, match="paired seeds"):
        stats.seed_scenario_bootstrap(a, b[:2], clusters, paired_seeds=True)


def test_holm_matches_the_hand_computation_and_statsmodels():
    table = stats.holm({"x": 0.01, "y": 0.04, "z": 0.03})
    # sorted: 0.01*3 = 0.03; 0.03*2 = 0.06; max(0.06, 0.04*1) = 0.06
    assert table["hypothesis"].to_list() == ["x", "y", "z"]
    assert table["p_holm"].to_list() == pytest.approx([0.03, 0.06, 0.06])
    assert table["reject"].to_list() == [True, False, False]
    # 0.2*2 = 0.4, max(0.4, 0.4*1) = 0.4; and 0.8*2 = 1.6 is capped at 1
    assert stats.holm({"a": 0.2, "b": 0.4})["p_holm"].to_list() == pytest.approx([0.4, 0.4])
    assert stats.holm({"a": 0.9, "b": 0.8})["p_holm"].to_list() == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError):
        stats.holm({"a": 1.5})


def test_within_benchmark_centring_removes_benchmark_level():
    # benchmark P: every difference +0.2; benchmark Q: every difference -0.1
    n = 40
    diff = np.r_[np.full(n, 0.2), np.full(n, -0.1)]
    construct = np.tile(["belief", "emotion"], n)
    benchmark = np.repeat(["P", "Q"], n)
    clusters = np.r_[np.arange(n) // 2, 100 + np.arange(n) // 2]
    pooled = stats.construct_effects(diff, construct, benchmark, clusters, centre=False,
                                     n_resamples=300)
    centred = stats.construct_effects(diff, construct, benchmark, clusters, centre=True,
                                      n_resamples=300)
    assert pooled["estimate"].to_list() == pytest.approx([0.05, 0.05])
    assert centred["estimate"].to_list() == pytest.approx([0.0, 0.0], abs=1e-12)
    assert centred["low"].to_list() == pytest.approx([0.0, 0.0], abs=1e-12)
    assert centred["n"].to_list() == [40, 40]


def test_centring_keeps_a_real_construct_effect():
    rng = np.random.default_rng(5)
    n = 400
    construct = rng.choice(["belief", "other"], n)
    benchmark = rng.choice(["P", "Q"], n)
    diff = np.where(construct == "belief", 0.3, 0.0) + np.where(benchmark == "P", 0.5, 0.0)
    clusters = np.arange(n)
    res = stats.construct_effects(diff, construct, benchmark, clusters, n_resamples=500)
    est = dict(zip(res["construct"], res["estimate"], strict=True))
    assert est["belief"] - est["other"] == pytest.approx(0.3, abs=0.02)
    assert est["belief"] > 0 > est["other"]


def test_align_paired_refuses_different_units():
    import polars as pl

    a = pl.DataFrame({"unit_id": ["1", "2"], "cluster": ["s", "t"], "cell": ["all", "all"],
                      "value": [1.0, 0.0]})
    b = a.with_columns(pl.col("value") * 0)
    pair = stats.align_paired(a, b)
    assert pair["a"].to_list() == [1.0, 0.0] and pair["b"].to_list() == [0.0, 0.0]
    with pytest.raises(ValueError, match="unpaired units"):
        stats.align_paired(a, b.head(1))
