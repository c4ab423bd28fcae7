"""Tables and charts of the ``train`` stage: the training mix, the loss and held-out
accuracy curves, and base vs trained with intervals."""

from __future__ import annotations

import altair as alt
import polars as pl

from cogrsi_lib.train.compare import POOLED, WHOLE_PAIRS


def mix_table(examples: pl.DataFrame) -> pl.DataFrame:
    """Examples per set, family, depth and false belief or not."""
    return (examples.group_by("set", "family", "depth", "false_belief",
                              maintain_order=True).agg(pl.len().alias("n"))
            .sort("set", "family", "depth", "false_belief", nulls_last=True))


def loss_chart(history: pl.DataFrame) -> alt.Chart:
    """Training loss per step, SFT then GRPO (GRPO's loss is a policy-gradient objective)."""
    df = history.filter(pl.col("loss").is_not_null()).select("phase", "global_step", "loss")
    return alt.Chart(df.to_pandas()).mark_line(point=True).encode(
        x=alt.X("global_step:Q", title="step (SFT, then GRPO)"),
        y=alt.Y("loss:Q", title="training loss"),
        color=alt.Color("phase:N", title="phase"),
    ).properties(width=420, height=220, title="Training loss")


def heldout_chart(history: pl.DataFrame) -> alt.Chart:
    """Held-out accuracy during training: asked by option label, asked open, asked open after
    thinking first (traced), and the last two on the false-belief items alone (where naming
    the object's place now is wrong)."""
    ways = {"heldout_accuracy": "by label", "heldout_open_accuracy": "open",
            "heldout_open_false_belief_accuracy": "open, false beliefs",
            "heldout_traced_accuracy": "traced",
            "heldout_traced_false_belief_accuracy": "traced, false beliefs"}
    df = (history.select("phase", "global_step", *ways)
          .unpivot(index=["phase", "global_step"], variable_name="asked", value_name="accuracy")
          .filter(pl.col("accuracy").is_not_null() & pl.col("accuracy").is_not_nan())
          .with_columns(pl.col("asked").replace_strict(ways)))
    return alt.Chart(df.to_pandas()).mark_line(point=True).encode(
        x=alt.X("global_step:Q", title="step (SFT, then GRPO)"),
        y=alt.Y("accuracy:Q", title="held-out accuracy", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("asked:N", title="asked"),
        strokeDash=alt.StrokeDash("phase:N", title="phase"),
    ).properties(width=420, height=220, title="Held-out accuracy (train lexicon, unseen worlds)")


def comparison_chart(table: pl.DataFrame) -> alt.Chart:
    """Trained - base per set (overall) and pooled stratum, with the 95% interval and n;
    colour says whether the row is significant (BH, not underpowered), underpowered, or
    neither. Strata themselves stay in the table."""
    df = (table.filter((pl.col("stratum") == "all") | pl.col("stratum").str.ends_with(POOLED))
          .with_columns(
              row=pl.col("set") + " / " + pl.col("stratum") + " (n=" + pl.col("n").cast(pl.Utf8)
              + ")",
              verdict=pl.when(pl.col("significant")).then(pl.lit("significant (BH)"))
              .when(pl.col("underpowered")).then(pl.lit("underpowered"))
              .otherwise(pl.lit("not significant"))))
    lo = min(-0.1, float(df["low"].min() or 0.0)) if df.height else -1.0
    hi = max(0.1, float(df["high"].max() or 0.0)) if df.height else 1.0
    x = alt.X("low:Q", title="accuracy, trained - base (95% interval)",
              scale=alt.Scale(domain=[lo, hi], nice=True))
    base = alt.Chart(df.to_pandas()).encode(y=alt.Y("row:N", title=None, sort=None,
                                                    axis=alt.Axis(labelLimit=320)))
    rule = base.mark_rule().encode(x=x, x2="high:Q")
    point = base.mark_point(filled=True, size=50).encode(
        x="diff:Q", color=alt.Color("verdict:N", title=None,
                                    scale=alt.Scale(domain=["significant (BH)", "not significant",
                                                            "underpowered"],
                                                    range=["#1b7837", "#555555", "#bbbbbb"])))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(
        strokeDash=[4, 4]).encode(x="x:Q")
    return alt.layer(rule, point, zero).properties(
        width=360, height=alt.Step(16),
        title="Base vs trained, per set and pooled stratum")


def transfer_summary(table: pl.DataFrame) -> pl.DataFrame:
    """One row per set: its overall difference and whether it is significant, the strata and
    pools where training significantly helps or hurts (Benjamini-Hochberg over the whole
    comparison table, underpowered rows never counted), how many strata (pools aside) are
    underpowered, and how many show no clear change (interval includes zero)."""
    rows = []
    for (s,), df in table.group_by(["set"], maintain_order=True):
        strata = df.filter(pl.col("stratum") != "all")
        overall = df.filter(pl.col("stratum") == "all").row(0, named=True)
        own = strata.filter(~pl.col("stratum").str.ends_with(POOLED)
                            & (pl.col("stratum") != WHOLE_PAIRS))
        unclear = own.filter((pl.col("low") <= 0) & (pl.col("high") >= 0)).height
        rows.append({"set": s, "n": overall["n"], "base": overall["base"],
                     "trained": overall["trained"], "diff": overall["diff"],
                     "low": overall["low"], "high": overall["high"],
                     "significant": overall["significant"],
                     "helps": ", ".join(strata.filter(pl.col("significant")
                                                      & (pl.col("diff") > 0))["stratum"]) or "-",
                     "hurts": ", ".join(strata.filter(pl.col("significant")
                                                      & (pl.col("diff") < 0))["stratum"]) or "-",
                     "underpowered": f"{own['underpowered'].sum()} of {own.height} strata",
                     "no_clear_change": f"{unclear} of {own.height} strata"})
    return pl.DataFrame(rows).sort("set")
