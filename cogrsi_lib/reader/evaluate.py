"""Evaluate the reader and its baselines on pairs and benchmark samples (CogRSI §5.1, App. G).

One concept: turn counterfactual pair records (the oracle's evaluation split) and benchmark
items into :class:`ReaderItem` s, run a list of systems on them with one shared backend, and
return one row per (system, item) as a polars frame. Pair versions are scored against the
oracle's gold and give pair validity per system (a pair counts only if both versions are
right, CogRSI §3); benchmark items are scored by each benchmark's own rule. An unparsed
answer is always wrong. The tables (accuracy, pair validity, calls and tokens, throughput)
and the cost-accuracy figure are computed from those rows, never typed in (G.7).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cogrsi_lib.matrix import by_model, over_runs, per_cell
from cogrsi_lib.pairs.validity import PairValidity, pair_validity
from cogrsi_lib.reader.items import ReaderItem, from_bench_item
from cogrsi_lib.reader.records import ITEM_COLUMNS
from cogrsi_lib.reader.report import accuracy_table, cost_table
from cogrsi_lib.reader.system import System
from cogrsi_lib.reader.system import run_systems as answer_all
from cogrsi_lib.records_schema import RecordSchema
from cogrsi_lib.stats import chance_table, holm, paired_bootstrap, with_power

PAIRS = "pairs"
_META = ("source", "benchmark", "pair_id", "side", "form", "variant", "question_type")
#: reader_eval's records (``records.parquet``): the core, the reader's columns, the item's
#: pair or benchmark, its score by the source's own rule and its text
RECORDS = RecordSchema("reader_eval", {
    **ITEM_COLUMNS, **dict.fromkeys(_META[1:], pl.Utf8), "score": pl.Float64,
    "story": pl.Utf8, "question": pl.Utf8, "options_json": pl.Utf8,
})


def pair_items(records: pl.DataFrame) -> list[ReaderItem]:
    """One item per pair version, id ``<pair_id>/<side>``, story id the pair id; dialogue
    versions are conversations whose questioned character is the pair's target. The meta
    keeps the version's oracle world and question as JSON (``world_json``,
    ``question_json``), for systems that read the world itself (a symbolic reader)."""
    out = []
    for r in records.iter_rows(named=True):
        dialogue = r["form"] == "dialogue"
        out.append(ReaderItem(
            item_id=f"{r['pair_id']}/{r['side']}",
            context=r["story"],
            question=r["question"],
            options=tuple(r["options"]),
            gold=r["gold"],
            story_id=r["pair_id"],
            kind="conversation" if dialogue else "narrative",
            character=r["target"] if dialogue else None,
            meta={"source": PAIRS, "pair_id": r["pair_id"], "side": r["side"],
                  "form": r["form"], "variant": r["variant"], "pair_kind": r["kind"],
                  "world_json": r["world_json"], "question_json": r["question_json"]},
        ))
    return out


def bench_items(items: Sequence[Any], source: str | None = None) -> list[ReaderItem]:
    """Benchmark items (:class:`cogrsi_lib.bench.schema.Item`) as reader items whose source
    is ``source`` (default: the item's benchmark)."""
    return [from_bench_item(it).with_meta(source=source or str(it.benchmark)) for it in items]


def select_pairs(records: pl.DataFrame, n_pairs: int) -> pl.DataFrame:
    """Both versions of ``n_pairs`` pairs, taken in turn from each form and variant (the
    first pair of each variant, alternating forms, then the second, ...) so a small setting
    still covers both forms and many variants; ``n_pairs <= 0`` selects none."""
    a = records.filter(pl.col("side") == "a").with_row_index("_order")
    first = (a.group_by(["form", "variant"], maintain_order=True)
             .agg(pl.col("_order").min().alias("_first")))
    first = first.with_columns(_v=pl.col("_first").rank("ordinal").over("form"))
    firsts = (a.join(first, on=["form", "variant"], maintain_order="left")
              .with_columns(_rank=pl.col("_order").rank("ordinal").over(["form", "variant"]))
              .sort(["_rank", "_v", "form"]).head(max(0, n_pairs)).select("pair_id"))
    return records.join(firsts, on="pair_id", how="semi", maintain_order="left")


def load_bench_heads(
    names: Sequence[str] | None, n: int
) -> tuple[dict[str, list[Any]], list[str]]:
    """The first ``n`` items of each benchmark whose files are present (``names=None``: all
    registered), and the names skipped because their files are absent."""
    from cogrsi_lib import bench

    loaded: dict[str, list[Any]] = {}
    skipped: list[str] = []
    for name in names if names is not None else bench.names():
        if n <= 0:
            break
        if not bench.available(name):
            skipped.append(name)
            continue
        loaded[name] = bench.load(name)[:n]
    return loaded, skipped


def _judge(name: str, item: Any, answer: str | None) -> Any:
    """Benchmark ``name``'s own verdict on a system's final answer: an option label, the
    chosen text of a closed answer set (``item.choices``), or the free-text answer; an
    unparsed answer is judged as an empty reply (wrong)."""
    from cogrsi_lib import bench
    from cogrsi_lib.llm.parsing import option_letters

    choices = tuple(item.choices)
    if choices and answer in option_letters(len(choices)):
        answer = choices[option_letters(len(choices)).index(answer)]
    return bench.get(name).judge(item, answer or "")


def item_score(item: ReaderItem, record: Any) -> float:
    """A record's score by its item's rule: a benchmark item's own verdict on the answer (its
    original in ``meta["original"]``, judged by the benchmark named by ``meta["source"]``,
    else by its own benchmark), any other item 1 when the answer is its gold, else 0."""
    original = item.meta.get("original")
    if original is None:
        return 1.0 if record.correct else 0.0
    name = str(item.meta.get("source") or original.benchmark)
    return float(_judge(name, original, record.answer).value)


@dataclass
class ReaderEval:
    """Per-item rows of every system, with pair validity per system and timings."""

    items: pl.DataFrame
    pair_records: pl.DataFrame
    bench: Mapping[str, list[Any]] = field(default_factory=dict)
    wall_s: dict[str, float] = field(default_factory=dict)
    run: int = 0

    @property
    def systems(self) -> list[str]:
        return list(dict.fromkeys(self.items["system"].to_list()))

    def pair_validity(self) -> dict[str, PairValidity]:
        """Pair validity of each system on the pair records it answered."""
        out = {}
        rows = self.items.filter(pl.col("source") == PAIRS)
        for system in self.systems:
            preds = (rows.filter(pl.col("system") == system)
                     .select("pair_id", "side", pl.col("answer_text").alias("answer")))
            out[system] = pair_validity(self.pair_records, preds)
        return out

    def pair_validity_table(self) -> pl.DataFrame:
        """Per system: item accuracy and pair validity overall, by form and by variant."""
        if self.pair_records.height == 0:
            return pl.DataFrame()
        parts = [v.table().select(pl.lit(s).alias("system"), pl.all())
                 for s, v in self.pair_validity().items()]
        return pl.concat(parts)

    def accuracy_table(self) -> pl.DataFrame:
        """Per system and source: accuracy (gold match; unparsed is wrong), the benchmark's
        own per-item score, unparsed answers and reader events."""
        parts = []
        for source in dict.fromkeys(self.items["source"].to_list()):
            rows = self.items.filter(pl.col("source") == source)
            score = (rows.group_by("system", maintain_order=True)
                     .agg(pl.col("score").mean().alias("score")))
            parts.append(accuracy_table(rows)
                         .join(score, on="system", how="left", maintain_order="left")
                         .select(pl.lit(source).alias("source"), pl.all()))
        return pl.concat(parts) if parts else pl.DataFrame()

    def chance_table(self, n_resamples: int = 2000, seed: int = 0) -> pl.DataFrame:
        """Per system, over every multiple-choice item: accuracy against chance with a
        95% interval bootstrapped over stories, and the verdict (near chance, above, below)."""
        return chance_table(self.items, ["system"], n_resamples, seed)

    def paired_table(self, reference: str, n_resamples: int = 2000, seed: int = 0
                     ) -> pl.DataFrame:
        """Each system's score minus ``reference``'s on the same items (of the same run): the
        paired bootstrap over stories (CogRSI §3, E.3), its 95% interval, p-value and Holm's
        correction, the minimum detectable effect and the ``underpowered`` mark
        (:mod:`cogrsi_lib.stats.power`); ``significant`` is Holm-rejected and not
        underpowered."""
        on = ["source", "item_id", "story_id", "run"]
        base = self.items.filter(pl.col("system") == reference).select(
            *on, pl.col("score").alias("ref"))
        rows, pvals = [], {}
        for system in self.systems:
            if system == reference:
                continue
            g = self.items.filter(pl.col("system") == system).join(base, on=on, how="inner",
                                                                   maintain_order="left")
            if g.height == 0:
                continue
            r = paired_bootstrap(g["score"].to_numpy(), g["ref"].to_numpy(),
                                 g["story_id"].to_list(), n_resamples=n_resamples, seed=seed)
            rows.append({"system": system, "reference": reference, "items": g.height,
                         "difference": r.estimate, "low": r.low, "high": r.high,
                         "p_value": r.p_value})
            pvals[system] = r.p_value
        table = pl.DataFrame(rows) if rows else pl.DataFrame()
        if rows:
            corrected = holm(pvals).select("hypothesis", "p_holm", "reject")
            table = table.join(corrected, left_on="system", right_on="hypothesis", how="left",
                               maintain_order="left")
            table = with_power(table, "difference", "items").with_columns(
                (pl.col("reject") & ~pl.col("underpowered")).alias("significant")
            ).drop("reject")
        return table

    def bench_table(self) -> pl.DataFrame:
        """Per system and benchmark: the headline score under the benchmark's ``uniform``
        protocol (the package's prompt, the benchmark's scorer)."""
        from cogrsi_lib import bench

        out = []
        for name, items in self.bench.items():
            for system in self.systems:
                rows = self.items.filter((pl.col("source") == name)
                                         & (pl.col("system") == system))
                answers = dict(zip(rows["item_id"], rows["answer"], strict=True))
                judgements = [_judge(name, it, answers.get(str(it.id))) for it in items]
                summary = bench.get(name).summarize(list(items), judgements)
                out.append({"system": system, "benchmark": name, "protocol": "uniform",
                            "questions": len(items), "score": summary["score"],
                            "malformed": sum(j.malformed for j in judgements)})
        return pl.DataFrame(out) if out else pl.DataFrame()

    def cost_table(self) -> pl.DataFrame:
        """Calls and tokens per question and token ratio against SC k=6, overall and per
        source (the paper: the reader makes 7.3 calls and 1.51x the tokens of SC k=6)."""
        parts = [cost_table(self.items).select(pl.lit("all").alias("source"), pl.all())]
        for source in dict.fromkeys(self.items["source"].to_list()):
            rows = self.items.filter(pl.col("source") == source)
            parts.append(cost_table(rows).select(pl.lit(source).alias("source"), pl.all()))
        return pl.concat(parts, how="diagonal_relaxed")

    def throughput_table(self) -> pl.DataFrame:
        """Per system: wall time, questions per minute, completion tokens per second (calls
        served from the completion cache make a rerun faster than the model)."""
        t = (self.items.group_by("system", maintain_order=True)
             .agg(pl.len().alias("questions"), pl.col("completion_tokens").sum(),
                  pl.col("calls").sum(), pl.col("cached_calls").sum()))
        wall = pl.DataFrame({"system": list(self.wall_s), "wall_s": list(self.wall_s.values())})
        return (t.join(wall, on="system", how="left", maintain_order="left")
                .with_columns(q_per_min=pl.col("questions") * 60 / pl.col("wall_s"),
                              completion_tokens_per_s=pl.col("completion_tokens")
                              / pl.col("wall_s"))
                .sort("system"))

    def cost_accuracy(self) -> pl.DataFrame:
        """Per system and source: tokens and calls per question against score."""
        acc = self.accuracy_table().select("source", "system", "score", "accuracy")
        cost = self.cost_table().select("source", "system", "calls_per_q", "tokens_per_q")
        return acc.join(cost, on=["source", "system"], how="inner", maintain_order="left")

    def cost_accuracy_chart(self) -> Any:
        """Accuracy against tokens per question, one point per system over every
        multiple-choice item, with its 95% interval over stories, n, and the mean chance
        level as a dashed line (altair; per source in the ``cost_accuracy`` table)."""
        return cost_accuracy_chart(self.chance_table(), self.cost_table())


def cost_accuracy_chart(chance: pl.DataFrame, cost: pl.DataFrame) -> Any:
    """The cost-accuracy figure from a chance table and a cost table (both per system, or
    per model and system: then each point is labelled with its model)."""
    import altair as alt

    keys = ["model", "system"] if "model" in chance.columns else ["system"]
    cost = cost.filter(pl.col("source") == "all").select(*keys, "tokens_per_q")
    label = pl.col("system")
    if "model" in keys and chance["model"].n_unique() > 1:
        label = label + " · " + pl.col("model")
    data = (chance.join(cost, on=keys, how="inner", maintain_order="left")
            .with_columns(label=label + " (n=" + pl.col("items").cast(pl.Utf8) + ")"))
    x = alt.X("tokens_per_q:Q", title="tokens per question (prompt + reply, all calls)",
              scale=alt.Scale(zero=True))
    y_title, y_scale = "accuracy (unparsed is wrong), 95% interval", alt.Scale(domain=[0, 1])
    base = alt.Chart(data).encode(x=x, color=alt.Color(
        "label:N", title="system (n)", legend=alt.Legend(orient="right", labelLimit=240)))
    bars = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y("low:Q", title=y_title, scale=y_scale), y2="high:Q")
    points = base.mark_point(filled=True, size=70).encode(
        y="accuracy:Q", tooltip=[*keys, "items", "accuracy", "low", "high", "chance",
                                 "tokens_per_q"])
    level = float(data["chance"].mean()) if data.height else 0.0
    line = alt.Chart(alt.Data(values=[{"chance": level}])).mark_rule(
        strokeDash=[4, 4], color="#888").encode(y="chance:Q")
    note = alt.Chart(alt.Data(values=[{"chance": level, "t": "chance"}])).mark_text(
        align="left", dx=4, dy=-6, x=0, fontSize=10, color="#666").encode(
        y="chance:Q", text="t:N")
    return (line + note + bars + points).properties(
        width=380, height=260, title="Cost and accuracy per system (CogRSI §5.1)")


