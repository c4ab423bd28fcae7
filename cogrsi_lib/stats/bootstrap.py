"""Cluster bootstraps: paired differences over stories, seeds and scenarios (CogRSI §3, E.3).

"Differences use a paired bootstrap over stories, resampling seeds and scenarios for the
loops" (§3); "paired differences are bootstrapped over stories or conversations (2,000
resamples); within-benchmark construct effects centre each question's difference on its
benchmark's mean" (App. E.3).

Every statistic here is a *mean over cells of cell means* of per-row values, computed from
per-cluster sums: a resample draws clusters with replacement (a multinomial count per
cluster), and each cell mean is ``counts @ sums / counts @ sizes``.  One cell gives plain
(cluster-weighted) accuracy; several cells reproduce headlines such as SimpleToM's mean of
behaviour and judgment or ExploreToM's mean of its two partitions; strata (benchmarks) are
resampled independently and averaged (Main).  Everything is vectorised over resamples with
numpy, so 2,000 resamples of a few thousand questions take milliseconds.

Intervals are percentile intervals; the two-sided p-value is
``min(1, 2 * min(P*(d <= 0), P*(d >= 0)))`` with the ``(1 + count) / (1 + B)`` correction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

__all__ = [
    "BootstrapResult",
    "align_paired",
    "cluster_bootstrap",
    "construct_effects",
    "paired_bootstrap",
    "resample_counts",
    "seed_scenario_bootstrap",
]

DEFAULT_RESAMPLES = 2000


@dataclass(frozen=True)
class BootstrapResult:
    """Point estimate, percentile interval and bootstrap p-value (H0: statistic = 0)."""

    estimate: float
    low: float
    high: float
    p_value: float
    n_resamples: int
    confidence: float
    distribution: np.ndarray = field(repr=False, compare=False)

    def as_dict(self) -> dict[str, float]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high,
                "p_value": self.p_value, "n_resamples": float(self.n_resamples),
                "confidence": self.confidence}


def resample_counts(rng: np.random.Generator, n_clusters: int, n_resamples: int) -> np.ndarray:
    """(n_resamples, n_clusters) counts: how often each cluster is drawn in each resample."""
    idx = rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    flat = idx + (np.arange(n_resamples) * n_clusters)[:, None]
    counts = np.bincount(flat.ravel(), minlength=n_resamples * n_clusters)
    return counts.reshape(n_resamples, n_clusters).astype(np.float64)


def _codes(labels: Sequence[object] | np.ndarray) -> tuple[np.ndarray, int]:
    _, codes = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1 if len(codes) else 0


def _sums(values: np.ndarray, clusters: np.ndarray, cells: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Per (cluster, cell) sums of ``values`` (any leading axes) and row counts."""
    c_codes, n_c = _codes(clusters)
    k_codes, n_k = _codes(cells)
    flat = c_codes * n_k + k_codes
    sizes = np.bincount(flat, minlength=n_c * n_k).reshape(n_c, n_k).astype(np.float64)
    lead = values.shape[:-1]
    v = values.reshape(-1, values.shape[-1])
    sums = np.stack([np.bincount(flat, weights=row, minlength=n_c * n_k) for row in v])
    return sums.reshape(*lead, n_c, n_k), sizes


