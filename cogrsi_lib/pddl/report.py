"""Tables and a chart of the ladder, computed from the per-example records (PDDL-Mind Table 1,
Table 2, and the §4 failure analysis). The records name the ladder variant ``system``
(:data:`cogrsi_lib.pddl.ladder.RECORDS`); the tables call it ``variant``.

* :func:`ladder_table`: per source and variant, accuracy with the parse and verification
  rates, calls and tokens per example (Table 1 of the ladder);
* :func:`category_table`: accuracy per source, question category and variant (Table 2);
* :func:`paper_comparison`: the ladder beside the paper's Table 1;
* :func:`all_table`: FANToM's All metric beside its per-question accuracy;
* :func:`failure_table`: wrong answers by failure class (parsing/state vs reasoning, §4);
* :func:`availability_table`: which benchmark samples were present;
* :func:`cross_check_table`: oracle stories on which the executed gold actions reproduce the
  oracle's state at every event (must be all of them).
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import polars as pl

from cogrsi_lib.oracle.world import World
from cogrsi_lib.pddl.baselines import BASELINES
from cogrsi_lib.pddl.diagnosis import FAILURE_CLASSES
from cogrsi_lib.pddl.examples import BenchmarkSample
from cogrsi_lib.pddl.ladder import SYSTEMS
from cogrsi_lib.pddl.oracle_map import cross_check
from cogrsi_lib.stats import wilson_bounds

_ORDER = {v: i for i, v in enumerate(SYSTEMS)}
_VARIANT = pl.col("system").alias("variant")


def _sorted(df: pl.DataFrame, *keys: str) -> pl.DataFrame:
    return (df.with_columns(pl.col("variant").replace_strict(_ORDER, default=99).alias("_o"))
            .sort([*keys, "_o"]).drop("_o"))


def ladder_table(records: pl.DataFrame) -> pl.DataFrame:
    """One row per (source, variant)."""
    out = records.group_by("model", "source", _VARIANT, maintain_order=True).agg(
        pl.len().alias("n"),
        pl.col("score").mean().alias("accuracy"),
        (pl.col("parse_status") == "ok").mean().alias("answer_parsed"),
        (pl.col("problem_status") == "ok").mean().alias("problem_parsed"),
        (pl.col("actions_status") == "ok").mean().alias("actions_parsed"),
        pl.col("n_candidates").mean().alias("candidates"),
        pl.col("n_rejected").mean().alias("rejected"),
        pl.col("trace_correct").cast(pl.Float64).mean().alias("trace_correct"),
        pl.col("calls").mean().alias("calls_per_example"),
        pl.col("cached_calls").mean().alias("cached_per_example"),
        pl.col("prompt_tokens").mean().alias("prompt_tokens"),
        pl.col("completion_tokens").mean().alias("completion_tokens"),
    )
    return _sorted(out, "model", "source")


def category_table(records: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per (model, source, category, variant)."""
    out = records.group_by("model", "source", "category", _VARIANT, maintain_order=True).agg(
        pl.len().alias("n"), pl.col("score").mean().alias("accuracy"))
    return _sorted(out, "model", "source", "category")


def table2(records: pl.DataFrame) -> pl.DataFrame:
    """PDDL-Mind Table 2's layout: per model, source and question category, the accuracy of
    chain of thought, DWM and full PDDL-Mind side by side (a column for each that ran), with
    the items and each one's calls per example."""
    systems = [s for s in (*BASELINES, "full") if s in set(records["system"].to_list())]
    rows = records.filter(pl.col("system").is_in(systems))
    keys = ["model", "source", "category"]
    acc = rows.pivot(on="system", index=keys, values="score", aggregate_function="mean")
    calls = dict(rows.group_by("system",
                               maintain_order=True).agg(pl.col("calls").mean()).iter_rows())
    n = (rows.filter(pl.col("system") == systems[0]).group_by(keys, maintain_order=True)
         .agg(pl.len().alias("n")))
    out = n.join(acc, on=keys, maintain_order="left").select(*keys, "n", *systems)
    return out.with_columns(pl.lit(calls[s]).alias(f"calls_{s}") for s in systems).sort(keys)


#: PDDL-Mind Table 1 as its text gives it (accuracy, %, GPT-4o; the no-domain row is not in
#: the text); FANToM's figure is the per-question mean over Accessibility and Answerability
PAPER_TABLE1: dict[tuple[str, str], float] = {
    ("mmtom-qa", "no_verification"): 77.4, ("muma-tom", "no_verification"): 79.6,
    ("fantom", "no_verification"): 74.7, ("mmtom-qa", "full"): 88.3,
    ("muma-tom", "full"): 88.8, ("fantom", "full"): 80.0,
}
PAPER_MODEL = "GPT-4o"


def paper_comparison(table: pl.DataFrame) -> pl.DataFrame:
    """The ladder (:func:`ladder_table`) beside PDDL-Mind Table 1, row by row: this run's
    model and accuracy (%) and the paper's, where the paper reports the same benchmark and
    variant (oracle stories are this package's own: no paper figure)."""
    rows = []
    for r in table.iter_rows(named=True):
        paper = PAPER_TABLE1.get((r["source"], r["variant"]))
        rows.append({"source": r["source"], "variant": r["variant"], "n": r["n"],
                     "model": r["model"], "accuracy": 100.0 * r["accuracy"],
                     "paper_model": PAPER_MODEL if paper is not None else None,
                     "paper_accuracy": paper})
    return pl.DataFrame(rows, schema={
        "source": pl.Utf8, "variant": pl.Utf8, "n": pl.Int64, "model": pl.Utf8,
        "accuracy": pl.Float64, "paper_model": pl.Utf8, "paper_accuracy": pl.Float64})