@dataclass
class ReaderRuns:
    """``reader_eval`` over models × runs (:mod:`cogrsi_lib.matrix`): one :class:`ReaderEval`
    per cell, with its model's name. Scores come per run and over runs (mean, run-to-run SD,
    range: :meth:`accuracy_table`, :meth:`bench_table`, :meth:`pair_validity_table`); intervals
    and paired differences pool each model's runs, resampling stories with every run's items
    of the story (:meth:`chance_table`, :meth:`paired_table`), as CogRSI pools three runs per
    system (Table 26)."""

    cells: list[tuple[str, ReaderEval]]

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(m for m, _ in self.cells))

    @property
    def items(self) -> pl.DataFrame:
        """Every cell's records (a record without a sample gets its cell's model)."""
        return pl.concat([r.items.with_columns(pl.col("model").fill_null(m))
                          for m, r in self.cells])

    def pooled(self, model: str) -> ReaderEval:
        """``model``'s runs as one evaluation (for intervals and paired differences)."""
        runs = [r for m, r in self.cells if m == model]
        wall: dict[str, float] = {}
        for r in runs:
            for k, v in r.wall_s.items():
                wall[k] = wall.get(k, 0.0) + v
        return ReaderEval(pl.concat([r.items for r in runs]), runs[0].pair_records,
                          runs[0].bench, wall)

    def per_run(self, table: Callable[[ReaderEval], pl.DataFrame]) -> pl.DataFrame:
        """``table`` of every cell, with ``model`` and ``run`` first."""
        return per_cell([(m, r.run, r) for m, r in self.cells], table)

    def per_model(self, table: Callable[[ReaderEval], pl.DataFrame]) -> pl.DataFrame:
        """``table`` of each model's pooled runs, with ``model`` first."""
        return by_model([(m, table(self.pooled(m))) for m in self.models])

    def accuracy_table(self) -> pl.DataFrame:
        """Per model, source and system: accuracy and score over the runs."""
        return over_runs(self.per_run(ReaderEval.accuracy_table),
                         ["model", "source", "system", "questions"], ["accuracy", "score"])

    def bench_table(self) -> pl.DataFrame:
        """Per model, system and benchmark: the uniform protocol's headline over the runs."""
        return over_runs(self.per_run(ReaderEval.bench_table),
                         ["model", "system", "benchmark", "protocol", "questions"], ["score"])

    def pair_validity_table(self) -> pl.DataFrame:
        """Per model and system: item accuracy and pair validity over the runs."""
        return over_runs(self.per_run(ReaderEval.pair_validity_table),
                         ["model", "system", "split", "form", "variant", "kind", "n_pairs"],
                         ["item_accuracy", "pair_validity"])

    def chance_table(self) -> pl.DataFrame:
        return self.per_model(ReaderEval.chance_table)

    def paired_table(self, reference: str) -> pl.DataFrame:
        return self.per_model(lambda r: r.paired_table(reference))

    def cost_table(self) -> pl.DataFrame:
        return self.per_model(ReaderEval.cost_table)

    def cost_accuracy(self) -> pl.DataFrame:
        return self.per_model(ReaderEval.cost_accuracy)

    def cost_accuracy_chart(self) -> Any:
        return cost_accuracy_chart(self.chance_table(), self.cost_table())

    def throughput_table(self) -> pl.DataFrame:
        return self.per_run(ReaderEval.throughput_table)


