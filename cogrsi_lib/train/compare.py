"""Base vs trained: the same direct-answer requests to both models, scored per item, and the
paired difference per set and stratum with a cluster bootstrap over stories (CogRSI §3).

The sets are the held-out oracle items by depth (the nested benchmark's R0-R4 cells, oracle
default words), the counterfactual eval pairs (eval lexicon), and seeded samples of each
benchmark present (ToMi, Hi-ToM, BigToM, ToMBench) per question type. Every item is asked
with the reader's direct-answer prompt and its declared reply format (``answer.direct``),
the format the model was trained on; a reply is right when its option label is the gold
one. This is not each benchmark's official prompt: the comparison measures transfer of the
trained behaviour, and the report says so.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.types import SamplingParams
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.views import plain_view
from cogrsi_lib.stats import paired_bootstrap
from cogrsi_lib.train.examples import replace_meta

ANSWER_TOKENS = 32
NESTED, PAIRS = "oracle_nested", "eval_pairs"


def nested_items(n_per_cell: int, settings: Mapping[str, Any]) -> list[ReaderItem]:
    """The nested benchmark's first ``n_per_cell`` items of each depth and partition."""
    from cogrsi_lib.nested.items import NestedConfig, generate
    from cogrsi_lib.scorecard.answers import nested_reader_item

    gen = generate(NestedConfig(n_per_cell=n_per_cell, **dict(settings)))
    out = []
    for it in gen.items:
        r = nested_reader_item(it)
        out.append(_tag(r, NESTED, f"R{it.depth}", partition=it.partition))
    return out


def pair_items(n_pairs: int, settings: Mapping[str, int]) -> list[ReaderItem]:
    """Both versions of ``n_pairs`` eval pairs (spread over forms and variants)."""
    from cogrsi_lib.pairs.generate import generate_split
    from cogrsi_lib.pairs.records import to_frame
    from cogrsi_lib.reader.evaluate import pair_items as as_items
    from cogrsi_lib.reader.evaluate import select_pairs

    frame = to_frame(generate_split("eval", settings["eval_seed"],
                                    settings["n_eval_narrative"], settings["n_eval_dialogue"]))
    return [_tag(r, PAIRS, str(r.meta["variant"])) for r in as_items(select_pairs(frame, n_pairs))]


def bench_items(per_type: Mapping[str, int], seed: int) -> tuple[list[ReaderItem], list[str]]:
    """``per_type[name]`` items of each question type of every benchmark present, drawn with
    ``seed``; and the names whose files are absent."""
    from cogrsi_lib import bench
    from cogrsi_lib.reader.items import from_bench_item

    out: list[ReaderItem] = []
    missing: list[str] = []
    for name, n in per_type.items():
        if not bench.available(name):
            missing.append(name)
            continue
        by_type: dict[str, list[Any]] = {}
        for it in bench.load(name):
            if it.options or it.choices:
                by_type.setdefault(str(it.question_type), []).append(it)
        rng = random.Random(f"train-eval-{name}-{seed}")
        for qtype in sorted(by_type):
            pool = by_type[qtype]
            for it in rng.sample(pool, min(n, len(pool))):
                out.append(_tag(from_bench_item(it), name, qtype))
    return out, missing


def _tag(item: ReaderItem, source: str, stratum: str, **meta: Any) -> ReaderItem:
    return replace_meta(item, eval_set=source, stratum=stratum, **meta)


def ask(backend: Backend, items: Sequence[ReaderItem], label: str) -> pl.DataFrame:
    """One greedy direct answer per item; per-item rows with the parse and the verdict."""
    params = SamplingParams(max_tokens=ANSWER_TOKENS, temperature=0.0)
    requests = [prompts.answer_request(it, plain_view(it), params, think=prompts.THINK_NONE)
                for it in items]
    replies = backend.generate(requests)
    rows = []
    for it, req, cs in zip(items, requests, replies, strict=True):
        parsed = prompts.read_answer(it, req.constraint, cs[0].text)
        gold = it.gold_key()
        rows.append({"model": label, "backend": backend.identity, "set": it.meta["eval_set"],
                     "stratum": it.meta["stratum"], "item_id": it.item_id,
                     "story_id": it.story, **it.text_columns(),
                     "n_options": len(it.options or ()),
                     "gold": gold, "answer": parsed.value, "status": parsed.status,
                     "reason": parsed.reason, "reply": cs[0].text,
                     "correct": parsed.value is not None and parsed.value == gold})
    return pl.DataFrame(rows, infer_schema_length=None)


#: aggregates reported beside the strata: (set, name, strata it pools)
POOLS = (("tomi", "first_order", "first_order_"), ("tomi", "second_order", "second_order_"),
         (NESTED, "R1-R4", "R"))


def compare(records: pl.DataFrame, base: str = "base", trained: str = "trained",
            n_resamples: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Per set and stratum (and the pools of :data:`POOLS`): n, chance (mean of 1/options),
    the best constant label's accuracy, both accuracies and the paired difference trained -
    base with its 95% interval (bootstrap over stories)."""
    wide = (records.filter(pl.col("model") == base)
            .select("set", "stratum", "item_id", "story_id", "n_options", "gold",
                    pl.col("correct").alias("b"))
            .join(records.filter(pl.col("model") == trained)
                  .select("item_id", "set", pl.col("correct").alias("t")),
                  on=["item_id", "set"], how="inner"))
    if wide.is_empty():
        raise ValueError(f"no item was answered by both {base!r} and {trained!r}")
    groups: list[tuple[str, str, pl.DataFrame]] = []
    for (s,), df in wide.group_by(["set"], maintain_order=True):
        groups.append((s, "all", df))
        for (st,), sub in df.group_by(["stratum"], maintain_order=True):
            groups.append((s, st, sub))
    for s, name, prefix in POOLS:
        sub = wide.filter((pl.col("set") == s) & pl.col("stratum").str.starts_with(prefix)
                          & (pl.col("stratum") != "R0"))
        if sub.height:
            groups.append((s, f"{name} (pooled)", sub))
    rows = []
    for s, st, df in groups:
        t, b = df["t"].cast(float).to_numpy(), df["b"].cast(float).to_numpy()
        res = paired_bootstrap(t, b, df["story_id"].to_numpy(), n_resamples=n_resamples,
                               seed=seed)
        chance = float((1 / df["n_options"].cast(float)).mean())
        # the best a model answering one fixed label could do here (a positional shortcut)
        constant = float(df["gold"].value_counts()["count"].max()) / df.height
        rows.append({"set": s, "stratum": st, "n": df.height, "chance": chance,
                     "best_constant": constant,
                     "base": float(b.mean()),
                     "trained": float(t.mean()), "diff": res.estimate, "low": res.low,
                     "high": res.high, "excludes_zero": bool(res.low > 0 or res.high < 0)})
    return pl.DataFrame(rows).sort(["set", "stratum"])


def parse_rates(records: pl.DataFrame) -> pl.DataFrame:
    """Share of replies that parsed, per model and set."""
    return (records.group_by("model", "set")
            .agg(pl.len().alias("n"), (pl.col("status") == "ok").mean().alias("parse_rate"))
            .sort("model", "set"))