def all_table(records: pl.DataFrame, sources: Sequence[str] = ("fantom",)) -> pl.DataFrame:
    """Per model, source and variant: the per-question accuracy and the All metric, the
    share of units (FANToM: question sets) whose every question is answered right
    (PDDL-Mind §4.1; the sample draws whole units,
    :data:`~cogrsi_lib.pddl.examples.WHOLE_UNITS`)."""
    keys = ["model", "source", "variant"]
    sub = records.filter(pl.col("source").is_in(list(sources))).with_columns(_VARIANT)
    per_unit = sub.group_by(*keys, "unit", maintain_order=True).agg(
        pl.len().alias("questions"), pl.col("correct").all().alias("solved"))
    acc = sub.group_by(keys, maintain_order=True).agg(pl.len().alias("n"),
                                                       pl.col("score").mean().alias("accuracy"))
    units = per_unit.group_by(keys, maintain_order=True).agg(
        pl.len().alias("units"), pl.col("solved").mean().alias("all"))
    return _sorted(acc.join(units, on=keys, maintain_order="left"), "model", "source")


def failure_table(records: pl.DataFrame) -> pl.DataFrame:
    """Wrong answers per (model, source, variant, failure class), with their share of the
    wrong."""
    wrong = records.filter(~pl.col("correct")).with_columns(_VARIANT)
    if wrong.is_empty():
        return pl.DataFrame(schema={"model": pl.Utf8, "source": pl.Utf8, "variant": pl.Utf8,
                                    "failure": pl.Utf8, "n": pl.UInt32, "share": pl.Float64})
    out = (wrong.group_by("model", "source", "variant", "failure", maintain_order=True)
           .agg(pl.len().alias("n")))
    out = out.with_columns(
        (pl.col("n") / pl.col("n").sum().over("model", "source", "variant")).alias("share"),
        pl.col("failure").replace_strict({f: i for i, f in enumerate(FAILURE_CLASSES)},
                                         default=99).alias("_f"),
    )
    return _sorted(out, "model", "source", "_f").drop("_f")


def cross_check_table(worlds: Sequence[World]) -> pl.DataFrame:
    """Per oracle story: events, gold actions' mismatches with the oracle (0 everywhere)."""
    rows = []
    for i, w in enumerate(worlds):
        mism = cross_check(w)
        rows.append({"world": i, "events": len(w.events), "mismatches": len(mism),
                     "first": str(mism[0]) if mism else ""})
    return pl.DataFrame(rows, schema={"world": pl.Int64, "events": pl.Int64,
                                      "mismatches": pl.Int64, "first": pl.Utf8})


def availability_table(samples: Sequence[BenchmarkSample]) -> pl.DataFrame:
    """Which benchmark samples were found, how many examples each gave, and why not."""
    return pl.DataFrame(
        {"benchmark": [s.name for s in samples], "available": [s.available for s in samples],
         "examples": [len(s.examples) for s in samples], "note": [s.note for s in samples]},
        schema={"benchmark": pl.Utf8, "available": pl.Boolean, "examples": pl.Int64,
                "note": pl.Utf8})


def ladder_chart(table: pl.DataFrame) -> alt.FacetChart:
    """Accuracy by variant (and model, when several) with its 95% Wilson interval and n,
    one panel per source."""
    data = table.select("model", "source", "variant", "accuracy", "n")
    lows, highs = wilson_bounds(data["accuracy"].to_list(), data["n"].to_list())
    several = data["model"].n_unique() > 1
    data = data.with_columns(pl.Series("low", lows, dtype=pl.Float64),
                             pl.Series("high", highs, dtype=pl.Float64),
                             label="n=" + pl.col("n").cast(pl.Utf8),
                             row=(pl.col("variant") + " · " + pl.col("model")) if several
                             else pl.col("variant"))
    order = [f"{v} · {m}" for v in SYSTEMS for m in data["model"].unique(maintain_order=True)]
    base = alt.Chart(data).encode(
        y=alt.Y("row:N", sort=order if several else list(SYSTEMS), title=None),
        color=alt.Color("variant:N", sort=list(SYSTEMS), legend=None))
    rule = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title="accuracy (95% Wilson interval)",
                scale=alt.Scale(domain=[0, 1])), x2="high:Q")
    point = base.mark_point(filled=True, size=70).encode(
        x="accuracy:Q", tooltip=["model", "source", "variant", "accuracy", "low", "high", "n"])
    n_text = base.mark_text(align="left", dx=6, dy=-9, fontSize=10).encode(
        x="accuracy:Q", text="label:N")
    return ((rule + point + n_text).properties(width=280, height=alt.Step(30))
            .facet(row=alt.Row("source:N", title=None))
            .properties(title="PDDL-Mind's ladder and Table 2's baselines, by system"))
