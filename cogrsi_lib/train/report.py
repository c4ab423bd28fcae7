"""Tables and charts of the ``train`` stage: the training mix, the loss and held-out
accuracy curves, and base vs trained with intervals."""

from __future__ import annotations

import altair as alt
import polars as pl

from cogrsi_lib.train.compare import POOLED, WHOLE_PAIRS


def mix_table(examples: pl.DataFrame) -> pl.DataFrame:
    """Examples per set, family, depth and false belief or not."""
    return (examples.group_by("set", "family", "depth", "false_belief").agg(pl.len().alias("n"))
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


def comparison_chart(table: pl.DataFrame) -> alt.LayerChart:
    """Trained - base per set and stratum, with the 95% interval."""
    df = table.with_columns((pl.col("set") + " / " + pl.col("stratum")).alias("row"))
    base = alt.Chart(df.to_pandas()).encode(y=alt.Y("row:N", title=None, sort=None))
    rule = base.mark_rule().encode(x=alt.X("low:Q", title="accuracy, trained - base"),
                                   x2="high:Q")
    point = base.mark_point(filled=True).encode(
        x="diff:Q", color=alt.Color("excludes_zero:N", title="interval excludes 0"))
    zero = alt.Chart(pl.DataFrame({"x": [0.0]}).to_pandas()).mark_rule(
        strokeDash=[4, 4]).encode(x="x:Q")
    return alt.layer(rule, point, zero).properties(width=420, title="Base vs trained")


def transfer_summary(table: pl.DataFrame) -> pl.DataFrame:
    """One row per set: its overall difference, the strata and pools where training helps
    or hurts (interval excludes zero) and how many strata (pools aside) show no clear
    change."""
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
                     "helps": ", ".join(strata.filter(pl.col("low") > 0)["stratum"]) or "-",
                     "hurts": ", ".join(strata.filter(pl.col("high") < 0)["stratum"]) or "-",
                     "no_clear_change": f"{unclear} of {own.height} strata"})
    return pl.DataFrame(rows).sort("set")