def _cell_mean(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Mean over cells (last axis) of num/den, cells with no rows left out."""
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    present = den > 0
    count = present.sum(axis=-1)
    total = np.where(present, ratio, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _p_value(dist: np.ndarray, null: float = 0.0) -> float:
    b = len(dist)
    below = (1 + np.sum(dist <= null)) / (b + 1)
    above = (1 + np.sum(dist >= null)) / (b + 1)
    return float(min(1.0, 2 * min(below, above)))


def _result(estimate: float, dist: np.ndarray, confidence: float) -> BootstrapResult:
    alpha = (1 - confidence) / 2
    finite = dist[np.isfinite(dist)]
    low, high = (np.quantile(finite, [alpha, 1 - alpha]) if len(finite)
                 else (np.nan, np.nan))
    return BootstrapResult(float(estimate), float(low), float(high), _p_value(finite),
                           len(dist), confidence, dist)


def cluster_bootstrap(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    cells: Sequence[object] | np.ndarray | None = None,
    strata: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Bootstrap of the mean over strata of (mean over cells of cell means) of ``values``.

    Clusters are resampled with replacement within each stratum, independently across strata.
    With no cells and no strata the statistic is the mean of ``values`` and, with every row its
    own cluster, this is the ordinary nonparametric bootstrap of a mean.
    """
    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    clusters = np.asarray(clusters, dtype=object)
    cells = np.zeros(n, dtype=int) if cells is None else np.asarray(cells, dtype=object)
    strata = np.zeros(n, dtype=int) if strata is None else np.asarray(strata, dtype=object)
    if not (len(clusters) == len(cells) == len(strata) == n):
        raise ValueError("values, clusters, cells and strata must have the same length")
    if n == 0:
        raise ValueError("no rows to bootstrap")
    rng = np.random.default_rng(seed)
    estimates, dists = [], []
    for stratum in np.unique(strata.astype(str)):
        rows = strata.astype(str) == stratum
        # a cluster id may repeat across strata: keep them apart
        sums, sizes = _sums(v[rows][None, :], clusters[rows], cells[rows])
        sums = sums[0]
        estimates.append(_cell_mean(sums.sum(0), sizes.sum(0)))
        counts = resample_counts(rng, sizes.shape[0], n_resamples)
        dists.append(_cell_mean(counts @ sums, counts @ sizes))
    estimate = float(np.mean(estimates))
    return _result(estimate, np.mean(np.vstack(dists), axis=0), confidence)


def paired_bootstrap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    cells: Sequence[object] | np.ndarray | None = None,
    strata: Sequence[object] | np.ndarray | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired difference A - B of the same statistic on the same rows, resampling clusters.

    Because every statistic here is linear in the row values given the resampled counts, the
    difference of the two statistics is the statistic of the row differences.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired scores differ in shape: {a.shape} vs {b.shape}")
    return cluster_bootstrap(a - b, clusters, cells, strata, n_resamples, seed, confidence)


def align_paired(units_a: pl.DataFrame, units_b: pl.DataFrame) -> pl.DataFrame:
    """Join two systems' headline rows (``unit_id, cluster, cell, value``) on ``unit_id``.

    Returns ``unit_id, cluster, cell, a, b`` (plus ``stratum`` when both have it); the two
    must cover the same units, or the pairing is refused.
    """
    keys = ["unit_id", "cluster", "cell"] + (["stratum"] if "stratum" in units_a.columns
                                             and "stratum" in units_b.columns else [])
    ids_a, ids_b = set(units_a["unit_id"]), set(units_b["unit_id"])
    if ids_a != ids_b:
        only_a, only_b = sorted(ids_a - ids_b)[:3], sorted(ids_b - ids_a)[:3]
        raise ValueError(f"unpaired units: only in A {only_a}, only in B {only_b}")
    joined = units_a.select(*keys, pl.col("value").alias("a")).join(
        units_b.select(*keys, pl.col("value").alias("b")), on=keys, how="inner",
        maintain_order="left")
    if joined.height != units_a.height:
        raise ValueError("units disagree on cluster/cell between the two systems")
    return joined.sort("unit_id")


def seed_scenario_bootstrap(
    a: np.ndarray,
    b: np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    cells: Sequence[object] | np.ndarray | None = None,
    paired_seeds: bool = False,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Difference between two loop arms, resampling their seeds and the scenarios.

    ``a`` is (seeds of A, rows) and ``b`` (seeds of B, rows): each seed's per-row scores on
    the same rows.  Each resample draws scenarios (clusters) with replacement and, for each
    arm, its seeds with replacement; the statistic is the mean over drawn seeds of A's
    statistic minus the same for B.  ``paired_seeds=True`` draws the same seed indices for
    both arms (the seed-paired bootstrap; needs equal seed counts).
    """
    a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
    n = a.shape[1]
    if b.shape[1] != n:
        raise ValueError("both arms must score the same rows")
    if paired_seeds and a.shape[0] != b.shape[0]:
        raise ValueError("paired seeds need the same number of seeds in both arms")
    cells = np.zeros(n, dtype=int) if cells is None else np.asarray(cells, dtype=object)
    sums_a, sizes = _sums(a, np.asarray(clusters, dtype=object), cells)
    sums_b, _ = _sums(b, np.asarray(clusters, dtype=object), cells)
    rng = np.random.default_rng(seed)
    counts = resample_counts(rng, sizes.shape[0], n_resamples)
    den = counts @ sizes                                   # (B, K)

    def arm(sums: np.ndarray, idx: np.ndarray) -> np.ndarray:
        per_seed = _cell_mean(np.einsum("bc,sck->bsk", counts, sums), den[:, None, :])
        return np.take_along_axis(per_seed, idx, axis=1).mean(axis=1)

    idx_a = rng.integers(0, a.shape[0], size=(n_resamples, a.shape[0]))
    idx_b = idx_a if paired_seeds else rng.integers(0, b.shape[0], size=(n_resamples, b.shape[0]))
    dist = arm(sums_a, idx_a) - arm(sums_b, idx_b)
    full = sizes.sum(0)
    estimate = (np.mean(_cell_mean(sums_a.sum(1), full[None, :]))
                - np.mean(_cell_mean(sums_b.sum(1), full[None, :])))
    return _result(float(estimate), dist, confidence)


def construct_effects(
    diff: Sequence[float] | np.ndarray,
    construct: Sequence[object] | np.ndarray,
    benchmark: Sequence[object] | np.ndarray,
    clusters: Sequence[object] | np.ndarray,
    centre: bool = True,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Mean paired difference per construct, pooled or centred within benchmark (App. E.3).

    ``centre=True`` subtracts from each question's difference its benchmark's mean difference
    (recomputed in every resample), so a construct's effect is what remains once benchmark
    level is removed; clusters are resampled within benchmarks.  Returns one row per construct
    with ``n``, ``estimate``, ``low``, ``high``, ``p_value``.
    """
    d = np.asarray(diff, dtype=np.float64)
    construct = np.asarray(construct, dtype=object).astype(str)
    benchmark = np.asarray(benchmark, dtype=object).astype(str)
    clusters = np.asarray(clusters, dtype=object)
    names = np.unique(construct)
    rng = np.random.default_rng(seed)
    num_hat = np.zeros(len(names))
    den_hat = np.zeros(len(names))
    num = np.zeros((n_resamples, len(names)))
    den = np.zeros((n_resamples, len(names)))
    for bench in np.unique(benchmark):
        rows = benchmark == bench
        sums, sizes = _sums(d[rows][None, :], clusters[rows], construct[rows])
        sums = sums[0]
        # _sums numbers the constructs present in sorted order; place them among all names
        present = np.searchsorted(names, np.unique(construct[rows]))
        s_full = np.zeros((sums.shape[0], len(names)))
        n_full = np.zeros((sums.shape[0], len(names)))
        s_full[:, present], n_full[:, present] = sums, sizes
        counts = resample_counts(rng, s_full.shape[0], n_resamples)
        nb, db = counts @ s_full, counts @ n_full
        hb, hd = s_full.sum(0), n_full.sum(0)
        if centre:
            nb = nb - (nb.sum(1) / db.sum(1))[:, None] * db
            hb = hb - hb.sum() / hd.sum() * hd
        num, den = num + nb, den + db
        num_hat, den_hat = num_hat + hb, den_hat + hd
    rows_out = []
    for k, name in enumerate(names):
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = np.where(den[:, k] > 0, num[:, k] / np.where(den[:, k] > 0, den[:, k], 1),
                            np.nan)
        res = _result(num_hat[k] / den_hat[k], dist, confidence)
        rows_out.append({"construct": name, "n": int(den_hat[k]), "estimate": res.estimate,
                         "low": res.low, "high": res.high, "p_value": res.p_value})
    return pl.DataFrame(rows_out)
