"""Each benchmark's headline rows reproduce its headline, so the bootstrap resamples the right
thing; and a paired bootstrap over those rows runs end to end."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
import pytest

from cogrsi_lib import bench, stats
from cogrsi_lib.bench.report import evaluate

from .conftest import FIXTURES, perfect_reply


def _items(name: str):
    b = bench.get(name)
    if b.sample == "synthetic":
        return bench.load(name, FIXTURES / name)
    if not b.is_available():
        pytest.skip(f"{b.title}: sample not available")
    return bench.load(name)


def _noisy(items, p: float, seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    return {it.id: perfect_reply(it) if rng.random() < p else "I am not sure." for it in items}


@pytest.mark.parametrize("name", bench.names())
def test_units_mean_over_cells_is_the_headline(name):
    items = _items(name)
    ev = evaluate(name, items, _noisy(items, 0.6, seed=1))
    cells = ev.units.group_by("cell").agg(pl.col("value").mean())
    assert ev.summary["score"] == pytest.approx(float(np.mean(cells["value"].to_numpy())))


@pytest.mark.parametrize("name", ["tombench", "fantom", "simpletom", "exploretom"])
def test_paired_bootstrap_over_units(name):
    items = _items(name)
    a = evaluate(name, items, _noisy(items, 0.8, seed=2)).units
    b = evaluate(name, items, _noisy(items, 0.5, seed=3)).units
    pair = stats.align_paired(a, b)
    res = stats.paired_bootstrap(pair["a"], pair["b"], pair["cluster"], pair["cell"],
                                 n_resamples=500)
    est_a = evaluate(name, items, _noisy(items, 0.8, seed=2)).summary["score"]
    est_b = evaluate(name, items, _noisy(items, 0.5, seed=3)).summary["score"]
    assert res.estimate == pytest.approx(est_a - est_b)
    assert res.low <= res.estimate <= res.high
