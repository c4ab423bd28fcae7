"""Benchmark reports: item counts, constant-answer baselines, the per-benchmark results table,
and the deviations of each benchmark's protocols from its release.

The results table has one column per main benchmark and "Main", the mean over the eight
(CogRSI §3: "Main is the mean over the eight benchmarks"); Main is left empty unless all
eight are present.  Later stages fill it with :func:`results_table` from per-system scores;
:func:`results_template` gives the empty table.  Beside every benchmark the best constant
reply is reported (CogRSI Table 22 note: a constant "No" can score 100% on a column).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from cogrsi_lib.bench.protocol import PROTOCOLS
from cogrsi_lib.bench.registry import MAIN_BENCHMARKS, data_root, get, judge_all, load, names
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.bench.scoring import (
    Judgement,
    best_constant,
    constant_candidates,
    judgements_frame,
)

__all__ = [
    "Evaluation",
    "benchmark_table",
    "constant_baselines",
    "constant_reply",
    "counts_by_benchmark",
    "counts_by_type",
    "deviations_markdown",
    "deviations_table",
    "readme_with_deviations",
    "evaluate",
    "load_available",
    "main_score",
    "results_table",
    "results_template",
]


@dataclass(frozen=True)
class Evaluation:
    """One system's replies on one benchmark, judged under one protocol."""

    benchmark: str
    judgements: list[Judgement]
    summary: dict[str, float]
    units: pl.DataFrame
    records: pl.DataFrame
    protocol: str = "uniform"


def evaluate(name: str, items: Sequence[Item], responses: Mapping[str, str | Sequence[str]],
             protocol: str = "uniform") -> Evaluation:
    """Judge ``responses`` (item id -> reply, or one reply per view of the protocol) under
    ``protocol``; summary, headline rows and per-item records.  A missing reply is wrong."""
    proto = get(name).protocol(protocol)
    judgements = judge_all(name, items, responses, protocol)
    records = judgements_frame(items, judgements).with_columns(protocol=pl.lit(protocol))
    return Evaluation(name, judgements, proto.summarize(items, judgements),
                      proto.units(items, judgements), records, protocol)


def load_available(selected: Iterable[str] | None = None) -> dict[str, list[Item]]:
    """Every selected benchmark whose files are present, loaded (others skipped). With no
    selection: those present in the project's data (``data/benchmarks``), so that what is
    loaded depends on the project's files alone; a sample read from the shared folder (not
    shipped, e.g. Percept-ToMi) is loaded only when named."""
    if selected is None:
        return {n: load(n) for n in names() if get(n).is_available(data_root())}
    return {n: load(n) for n in selected if get(n).is_available()}


def counts_by_benchmark(loaded: Mapping[str, Sequence[Item]]) -> pl.DataFrame:
    """Questions, units and question types per benchmark, with suites and sample kind."""
    rows = []
    for name, items in loaded.items():
        bench = get(name)
        rows.append({
            "benchmark": bench.title, "name": name, "suites": ", ".join(bench.suites),
            "unit": bench.unit, "sample": bench.sample, "n_questions": len(items),
            "n_units": len({it.story_id for it in items}),
            "n_question_types": len({it.question_type for it in items}),
        })
    return pl.DataFrame(rows, schema={
        "benchmark": pl.Utf8, "name": pl.Utf8, "suites": pl.Utf8, "unit": pl.Utf8,
        "sample": pl.Utf8, "n_questions": pl.Int64, "n_units": pl.Int64,
        "n_question_types": pl.Int64})


def counts_by_type(loaded: Mapping[str, Sequence[Item]]) -> pl.DataFrame:
    """Questions and units per benchmark and question type."""
    frames = [
        pl.DataFrame({"benchmark": [get(n).title] * len(items),
                      "question_type": [it.question_type for it in items],
                      "story_id": [it.story_id for it in items]})
        for n, items in loaded.items() if items
    ]
    if not frames:
        return pl.DataFrame(schema={"benchmark": pl.Utf8, "question_type": pl.Utf8,
                                    "n_questions": pl.UInt32, "n_units": pl.UInt32})
    return (pl.concat(frames)
            .group_by("benchmark", "question_type", maintain_order=True)
            .agg(pl.len().alias("n_questions"), pl.col("story_id").n_unique().alias("n_units")))


def constant_reply(item: Item, constant: str) -> str:
    """What a system that always answers ``constant`` replies to ``item``.

    On a multiple-choice item whose option text or label is ``constant`` (say "No", or "b"),
    it picks that option, written ``X)``, a form every option rule here reads (BigToM's
    release reads only that form); otherwise the constant itself.
    """
    for label, text in item.options:
        if text.strip().lower() == constant.strip().lower() or label == constant.strip():
            return f"{label})"
    return constant


