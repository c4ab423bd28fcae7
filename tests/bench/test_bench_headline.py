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


def _official_replies(name: str, items) -> dict[str, list[str]]:
    official = bench.get(name).protocol("official")
    out = {}
    for k, it in enumerate(items):
        views = official.present(it)
        noisy = _noisy(views, 0.4, seed=k)
        out[it.id] = [noisy[v.id] for v in views]
    return out


# OpenToM's official headline is a macro-F1 over question types: no mean of rows gives it.
@pytest.mark.parametrize("name", [n for n in bench.names() if n != "opentom"])
def test_official_units_mean_over_cells_is_the_official_headline(name):
    items = _items(name)
    ev = evaluate(name, items, _official_replies(name, items), protocol="official")
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


@pytest.mark.parametrize("protocol", ["official", "uniform"])
def test_hitom_headline_row_and_per_order_accuracies(protocol):
    """Hi-ToM's paper reports accuracy per ToM order: every order is reported beside the
    headline, which over whole stories is the mean of the per-order accuracies (each story
    asks every order once), as the listed headline row says."""
    items = _items("hi-tom")
    proto = bench.get("hi-tom").protocol(protocol)
    (row,) = [d for d in proto.deviations if d.aspect == "headline"]
    assert "per ToM order" in row.release and "type:order_k" in row.here
    partial = items[:137]  # whole stories are not kept: the orders are unequal
    ev = evaluate("hi-tom", partial, _noisy(partial, 0.5, 5), protocol=protocol)
    per_order = [ev.summary[f"type:order_{k}"] for k in range(5)]
    assert ev.summary["score"] == pytest.approx(float(np.mean(per_order)))
    assert ev.summary["score"] != pytest.approx(ev.summary["accuracy"])
    stories = sorted({it.story_id for it in items})
    for seed in range(3):
        chosen = set(random.Random(seed).sample(stories, 30))
        sample = [it for it in items if it.story_id in chosen]
        ev = evaluate("hi-tom", sample, _noisy(sample, 0.5, seed), protocol=protocol)
        per_order = [ev.summary[f"type:order_{k}"] for k in range(5)]
        assert ev.summary["score"] == pytest.approx(float(np.mean(per_order)))
        assert ev.summary["score"] == pytest.approx(ev.summary["accuracy"])
        for k in range(5):
            for name, deception in (("tell", True), ("no_tell", False)):
                rows = [float(j.correct) for it, j in zip(sample, ev.judgements, strict=True)
                        if it.question_type == f"order_{k}"
                        and it.extra["deception"] == deception]
                assert ev.summary[f"{name}:order_{k}"] == pytest.approx(sum(rows) / len(rows))


@pytest.mark.parametrize("protocol", ["official", "uniform"])
def test_exploretom_headline_row_and_accuracy_per_order(protocol):
    items = _items("exploretom")
    proto = bench.get("exploretom").protocol(protocol)
    (row,) = [d for d in proto.deviations if d.aspect == "headline"]
    assert "compute_statistics.py" in row.release and "order:n" in row.here
    ev = evaluate("exploretom", items, _noisy(items, 0.5, seed=4), protocol=protocol)
    orders = {it.extra["nth_order"] for it in items}
    assert len(orders) > 1
    for n in orders:
        rows = [float(j.correct) for it, j in zip(items, ev.judgements, strict=True)
                if it.extra["nth_order"] == n]
        assert ev.summary[f"order:{n}"] == pytest.approx(sum(rows) / len(rows))
