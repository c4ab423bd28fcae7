"""Base vs trained: the same direct-answer requests to both models, scored per item, and the
paired difference per set and stratum with a cluster bootstrap over stories (CogRSI §3).

The sets are the held-out oracle items by depth (the nested benchmark's R0-R4 cells, oracle
default words), the counterfactual eval pairs (eval lexicon), and seeded samples of each
benchmark present (ToMi, Hi-ToM, BigToM, ToMBench) per question type. Every item is asked
with the reader's direct-answer prompt and its declared reply format (``answer.direct``);
a reply is right when its option label is the gold one. Chosen sets are also asked open
(the reply names the place) and, for chosen strata, open after thinking first
(``answer.reasoned`` under the grounded instruction, the form of the traced training
examples); both models get the same requests. This is not each benchmark's official
prompt: the comparison measures transfer of the trained behaviour, and the report says so.

The records (:data:`RECORDS`) name the model asked ``system`` (``base`` or ``trained``) and
the set ``source``; the tables call them ``model`` and ``set``.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from cogrsi_lib.bench.scoring import contains_phrase
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.parsing import normalise_free_text
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem, from_nested_item
from cogrsi_lib.reader.views import plain_view
from cogrsi_lib.records_schema import RecordSchema, calls_json, messages_of
from cogrsi_lib.stats import benjamini_hochberg, paired_bootstrap, with_power
from cogrsi_lib.train.examples import asked, open_item

#: how an item is asked: ``direct`` (the answer alone) or ``traced`` (think first)
DIRECT, TRACED = "direct", "traced"
NESTED, PAIRS = "oracle_nested", "eval_pairs"
#: the train stage's records (``records.parquet``): the core (``system`` is ``base`` or
#: ``trained``, ``source`` the evaluation set, the call ``direct`` or ``traced``), the
#: item's stratum and text, the answer as scored (an open reply's named candidate) and why a
#: reply did not parse
RECORDS = RecordSchema("train", {
    "stratum": pl.Utf8, "story": pl.Utf8, "question": pl.Utf8, "options_json": pl.Utf8,
    "scored_as": pl.Utf8, "parse_reason": pl.Utf8,
})


def nested_items(n_per_cell: int | Sequence[int],
                 settings: Mapping[str, Any]) -> list[ReaderItem]:
    """The nested benchmark's first items of each depth and partition, in the strata ``R0``
    and ``R<k>:<partition>`` (``adversarial``: a false belief that also differs from every
    shallower prefix's answer; ``true_belief``: the object is there).

    ``n_per_cell`` is one count for every cell or one per depth (R0..R4); the benchmark is
    generated once, at the largest count, and each cell keeps its first items (the
    generator's cells at a smaller count are not a prefix of those at a larger one)."""
    from cogrsi_lib.nested.items import NestedConfig, generate

    sizes = cell_sizes(n_per_cell, settings)
    gen = generate(NestedConfig(n_per_cell=max(sizes), **dict(settings)))
    kept: Counter[tuple[int, str]] = Counter()
    out = []
    for it in gen.items:
        cell = (it.depth, it.partition)
        if kept[cell] >= sizes[it.depth]:
            continue
        kept[cell] += 1
        r = from_nested_item(it)
        stratum = f"R{it.depth}" if it.depth == 0 else f"R{it.depth}:{it.partition}"
        out.append(_tag(r, NESTED, stratum, partition=it.partition))
    return out


def cell_sizes(n_per_cell: int | Sequence[int], settings: Mapping[str, Any]) -> list[int]:
    """Items per cell at each depth R0..R<max_depth> of the nested ``settings``: ``n_per_cell``
    repeated, or checked to give one count per depth (none below 0, not all 0)."""
    from cogrsi_lib.nested.items import NestedConfig

    depths = int(settings.get("max_depth", NestedConfig.max_depth)) + 1
    sizes = [n_per_cell] * depths if isinstance(n_per_cell, int) else list(n_per_cell)
    if len(sizes) != depths or min(sizes) < 0 or max(sizes) < 1:
        raise ValueError(f"one count, or {depths} counts (R0..R{depths - 1}) none below 0 and "
                         f"not all 0; got {n_per_cell!r}")
    return sizes


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


def open_items(items: Sequence[ReaderItem], sets: Sequence[str]) -> list[ReaderItem]:
    """The multiple-choice items of ``sets`` asked as open questions (no options), in the set
    ``"<set> (open)"``, keeping the lettered version's options as ``candidates``: a reply is
    right when the gold is the one candidate it names (:func:`named_candidate`), so "the key
    is in the box" counts as "box". Chance is a uniform pick among the candidates."""
    return [open_item(it).with_meta(eval_set=f"{it.meta['eval_set']} (open)",
                                    candidates=list(it.options))
            for it in items if it.meta["eval_set"] in sets and it.options]


def traced_items(items: Sequence[ReaderItem],
                 strata: Mapping[str, Sequence[str]]) -> list[ReaderItem]:
    """The multiple-choice items of each set in ``strata`` whose stratum starts with one of
    its prefixes, asked open with the grounded reader's instruction to think first (the
    form of the ``answer.traced`` training examples), in the set ``"<set> (traced)"``; scored
    as open questions (:func:`open_items`)."""
    return [open_item(it).with_meta(eval_set=f"{it.meta['eval_set']} (traced)",
                                    candidates=list(it.options), ask=TRACED)
            for it in items if it.options and any(
                str(it.meta["stratum"]).startswith(pre)
                for pre in strata.get(it.meta["eval_set"], ()))]


def named_candidate(answer: str | None, candidates: Sequence[str]) -> str | None:
    """The one candidate an open answer names (as whole words, after normalisation), or
    None when it names none or several ("in the drawer, not the box" names two)."""
    if not answer:
        return None
    named = {c for c in candidates if contains_phrase(answer, c)}
    return named.pop() if len(named) == 1 else None


def _tag(item: ReaderItem, source: str, stratum: str, **meta: Any) -> ReaderItem:
    return item.with_meta(eval_set=source, stratum=stratum, **meta)


def ask(backend: Backend, items: Sequence[ReaderItem], label: str) -> pl.DataFrame:
    """One greedy answer per item, direct or (items of :func:`traced_items`) after thinking;
    one record per item (:data:`RECORDS`, ``system`` is ``label``) with the parse and the
    verdict."""
    requests = [asked(it, plain_view(it), traced=it.meta.get("ask") == TRACED) for it in items]
    replies = backend.generate(requests)
    rows = []
    for it, req, cs in zip(items, requests, replies, strict=True):
        c = cs[0]
        parsed = prompts.read_answer(it, req.constraint, c.text)
        gold = it.gold_key()
        candidates = it.meta.get("candidates")
        value = parsed.value
        if candidates is not None:  # an open question: which candidate the reply names
            named = named_candidate(parsed.value, candidates)
            value = normalise_free_text(named) if named is not None else None
        call = TRACED if it.meta.get("ask") == TRACED else DIRECT
        rows.append({"run": 0, "system": label, "model": backend.model,
                     "source": it.meta["eval_set"], "item_id": it.item_id,
                     "story_id": it.story,
                     "prompt": calls_json({call: messages_of(req.messages)}),
                     "reply": calls_json({call: [c.text]}), "parse_status": parsed.status,
                     "answer": parsed.value, "gold": gold,
                     "correct": value is not None and value == gold,
                     "n_options": len(candidates or it.options or ()), "calls": 1,
                     "cached_calls": int(c.from_cache), "prompt_tokens": c.prompt_tokens,
                     "completion_tokens": c.completion_tokens,
                     "stratum": it.meta["stratum"], **it.text_columns(), "scored_as": value,
                     "parse_reason": parsed.reason})
    return RECORDS.frame(rows)


#: the stratum names of the rows that aggregate strata: a pool, and whole pairs
POOLED, WHOLE_PAIRS = " (pooled)", "both versions (per pair)"
#: aggregates reported beside the strata: (set, name, pattern of the strata it pools)
POOLS = tuple((f"{s}{form}", name, pattern) for form in ("", " (open)", " (traced)")
              for s, name, pattern in (
                  ("tomi", "first_order", "^first_order_"),
                  ("tomi", "second_order", "^second_order_"),
                  *((NESTED, f"R{d}", f"^R{d}:") for d in range(1, 5)),
                  (NESTED, "R1-R4", "^R[1-4]:"),
                  (NESTED, "R1-R4 adversarial", "^R[1-4]:adversarial$"),
                  (NESTED, "R1-R4 true belief", "^R[1-4]:true_belief$")))


def compare(records: pl.DataFrame, base: str = "base", trained: str = "trained",
            n_resamples: int = 2000, seed: int = 0) -> pl.DataFrame:
    """Per set and stratum (and the pools of :data:`POOLS`): n, chance (mean of 1/options),
    the best constant label's accuracy, both accuracies and the paired difference trained -
    base with its 95% interval (bootstrap over stories)."""
    sets = pl.col("source").alias("set")
    wide = (records.filter(pl.col("system") == base)
            .select(sets, "stratum", "item_id", "story_id", "gold",
                    (1 / pl.col("n_options").cast(float)).alias("chance"),
                    pl.col("correct").alias("b"))
            .join(records.filter(pl.col("system") == trained)
                  .select("item_id", sets, pl.col("correct").alias("t")),
                  on=["item_id", "set"], how="inner", maintain_order="left"))
    if wide.is_empty():
        raise ValueError(f"no item was answered by both {base!r} and {trained!r}")
    groups: list[tuple[str, str, pl.DataFrame]] = []
    for (s,), df in wide.group_by(["set"], maintain_order=True):
        groups.append((s, "all", df))
        for (st,), sub in df.group_by(["stratum"], maintain_order=True):
            groups.append((s, st, sub))
    for s, name, pattern in POOLS:
        sub = wide.filter((pl.col("set") == s) & pl.col("stratum").str.contains(pattern))
        if sub.height:
            groups.append((s, f"{name}{POOLED}", sub))
    pairs = _whole_pairs(wide.filter(pl.col("set") == PAIRS))
    if pairs.height:
        groups.append((PAIRS, WHOLE_PAIRS, pairs))
    rows = []
    for s, st, df in groups:
        t, b = df["t"].cast(float).to_numpy(), df["b"].cast(float).to_numpy()
        res = paired_bootstrap(t, b, df["story_id"].to_numpy(), n_resamples=n_resamples,
                               seed=seed)
        chance = float(df["chance"].mean())
        # the best a model answering one fixed label could do here (a positional shortcut)
        golds = df["gold"].filter(df["gold"] != "")
        constant = golds.value_counts()["count"].max() / df.height if len(golds) else 0.0
        rows.append({"set": s, "stratum": st, "n": df.height, "chance": chance,
                     "best_constant": constant,
                     "base": float(b.mean()),
                     "trained": float(t.mean()), "diff": res.estimate, "low": res.low,
                     "high": res.high, "excludes_zero": bool(res.low > 0 or res.high < 0),
                     "p_value": res.p_value})
    return with_significance(pl.DataFrame(rows)).sort(["set", "stratum"])


def with_significance(table: pl.DataFrame, alpha: float = 0.05) -> pl.DataFrame:
    """Benjamini-Hochberg over every row of the table (all sets, strata and pools: one
    family), the power columns of :func:`~cogrsi_lib.stats.with_power`, and ``significant``:
    BH-rejected at ``alpha`` and not underpowered."""
    p_bh, reject = benjamini_hochberg(table["p_value"].to_list(), alpha)
    out = with_power(table.with_columns(pl.Series("p_bh", p_bh, dtype=pl.Float64),
                                        pl.Series("bh_reject", reject, dtype=pl.Boolean)))
    return out.with_columns((pl.col("bh_reject") & ~pl.col("underpowered"))
                            .alias("significant")).drop("bh_reject")


def _whole_pairs(wide: pl.DataFrame) -> pl.DataFrame:
    """One row per counterfactual pair answered in both versions: right when both versions
    are (CogRSI §3's pair validity); chance is the product of the versions' chances, and
    the gold is the versions' shared label, empty when they differ (no constant label gets
    such a pair right)."""
    return (wide.group_by("story_id", maintain_order=True)
            .agg(pl.len().alias("versions"), pl.col("t").all(), pl.col("b").all(),
                 pl.col("chance").product(),
                 pl.when(pl.col("gold").n_unique() == 1).then(pl.col("gold").first())
                 .otherwise(pl.lit("")).alias("gold"))
            .filter(pl.col("versions") == 2))


def parse_rates(records: pl.DataFrame) -> pl.DataFrame:
    """Share of replies that parsed, per model (``base``/``trained``) and set."""
    return (records.group_by(pl.col("system").alias("model"), pl.col("source").alias("set"),
                             maintain_order=True)
            .agg(pl.len().alias("n"),
                 (pl.col("parse_status") == "ok").mean().alias("parse_rate"))
            .sort("model", "set"))
