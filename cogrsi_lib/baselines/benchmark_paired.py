"""Paired differences per benchmark, Holm-corrected over the benchmarks (CogRSI Tables 4, 26).

Table 4 sets the reader against SC (k=9), its equal-token baseline, on each benchmark; Table 26
against each benchmark's strongest baseline. Both pair the two systems' scores on the same
items of the same run, resample stories (every run's items of a story together, as the paper
pools its three runs) and correct over the benchmarks of one comparison with Holm's method
(CogRSI §3, App. E.3). :func:`paired_by_benchmark` takes the records of ``reader_eval``.

A baseline is any system that is not the reader or one of its variants (:func:`is_baseline`);
the strongest baseline of a benchmark is the one with the highest mean score there, per model.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from cogrsi_lib.stats import holm, paired_bootstrap, with_power

#: the reader and its variants (ablations, CogRSI-L) share this prefix; every other system is
#: a baseline
READER_PREFIX = "cogrsi"
#: Table 26's reference, chosen per model and benchmark
STRONGEST = "strongest"
_ON = ["item_id", "story_id", "run"]
_TALLY = {"win": "wins", "tie": "ties", "loss": "losses"}


def is_baseline(system: str) -> bool:
    return not system.startswith(READER_PREFIX)


def strongest_baseline(items: pl.DataFrame, benchmark: str, exclude: str) -> str | None:
    """The baseline with the highest mean score on ``benchmark`` in ``items`` (one model's
    records); ties go to the name first in sort order. None when no baseline ran there."""
    rows = items.filter((pl.col("source") == benchmark) & (pl.col("system") != exclude))
    baselines = [s for s in rows["system"].unique() if is_baseline(s)]
    means = (rows.filter(pl.col("system").is_in(baselines))
             .group_by("system", maintain_order=True).agg(pl.col("score").mean())
             .sort(["score", "system"], descending=[True, False]))
    return means["system"][0] if means.height else None


def _compare(items: pl.DataFrame, source: str, system: str, reference: str,
             n_resamples: int, seed: int) -> dict | None:
    rows = items.filter(pl.col("source") == source)
    a = rows.filter(pl.col("system") == system).select(*_ON, pl.col("score").alias("a"))
    b = rows.filter(pl.col("system") == reference).select(*_ON, pl.col("score").alias("b"))
    g = a.join(b, on=_ON, how="inner", maintain_order="left").drop_nulls(["a", "b"])
    if g.height == 0:
        return None
    r = paired_bootstrap(g["a"].to_numpy() * 100, g["b"].to_numpy() * 100,
                         g["story_id"].to_list(), n_resamples=n_resamples, seed=seed)
    return {"benchmark": source, "system": system, "reference": reference,
            "items": g.height, "stories": g["story_id"].n_unique(),
            "runs": g["run"].n_unique(), "system_score": float(g["a"].mean()) * 100,
            "reference_score": float(g["b"].mean()) * 100, "difference": r.estimate,
            "low": r.low, "high": r.high, "p_value": r.p_value}


def paired_by_benchmark(items: pl.DataFrame, system: str, reference: str,
                        benchmarks: Sequence[str], n_resamples: int = 2000, seed: int = 0
                        ) -> pl.DataFrame:
    """Per model and benchmark: ``system`` minus ``reference`` in points (``reference`` a
    system name, or :data:`STRONGEST` for each benchmark's strongest baseline), the 95% paired
    interval over stories, p-value, Holm's correction over the benchmarks of the model, power
    (``mde``, ``underpowered``) and the verdict before and after Holm: ``win`` or ``loss``
    where the interval (the Holm-adjusted p-value) excludes no difference and the row is not
    underpowered (a few items, or one story, give a degenerate interval), else ``tie``.
    Benchmarks where either system has no record are left out."""
    out = []
    models = items["model"].unique(maintain_order=True).to_list() if items.height else []
    for model in models:
        own = items.filter(pl.col("model") == model)
        rows = []
        for bench in benchmarks:
            ref = strongest_baseline(own, bench, system) if reference == STRONGEST else reference
            row = _compare(own, bench, system, ref, n_resamples, seed) if ref else None
            if row is not None:
                rows.append(row)
        if not rows:
            continue
        table = pl.DataFrame(rows)
        corrected = holm(dict(zip(table["benchmark"], table["p_value"], strict=True)))
        table = table.join(corrected.select("hypothesis", "p_holm", "reject"),
                           left_on="benchmark", right_on="hypothesis", how="left",
                           maintain_order="left")
        out.append(table.select(pl.lit(model).alias("model"), pl.all()))
    if not out:
        return pl.DataFrame()
    sign = pl.when(pl.col("difference") > 0).then(pl.lit("win")).otherwise(pl.lit("loss"))
    table = with_power(pl.concat(out), "difference", "items")
    one_story = pl.col("stories") < 2  # resamples to itself: an interval without width
    table = table.with_columns(
        underpowered=pl.col("underpowered") | one_story,
        power_note=pl.when(one_story & (pl.col("power_note") == ""))
        .then(pl.lit("one story")).otherwise(pl.col("power_note")))
    powered = ~pl.col("underpowered")
    return table.with_columns(
        verdict=pl.when(((pl.col("low") > 0) | (pl.col("high") < 0)) & powered).then(sign)
        .otherwise(pl.lit("tie")),
        verdict_holm=pl.when(pl.col("reject") & powered).then(sign).otherwise(pl.lit("tie")),
    ).drop("reject")


def verdict_counts(table: pl.DataFrame) -> pl.DataFrame:
    """Per model: wins, ties and losses over the benchmarks, before and after Holm (the
    paper's "wins 2, ties 5 and loses 1 of 8, and after Holm 0 and 0")."""
    if table.height == 0:
        return pl.DataFrame()
    parts = []
    for column, when in (("verdict", "uncorrected"), ("verdict_holm", "Holm")):
        parts.append(table.group_by("model", maintain_order=True).agg(
            pl.lit(when).alias("correction"), pl.len().alias("benchmarks"),
            *[(pl.col(column) == v).sum().alias(name) for v, name in _TALLY.items()]))
    return pl.concat(parts)
