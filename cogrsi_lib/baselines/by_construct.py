"""Accuracy by ATOMS construct, and the reader against self-consistency per construct
(CogRSI App. G.6, Table 25, Figure 13a).

Each benchmark question gets its construct from :func:`cogrsi_lib.bench.constructs.construct_of`.
:func:`construct_accuracy` gives every system's score per construct (Figure 13a);
:func:`construct_table` the reader minus a reference per construct (Table 25), on the same
questions of the same runs, two ways (App. E.3):

- *pooled*: the mean paired difference over every benchmark's questions of the construct;
- *within benchmark*: each question's difference centred on its benchmark's mean difference,
  so what is left is the construct's own effect beyond its benchmarks' levels.

Both resample stories within benchmarks (:func:`cogrsi_lib.stats.construct_effects`). The paper
leaves out constructs with fewer than :data:`MIN_QUESTIONS` questions; here every construct
keeps its row, and ``reported`` says whether the paper's rule would keep it.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from cogrsi_lib.bench.constructs import construct_rank, sort_constructs, with_constructs
from cogrsi_lib.stats import construct_effects, with_power

MIN_QUESTIONS = 50
_ON = ["model", "item_id", "story_id", "run"]


def construct_accuracy(items: pl.DataFrame) -> pl.DataFrame:
    """Per model, construct and system: questions (every run's), benchmarks and the mean score
    in points, constructs in ATOMS order."""
    rows = with_constructs(items)
    if rows.height == 0:
        return pl.DataFrame()
    t = (rows.group_by("model", "construct", "system", maintain_order=True)
         .agg(pl.len().alias("questions"),
              pl.col("benchmark").n_unique().alias("benchmarks"),
              (pl.col("score").mean() * 100).alias("score")))
    return sort_constructs(t.sort("model", "system"), "model")


def _effects(g: pl.DataFrame, centre: bool, n_resamples: int, seed: int) -> pl.DataFrame:
    return construct_effects((g["a"] - g["b"]).to_numpy() * 100, g["construct"].to_list(),
                             g["benchmark"].to_list(), g["cluster"].to_list(), centre=centre,
                             n_resamples=n_resamples, seed=seed)


def construct_table(items: pl.DataFrame, system: str = "cogrsi", reference: str = "sc6",
                    n_resamples: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Per model and construct: ``system`` minus ``reference`` in points on the same questions
    of the same runs, pooled over benchmarks and within benchmarks, each with its 95% interval
    over stories, p-value and power (``underpowered``); ``reported`` is False for a construct
    the paper would omit (fewer than :data:`MIN_QUESTIONS` questions)."""
    rows = with_constructs(items)
    out: list[dict[str, Any]] = []
    for model in rows["model"].unique(maintain_order=True).to_list() if rows.height else []:
        own = rows.filter(pl.col("model") == model)
        a = own.filter(pl.col("system") == system).select(
            *_ON, "benchmark", "construct", pl.col("score").alias("a"))
        b = own.filter(pl.col("system") == reference).select(*_ON, pl.col("score").alias("b"))
        g = a.join(b, on=_ON, how="inner", maintain_order="left").drop_nulls(["a", "b"])
        # stories are numbered within their benchmark, so a cluster is (benchmark, story)
        g = g.with_columns(cluster=pl.col("benchmark") + "/" + pl.col("story_id"))
        if g.height == 0:
            continue
        pooled = _effects(g, False, n_resamples, seed)
        within = _effects(g, True, n_resamples, seed)
        for p_row, w_row in zip(pooled.iter_rows(named=True), within.iter_rows(named=True),
                                strict=True):
            sub = g.filter(pl.col("construct") == p_row["construct"])
            out.append({
                "model": model, "construct": p_row["construct"], "system": system,
                "reference": reference, "n": p_row["n"],
                "benchmarks": sub["benchmark"].n_unique(),
                "stories": sub["cluster"].n_unique(),
                "system_score": float(sub["a"].mean()) * 100,
                "reference_score": float(sub["b"].mean()) * 100,
                "diff": p_row["estimate"], "low": p_row["low"], "high": p_row["high"],
                "p_value": p_row["p_value"],
                "within": w_row["estimate"], "within_low": w_row["low"],
                "within_high": w_row["high"], "within_p_value": w_row["p_value"],
                "reported": p_row["n"] >= MIN_QUESTIONS})
    if not out:
        return pl.DataFrame()
    t = pl.DataFrame(out)
    t = with_power(t, diff="diff", n="n", low="low", high="high")
    return sort_constructs(t, "model")


def construct_chart(accuracy: pl.DataFrame) -> Any:
    """Figure 13a: each system's score per construct (bars; n in the tooltip)."""
    import altair as alt

    data = accuracy
    if "model" in data.columns and data["model"].n_unique() > 1:
        data = data.with_columns(system=pl.col("system") + " · " + pl.col("model"))
    order = sorted(set(data["construct"]), key=construct_rank)
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("system:N", title=None, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("score:Q", title="score (points)", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("system:N", title="system", scale=alt.Scale(scheme="tableau20")),
        column=alt.Column("construct:N", sort=order, title="ATOMS construct"),
        tooltip=["construct", "system", "questions", "benchmarks", "score"],
    ).properties(width=70, height=220, title="Score by ATOMS construct (CogRSI Figure 13a)")
