"""Tables and figures of the loops stage, computed from the round logs (CogRSI Fig. 4,
Tables 1 and 5).

- :func:`round_chart`: Figure 4 style, round by round: the incumbent's accuracy on each
  round's new discovery cohort, with the rounds that admitted an update marked.
- :func:`kept_rules`: what each loop admitted, round by round.
- :func:`table1`: who writes the principle, as far as development data allow: final-cohort
  accuracy (Dev.), pair validity on the gate split and on the held-out evaluation split,
  the number of texts the arm proposed; the test columns are not computed here.
- :func:`per_seed`: Table 14, every loop seed's row.
- :func:`comparisons`: paired differences on the final cohort (bootstrap over seeds' stories).
- :func:`replies_table`: builder replies by outcome (accepted, or the rejection reason).
- :func:`audit_candidates`: the written texts as the semantic audit's rules file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import altair as alt
import polars as pl

from cogrsi_lib.stats import paired_bootstrap, wilson_bounds

REFERENCE_ROWS = {"none": "no principle", "expert": "expert principle"}


def round_chart(rounds: pl.DataFrame) -> alt.FacetChart:
    """The incumbent's accuracy on each round's new discovery questions, with its 95%
    Wilson interval and n, on the full 0-100% axis (a cohort of a few questions moves by
    whole steps), per arm."""
    df = rounds.select(
        "arm", pl.col("seed").cast(pl.Utf8), "round", "discovery_accuracy", "discovery_n",
        admitted=pl.col("admitted").is_not_null())
    lows, highs = wilson_bounds((df["discovery_accuracy"] / 100).to_list(),
                                df["discovery_n"].to_list())
    df = df.with_columns(low=100 * pl.Series(lows), high=100 * pl.Series(highs))
    n = sorted(set(df["discovery_n"].to_list()))
    base = alt.Chart(df).encode(
        x=alt.X("round:O", title="round"),
        color=alt.Color("seed:N", title="seed"))
    title = "incumbent accuracy on new questions (%)"
    y = alt.Y("discovery_accuracy:Q", title=title, scale=alt.Scale(domain=[0, 100]))
    band = base.mark_rule(strokeWidth=2, opacity=0.5).encode(
        y=alt.Y("low:Q", title=title, scale=alt.Scale(domain=[0, 100])), y2="high:Q")
    lines = base.mark_line().encode(y=y)
    points = base.mark_point(size=70, filled=True).encode(
        y=y, shape=alt.Shape("admitted:N", title="update admitted"),
        tooltip=["arm", "seed", "round", "discovery_accuracy", "discovery_n", "low", "high"])
    sizes = ", ".join(map(str, n))
    return (alt.layer(band, lines, points).properties(width=220, height=200)
            .facet(column=alt.Column("arm:N", title=None))
            .properties(title=f"Incumbent accuracy per round (95% Wilson interval, "
                              f"n = {sizes} questions a round)"))


def kept_rules(rounds: pl.DataFrame, candidates: pl.DataFrame) -> pl.DataFrame:
    adm = candidates.filter(pl.col("admitted")).select(
        "arm", "seed", "round", "operation", "entry", "written", "mean_gain", "gate_gain")
    return (rounds.select("arm", "seed", "round", "incumbent_size", "new_size")
            .join(adm, on=["arm", "seed", "round"], how="inner", maintain_order="left")
            .sort(["arm", "seed", "round"]))


def replies_table(replies: pl.DataFrame) -> pl.DataFrame:
    return (replies.with_columns(outcome=pl.when(pl.col("status") == "ok")
                                 .then(pl.lit("accepted")).otherwise(pl.col("reason")))
            .group_by(["arm", "outcome"], maintain_order=True).agg(pl.len().alias("replies"))
            .sort(["arm", "outcome"]))


def _mean_by(scores: pl.DataFrame, value: str, out: str) -> pl.DataFrame:
    per_seed = scores.group_by(["label", "seed"], maintain_order=True).agg(pl.col(value).mean())
    return per_seed.group_by("label", maintain_order=True).agg(
        pl.col(value).mean().alias(out), pl.col("seed").n_unique().alias(f"{out}_seeds"))


def table1(final_scores: pl.DataFrame, gate_pairs: pl.DataFrame, eval_pairs: pl.DataFrame | None,
           arms: Mapping[str, str], candidates: pl.DataFrame | None = None,
           dev_comparable: Sequence[str] | None = None, test_main: pl.DataFrame | None = None,
           bigtom_u: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per principle source: ``none``, ``expert`` and each arm (means over seeds).

    ``final_scores``: label, seed, correct; ``gate_pairs``/``eval_pairs``: label, seed,
    pair_validity; ``arms``: label -> registration text; ``candidates``: the loops'
    candidates (for the number of texts each arm proposed and admitted).
    ``dev_comparable``: labels whose Dev. is shown (GEPA selects on its own validation split,
    so its Dev. is not comparable and is left out, as in the paper). ``test_main``: label,
    seed, benchmark, score (Test Main: the mean over the benchmarks, then over seeds);
    ``bigtom_u``: label, seed, pair_validity. ``invalid_rules`` (the share of an arm's rules
    with a formal counterexample) is the audit's, which runs after this stage: empty here.
    """
    labels = list(REFERENCE_ROWS) + [a for a in arms if a not in REFERENCE_ROWS]
    rows = pl.DataFrame({"label": labels,
                         "registration": [REFERENCE_ROWS.get(x, arms.get(x, "")) for x in labels]})
    dev = _mean_by(final_scores.with_columns(pl.col("correct").cast(pl.Float64) * 100),
                   "correct", "dev")
    out = rows.join(dev, on="label", how="left", maintain_order="left")
    if dev_comparable is not None:
        keep = set(dev_comparable) | set(REFERENCE_ROWS)
        out = out.with_columns(dev=pl.when(pl.col("label").is_in(list(keep)))
                               .then(pl.col("dev")).otherwise(None))
    out = out.join(_mean_by(gate_pairs, "pair_validity", "gate_pairs"), on="label", how="left",
                   maintain_order="left")
    if eval_pairs is not None and eval_pairs.height:
        out = out.join(_mean_by(eval_pairs, "pair_validity", "own_pairs"), on="label",
                       how="left", maintain_order="left")
    if candidates is not None and candidates.height:
        counts = candidates.group_by("arm", maintain_order=True).agg(
            (pl.col("written").str.len_chars() > 0).sum().alias("proposed"),
            pl.col("admitted").sum().alias("admitted")).rename({"arm": "label"})
        out = out.join(counts, on="label", how="left", maintain_order="left")
    for scores, value, name in ((test_main, "score", "test_main"),
                                (bigtom_u, "pair_validity", "bigtom_u")):
        if scores is not None and scores.height:
            out = out.join(_mean_by(scores, value, name), on="label", how="left",
                           maintain_order="left")
        else:
            out = out.with_columns(pl.lit(None, pl.Float64).alias(name),
                                   pl.lit(None, pl.UInt32).alias(f"{name}_seeds"))
    return out.with_columns(invalid_rules=pl.lit(None, pl.Float64))