def constant_baselines(name: str, items: Sequence[Item], top: int = 3,
                       protocol: str = "uniform") -> pl.DataFrame:
    """For every metric of the benchmark under ``protocol``, the constant reply that scores
    best, and its score.

    Candidates: "Yes", "No", every option label, and the ``top`` most common free-text gold
    answers (see :func:`constant_reply`); the constant is given to every view the protocol
    asks (so under shuffled options a constant letter names different options).  A metric a
    constant can max out is not evidence of reasoning.
    """
    bench = get(name)
    proto = bench.protocol(protocol)

    def replies(it: Item, c: str) -> list[str]:
        return [constant_reply(view, c) for view in proto.present(it)]

    by_constant = {
        c: proto.summarize(items, [proto.score(it, replies(it, c)) for it in items])
        for c in constant_candidates(items, top)
    }
    best = best_constant(by_constant)
    rows = [{"benchmark": bench.title, "protocol": protocol, "metric": metric, "constant": c,
             "score": v}
            for metric, (c, v) in sorted(best.items(), key=lambda kv: (kv[0] != "score", kv[0]))]
    return pl.DataFrame(rows, schema={"benchmark": pl.Utf8, "protocol": pl.Utf8,
                                      "metric": pl.Utf8, "constant": pl.Utf8,
                                      "score": pl.Float64})


def deviations_table(selected: Iterable[str] | None = None) -> pl.DataFrame:
    """Every protocol's deviations from its benchmark's release, from the registry:
    benchmark, protocol, release followed, aspect, what the release does, what is done here,
    and whether the release's code is broken there (its intent followed instead)."""
    rows = []
    for name in (list(selected) if selected is not None else names()):
        bench = get(name)
        for protocol in PROTOCOLS:
            proto = bench.protocol(protocol)
            for d in proto.deviations:
                rows.append({"benchmark": bench.title, "protocol": protocol,
                             "release": proto.release, "aspect": d.aspect,
                             "release_does": d.release, "here": d.here, "broken": d.broken})
    return pl.DataFrame(rows, schema={"benchmark": pl.Utf8, "protocol": pl.Utf8,
                                      "release": pl.Utf8, "aspect": pl.Utf8,
                                      "release_does": pl.Utf8, "here": pl.Utf8,
                                      "broken": pl.Boolean})


def deviations_markdown(selected: Iterable[str] | None = None) -> str:
    """:func:`deviations_table` as a Markdown table (the bench README's copy)."""
    table = deviations_table(selected)
    lines = ["| benchmark | protocol | aspect | the release | here |", "|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        here = r["here"] + (" (release bug: its intent followed)" if r["broken"] else "")
        cells = [r["benchmark"], r["protocol"], r["aspect"], r["release_does"], here]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def main_score(scores: Mapping[str, float]) -> float:
    """Main: the mean headline over the eight main benchmarks; NaN unless all are present."""
    values = [scores.get(n) for n in MAIN_BENCHMARKS]
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
        return float("nan")
    return sum(values) / len(values)  # type: ignore[arg-type]


def _columns() -> list[str]:
    return [get(n).title for n in MAIN_BENCHMARKS]


def results_table(scores: pl.DataFrame) -> pl.DataFrame:
    """Wide table from long ``system, benchmark (name), score``: one column per main
    benchmark (in paper order) and Main; other benchmarks are ignored."""
    titles = {n: get(n).title for n in MAIN_BENCHMARKS}
    systems = list(dict.fromkeys(scores["system"].to_list()))
    rows = []
    for system in systems:
        sub = scores.filter(pl.col("system") == system)
        per = dict(zip(sub["benchmark"].to_list(), sub["score"].to_list(), strict=True))
        row: dict[str, object] = {"system": system}
        row.update({titles[n]: per.get(n) for n in MAIN_BENCHMARKS})
        main = main_score(per)
        row["Main"] = None if math.isnan(main) else main
        rows.append(row)
    schema = {"system": pl.Utf8, **{c: pl.Float64 for c in _columns()}, "Main": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def results_template(systems: Sequence[str]) -> pl.DataFrame:
    """The empty results table for ``systems``, to be filled by later stages."""
    return results_table(pl.DataFrame({"system": list(systems), "benchmark": [None] * len(systems),
                                       "score": [None] * len(systems)},
                                      schema={"system": pl.Utf8, "benchmark": pl.Utf8,
                                              "score": pl.Float64}))


def benchmark_table(loaded: Mapping[str, Sequence[Item]]) -> pl.DataFrame:
    """Every registered benchmark: title, suites, sample kind, and whether it is loaded."""
    rows = []
    for n in names():
        bench = get(n)
        rows.append({"benchmark": bench.title, "name": n, "suites": ", ".join(bench.suites),
                     "sample": bench.sample, "loaded": n in loaded, "paper": bench.paper})
    return pl.DataFrame(rows)


README_START = "<!-- deviations: generated by `cogrsi bench deviations --update`; do not edit -->"
README_END = "<!-- /deviations -->"


def readme_with_deviations(text: str) -> str:
    """``text`` (the bench README) with the block between its deviation markers replaced by
    the current :func:`deviations_markdown`."""
    try:
        head, rest = text.split(README_START, 1)
        _, tail = rest.split(README_END, 1)
    except ValueError:
        raise ValueError(f"the README has no {README_START!r} ... {README_END!r} block") from None
    return f"{head}{README_START}\n{deviations_markdown()}{README_END}{tail}"