def run_systems(
    systems: Sequence[System], items: Sequence[ReaderItem], batch_size: int = 64
) -> tuple[list[tuple[ReaderItem, Any]], dict[str, float]]:
    """Every system on every item (:func:`cogrsi_lib.reader.system.run_systems`: flow
    systems on one backend in one stream): (item, record) pairs, system by system, and the
    wall seconds until each system's last record."""
    records, wall = answer_all(systems, items, batch_size)
    return [pair for recs in records for pair in zip(items, recs, strict=True)], wall


def evaluate(
    systems: Sequence[System],
    pair_records: pl.DataFrame | None = None,
    bench: Mapping[str, Sequence[Any]] | None = None,
    batch_size: int = 64,
    run: int = 0,
) -> ReaderEval:
    """Run ``systems`` on the pair versions of ``pair_records`` and on the benchmark items of
    ``bench`` (name -> items); one record per system and item (:data:`RECORDS`) with its
    source, score and ``run`` (the systems' reader settings make the run; this labels it)."""
    from cogrsi_lib.pairs.records import SCHEMA

    pair_records = pair_records if pair_records is not None else pl.DataFrame(schema=SCHEMA)
    bench = {k: list(v) for k, v in (bench or {}).items()}
    items = pair_items(pair_records) + [r for name, its in bench.items()
                                        for r in bench_items(its, name)]
    return evaluate_items(systems, items, batch_size, run, pair_records, bench)