def per_seed(final_scores: pl.DataFrame, candidates: pl.DataFrame | None = None,
             test_main: pl.DataFrame | None = None, bigtom_u: pl.DataFrame | None = None
             ) -> pl.DataFrame:
    """CogRSI Table 14: one row per loop arm and seed (Table 1's rows before the mean over
    seeds): the texts it proposed and admitted, Dev. (final-cohort accuracy, %, and its n),
    Test Main (the mean over the test benchmarks) and BigToM-U pair validity; the
    reference rows (no principle, expert) are left out. Inputs as :func:`table1`'s."""
    keys = ["label", "seed"]
    arms = final_scores.filter(~pl.col("label").is_in(list(REFERENCE_ROWS)))
    out = arms.group_by(keys, maintain_order=True).agg(
        (pl.col("correct").cast(pl.Float64).mean() * 100).alias("dev"),
        pl.len().alias("dev_n"))
    if candidates is not None and candidates.height:
        counts = candidates.group_by(["arm", "seed"], maintain_order=True).agg(
            (pl.col("written").str.len_chars() > 0).sum().alias("proposed"),
            pl.col("admitted").sum().alias("admitted")).rename({"arm": "label"})
        out = out.join(counts, on=keys, how="left", maintain_order="left")
    for scores, value, name in ((test_main, "score", "test_main"),
                                (bigtom_u, "pair_validity", "bigtom_u")):
        if scores is not None and scores.height:
            per = scores.group_by(keys, maintain_order=True).agg(pl.col(value).mean()
                                                                 .alias(name))
            out = out.join(per, on=keys, how="left", maintain_order="left")
        else:
            out = out.with_columns(pl.lit(None, pl.Float64).alias(name))
    return out.sort(keys)


def comparisons(final_scores: pl.DataFrame, pairs: Sequence[tuple[str, str]],
                n_resamples: int = 2000) -> pl.DataFrame:
    """A - B on the final cohort, in points, pooling seeds (cluster: seed and story)."""
    rows = []
    for a, b in pairs:
        da = final_scores.filter(pl.col("label") == a).select("seed", "item_id", "story_id",
                                                              pl.col("correct").alias("a"))
        db = final_scores.filter(pl.col("label") == b).select("seed", "item_id",
                                                              pl.col("correct").alias("b"))
        j = da.join(db, on=["seed", "item_id"], how="inner", maintain_order="left")
        if j.height == 0:
            continue
        res = paired_bootstrap(j["a"].cast(pl.Float64).to_numpy() * 100,
                               j["b"].cast(pl.Float64).to_numpy() * 100,
                               (j["seed"].cast(pl.Utf8) + "/" + j["story_id"]).to_list(),
                               n_resamples=n_resamples)
        rows.append({"a": a, "b": b, "n": j.height, "seeds": j["seed"].n_unique(),
                     "diff": res.estimate, "low": res.low, "high": res.high,
                     "p_value": res.p_value})
    schema = {"a": pl.Utf8, "b": pl.Utf8, "n": pl.Int64, "seeds": pl.Int64, "diff": pl.Float64,
              "low": pl.Float64, "high": pl.Float64, "p_value": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def audit_candidates(candidates: pl.DataFrame) -> pl.DataFrame:
    """Every text a candidate that reached registration wrote, as the audit's rules file
    (``cogrsi_lib.audit.rules``: rule_id, text, arm, seed, round, admitted, trial_gain)."""
    return (candidates.filter(pl.col("written").str.len_chars() > 0)
            .select(pl.format("{}/s{}/r{}/c{}", "arm", "seed", "round", "candidate")
                    .alias("rule_id"),
                    pl.col("written").alias("text"), "arm", "seed", "round", "admitted",
                    pl.col("mean_gain").alias("trial_gain"))
            .sort(["arm", "seed", "round", "rule_id"]))
