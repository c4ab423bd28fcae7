"""Accuracy against chance: is a system's score distinguishable from guessing?

A weak model (the embedded CPU default) may score near chance; a report must say so rather
than let a small difference read as a finding. Chance is the mean over items of 1/(number of
options); the interval is the cluster bootstrap of the accuracy over stories
(:func:`~cogrsi_lib.stats.bootstrap.cluster_bootstrap`). A system is ``above chance`` when the
whole interval lies above chance, ``below chance`` when it lies below, else ``near chance``;
above chance but no better than always giving the commonest gold label is said so too.
Beside it, the commonest answer the group gives and its share: a model that gives one option
letter to every question scores whatever that letter's gold share is, and says nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import polars as pl

from cogrsi_lib.stats.bootstrap import cluster_bootstrap

__all__ = ["against_chance", "chance_table", "verdict"]


def verdict(low: float, high: float, chance: float, accuracy: float | None = None,
            best_constant: float | None = None) -> str:
    """Where the interval lies against chance; an accuracy above chance that a constant
    answer reaches too is said to be so."""
    if high < chance:
        return "below chance"
    if low <= chance:
        return "near chance"
    if accuracy is not None and best_constant is not None and accuracy <= best_constant:
        return "above chance, not above a constant answer"
    return "above chance"


def against_chance(correct: Sequence[float], n_options: Sequence[int],
                   clusters: Sequence[object], n_resamples: int = 2000, seed: int = 0
                   ) -> dict[str, float | int | str]:
    """Accuracy, chance, its bootstrap interval and the verdict for multiple-choice items."""
    c = np.asarray(correct, dtype=np.float64)
    k = np.asarray(n_options, dtype=np.float64)
    if len(c) == 0 or len(c) != len(k) or (k < 2).any():
        raise ValueError("one correctness and one option count (>= 2) per item")
    chance = float(np.mean(1.0 / k))
    r = cluster_bootstrap(c, clusters, n_resamples=n_resamples, seed=seed)
    return {"items": len(c), "accuracy": r.estimate, "chance": chance, "low": r.low,
            "high": r.high, "verdict": verdict(r.low, r.high, chance)}


def chance_table(rows: pl.DataFrame, by: Sequence[str], n_resamples: int = 2000,
                 seed: int = 0) -> pl.DataFrame:
    """:func:`against_chance` per group of ``rows`` (columns ``correct``, ``n_options``,
    ``story_id``, ``gold``); items without options (free text) have no chance level and are
    left out. ``best_constant`` is the accuracy of always giving the group's commonest gold
    label: a model that always picks one position can reach it without reading;
    ``top_answer`` is the group's commonest answer (an unparsed one is null) and
    ``top_answer_share`` its share of the group's items (1.0: the same answer throughout)."""
    mc = rows.filter(pl.col("n_options").is_not_null() & (pl.col("n_options") >= 2))
    out = []
    for key, g in mc.group_by(list(by), maintain_order=True):
        res = against_chance(g["correct"].cast(pl.Float64).fill_null(0.0).to_list(),
                             g["n_options"].to_list(), g["story_id"].to_list(),
                             n_resamples, seed)
        best = g["gold"].value_counts()["count"].max() / g.height if "gold" in g.columns else None
        res["verdict"] = verdict(res["low"], res["high"], res["chance"], res["accuracy"], best)
        out.append({**dict(zip(by, key, strict=True)), **res, "best_constant": best,
                    **_top_answer(g)})
    schema = {**{b: pl.Utf8 for b in by}, "items": pl.Int64, "accuracy": pl.Float64,
              "chance": pl.Float64, "low": pl.Float64, "high": pl.Float64, "verdict": pl.Utf8,
              "best_constant": pl.Float64, "top_answer": pl.Utf8,
              "top_answer_share": pl.Float64}
    return pl.DataFrame(out, schema=schema)


def _top_answer(g: pl.DataFrame) -> dict[str, str | float | None]:
    """The commonest answer of ``g`` (ties: the first given) and its share of the items."""
    if "answer" not in g.columns:
        return {"top_answer": None, "top_answer_share": None}
    answer, n = Counter(g["answer"].cast(pl.Utf8).to_list()).most_common(1)[0]
    return {"top_answer": answer, "top_answer_share": n / g.height}