def evaluate_items(
    systems: Sequence[System],
    items: Sequence[ReaderItem],
    batch_size: int = 64,
    run: int = 0,
    pair_records: pl.DataFrame | None = None,
    bench: Mapping[str, list[Any]] | None = None,
) -> ReaderEval:
    """Run ``systems`` on reader ``items``, each scored by its source's rule: a benchmark
    item by the benchmark's own verdict on its original (``meta["original"]``, set by
    :func:`~cogrsi_lib.reader.items.from_bench_item`), any other by the oracle's gold.
    ``pair_records`` and ``bench`` are kept for the pair and benchmark tables."""
    from cogrsi_lib.pairs.records import SCHEMA

    done, wall = run_systems(systems, items, batch_size)
    rows = []
    for item, rec in done:
        row = rec.to_row()
        meta = {k: item.meta.get(k) for k in _META}
        score = item_score(item, rec)
        rows.append({**{k: (None if v is None else str(v)) for k, v in meta.items()},
                     **row, "run": run, "score": score, **item.text_columns()})
    pairs = pair_records if pair_records is not None else pl.DataFrame(schema=SCHEMA)
    return ReaderEval(RECORDS.frame(rows), pairs, dict(bench or {}), wall, run)


__all__ = [
    "PAIRS",
    "RECORDS",
    "ReaderEval",
    "ReaderRuns",
    "bench_items",
    "cost_accuracy_chart",
    "evaluate",
    "evaluate_items",
    "item_score",
    "load_bench_heads",
    "pair_items",
    "run_systems",
    "select_pairs",
]
