"""The accuracy-versus-depth curve (plan §4 "central measurement", §8.1) of any predictor.

Each predictor is a list of raw replies scored by :func:`score.score`; the oracle's own
replies must give 100% at every depth.  Heuristic points where the heuristic is the
task itself (e.g. first-order at R1) are left out, as in the baseline table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import altair as alt
import polars as pl

from cogrsi_lib.nested.baselines import ALL, as_replies, baseline_table
from cogrsi_lib.nested.facts import ADVERSARIAL
from cogrsi_lib.nested.heuristics import HEURISTICS, is_shortcut
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.nested.score import score
from cogrsi_lib.stats import wilson_bounds

ORACLE = "oracle"


def oracle_replies(items: Sequence[NestedItem]) -> list[str]:
    """The gold answers as strict JSON replies with confidence 1."""
    return [json.dumps({"answer": it.gold, "confidence": 1.0}) for it in items]


def curve_table(
    items: Sequence[NestedItem], predictors: Mapping[str, Sequence[str]]
) -> pl.DataFrame:
    """Long table: predictor, subset (all / adversarial), depth, n, accuracy."""
    baselines = baseline_table(items)
    rows = []
    for name, replies in predictors.items():
        by_depth = score(items, replies, baselines=baselines).by_depth
        for row in by_depth.iter_rows(named=True):
            if name in HEURISTICS and not is_shortcut(name, row["depth"]):
                continue
            rows.append({"predictor": name, "subset": ALL, "depth": row["depth"],
                         "n": row["n"], "accuracy": row["accuracy"]})
            n_adv = sum(1 for it in items
                        if it.depth == row["depth"] and it.partition == ADVERSARIAL)
            if n_adv:
                rows.append({"predictor": name, "subset": ADVERSARIAL, "depth": row["depth"],
                             "n": n_adv, "accuracy": row["adversarial_accuracy"]})
    schema = {"predictor": pl.Utf8, "subset": pl.Utf8, "depth": pl.Int64, "n": pl.Int64,
              "accuracy": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def baseline_curves(items: Sequence[NestedItem]) -> pl.DataFrame:
    """The curve table of the oracle and of every heuristic."""
    predictors = {ORACLE: oracle_replies(items)}
    predictors |= {name: as_replies(items, fn) for name, fn in HEURISTICS.items()}
    return curve_table(items, predictors)


def depth_chart(curves: pl.DataFrame, chance: float | None = None) -> alt.FacetChart:
    """Accuracy against depth with 95% Wilson intervals, one line per predictor (each with
    its own dash and point shape, so that coinciding lines stay visible), one panel per
    subset, chance dashed; n per point in the subtitle and tooltips."""
    n = curves["n"]
    low, high = wilson_bounds(curves["accuracy"].to_list(), n.to_list())
    data = curves.with_columns(("R" + pl.col("depth").cast(pl.Utf8)).alias("level"),
                               pl.Series("low", low), pl.Series("high", high)).to_dicts()
    order = list(dict.fromkeys(curves["predictor"].to_list()))
    base = alt.Chart(alt.Data(values=data))
    x = alt.X("depth:Q", title="recursion depth k (R0 = reality)",
              axis=alt.Axis(values=sorted(set(curves["depth"].to_list())), format="d"))
    color = alt.Color("predictor:N", title="predictor", sort=order)
    bars = base.mark_rule(opacity=0.45, strokeWidth=2).encode(
        x=x, y=alt.Y("low:Q", title="accuracy (95% Wilson interval)",
                     scale=alt.Scale(domain=[0, 1])), y2="high:Q", color=color)
    lines = base.mark_line(point=True).encode(
        x=x, y=alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1])), color=color,
        strokeDash=alt.StrokeDash("predictor:N", sort=order, legend=None),
        shape=alt.Shape("predictor:N", sort=order, legend=None),
        tooltip=["predictor:N", "subset:N", "level:N", "n:Q",
                 alt.Tooltip("accuracy:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                 alt.Tooltip("high:Q", format=".3f")],
    )
    layers: list[alt.Chart] = [bars, lines]
    if chance is not None:
        layers.append(base.transform_aggregate(n_rows="count()", groupby=["subset"])
                      .mark_rule(strokeDash=[4, 4], color="gray").encode(y=alt.datum(chance)))
    sizes = f"{int(n.min())}-{int(n.max())}" if len(n) and n.min() != n.max() else (
        f"{int(n[0])}" if len(n) else "0")
    return alt.layer(*layers).properties(width=260, height=220).facet(
        column=alt.Column("subset:N", title=None, sort=[ALL, ADVERSARIAL])
    ).properties(title=alt.Title("Nested-belief accuracy by depth",
                                 subtitle=f"n = {sizes} items per point; gray dashes: chance"))
