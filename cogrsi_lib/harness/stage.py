"""The ``harness`` stage: module ablations on frozen items, and each module's own diagnostics
(zing-social-mind-report §5.8: Table 10, §5.8.3 routing, §5.8.4 Starling, §5.8.5 SAGE).

Items: a seeded random sample of ``n_per_benchmark`` of each present benchmark (ToMBench,
Hi-ToM) and ``n_oracle`` oracle questions drawn with their own seed. SAGE is distilled on
development items only: ToMBench items other than the evaluated ones plus oracle questions
of another seed;
:func:`cogrsi_lib.harness.distil.distil` refuses any overlap with the evaluated ids.
"""

from __future__ import annotations

import json
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from cogrsi_lib.harness.control import Policy, optimize
from cogrsi_lib.harness.distil import distil
from cogrsi_lib.harness.experience_store import ExperienceStore
from cogrsi_lib.harness.router import RoutingRow, routing_metrics
from cogrsi_lib.harness.runtime import MODULES, HarnessConfig, HarnessSystem
from cogrsi_lib.harness.selector import ABLATION_MODES, Activation, coverage, guidance_block
from cogrsi_lib.harness.taxonomy import annotate
from cogrsi_lib.progress import phase
from cogrsi_lib.reader.items import ReaderItem, from_bench_item
from cogrsi_lib.reader.records import ITEM_COLUMNS, ItemRecord
from cogrsi_lib.reader.system import run_system
from cogrsi_lib.records_schema import RecordSchema

if TYPE_CHECKING:
    from cogrsi_lib.harness.params import HarnessParams

#: the harness's records (``records.parquet``): the core, the reader's columns, the item's
#: annotation (:mod:`cogrsi_lib.harness.taxonomy`) and its text
RECORDS = RecordSchema("harness", {
    **ITEM_COLUMNS, "family": pl.Utf8, "dimension": pl.Utf8, "tag": pl.Utf8,
    "story": pl.Utf8, "question": pl.Utf8, "options_json": pl.Utf8,
})


def evaluation_items(
    benchmarks: Sequence[str],
    n_per_benchmark: int,
    n_oracle: int,
    oracle_seed: int,
    oracle_max_depth: int = 4,
    sample_seed: int = 0,
) -> tuple[dict[str, list[ReaderItem]], list[str]]:
    """Items by source (``oracle`` and each present benchmark) and the benchmarks skipped:
    of each benchmark a random sample of ``n_per_benchmark`` items (``sample_seed``), in
    file order, so that its accuracy estimates the whole benchmark's and every question type
    may appear (a benchmark's first items are often one task or one order)."""
    from cogrsi_lib import bench
    from cogrsi_lib.loops.devdata import oracle_dev_items

    out: dict[str, list[ReaderItem]] = {}
    skipped = [name for name in benchmarks if not bench.available(name)]
    for name in benchmarks:
        if name not in skipped and n_per_benchmark > 0:
            items = bench.load(name)
            keep = sorted(random.Random(sample_seed).sample(
                range(len(items)), min(n_per_benchmark, len(items))))
            out[name] = [from_bench_item(items[i]) for i in keep]
    if n_oracle > 0:
        pool = oracle_dev_items(max(1, n_oracle), oracle_seed, max_depth=oracle_max_depth)
        out["oracle"] = _spread(pool, n_oracle)
    return out, skipped


def _spread(pool: list[ReaderItem], n: int) -> list[ReaderItem]:
    """``n`` items taken round-robin over depths, so every depth is represented."""
    by_depth: dict[int, list[ReaderItem]] = {}
    for it in pool:
        by_depth.setdefault(int(it.meta.get("depth", 0)), []).append(it)
    out: list[ReaderItem] = []
    while len(out) < n and any(by_depth.values()):
        for d in sorted(by_depth):
            if by_depth[d] and len(out) < n:
                out.append(by_depth[d].pop(0))
    return out


def development_items(
    n_tombench: int, n_oracle: int, oracle_seed: int, exclude: Collection[str] = ()
) -> list[ReaderItem]:
    """SAGE's development items: ToMBench items spread evenly over the benchmark, leaving
    out the evaluated ones (``exclude``: their ids), and oracle questions of their own seed."""
    from cogrsi_lib import bench
    from cogrsi_lib.loops.devdata import oracle_dev_items

    out: list[ReaderItem] = []
    if n_tombench > 0 and bench.available("tombench"):
        held = set(exclude)
        tb = [it for it in bench.load("tombench") if str(it.id) not in held]
        step = max(1, len(tb) // n_tombench)
        out += [from_bench_item(it) for it in tb[::step][:n_tombench]]
    if n_oracle > 0:
        out += _spread(oracle_dev_items(max(1, n_oracle), oracle_seed, max_depth=2), n_oracle)
    return out


def distil_store(
    base: HarnessSystem,
    dev_items: Sequence[ReaderItem],
    embedder: Any,
    *,
    test_ids: Sequence[str],
    budget: int = 32,
    rounds: int = 1,
    max_tokens: int = 400,
) -> tuple[ExperienceStore, dict[str, Any]]:
    """Distil SAGE's store with ``base`` (no module) as the Generator; the Reflector's
    replies are constrained as ``base``'s are (``HarnessConfig.structured``)."""

    def answer_fn(items: Sequence[ReaderItem], guidance: Sequence[Sequence[Any]]):
        blocks = [[guidance_block(list(es))] if es else [] for es in guidance]
        return base.answer_with_support(items, blocks)

    store, log = distil(
        ExperienceStore(budget=budget),
        dev_items,
        answer_fn,
        base.backend,
        embedder,
        rounds=rounds,
        test_ids=frozenset(test_ids),
        max_tokens=max_tokens,
        structured=base.config.structured,
    )
    return store, log.to_dict()


def run(
    systems: Sequence[HarnessSystem],
    items: Mapping[str, Sequence[ReaderItem]],
    batch_size: int = 64,
) -> pl.DataFrame:
    """One record per (system, item) (:data:`RECORDS`) with the source and the item's
    annotation."""
    rows: list[dict[str, Any]] = []
    for source, its in items.items():
        for system in systems:
            phase("harness on %s", source)
            records = run_system(system, its, batch_size)
            rows.extend(_row(source, it, rec) for it, rec in zip(its, records, strict=True))
    return RECORDS.frame(rows)


def _row(source: str, item: ReaderItem, rec: ItemRecord) -> dict[str, Any]:
    a = annotate(item)
    row = rec.to_row()
    row.update(
        run=0,
        source=source,
        family=a.family if a else None,
        dimension=a.dimension if a else None,
        tag=a.tag if a else None,
        **item.text_columns(),
    )
    return row


def accuracy_table(frame: pl.DataFrame) -> pl.DataFrame:
    """Accuracy (unparsed = wrong) by system and source, and overall."""
    both = pl.concat([frame, frame.with_columns(source=pl.lit("all"))])
    return (both.group_by("source", "system", maintain_order=True)
            .agg(questions=pl.len(), accuracy=pl.col("correct").fill_null(False).mean(),
                 unparsed=(pl.col("parse_status") != "ok").sum(),
                 calls_per_q=pl.col("calls").mean(), tokens_per_q=pl.col("total_tokens").mean())
            .sort("source", "system"))  # fmt: skip


def delta_table(accuracy: pl.DataFrame, base: str = "harness:base",
                keys: Sequence[str] = ("source",)) -> pl.DataFrame:
    """Each system's accuracy minus the base's on the same ``keys`` (source), in points."""
    b = accuracy.filter(pl.col("system") == base).select(*keys, base_acc="accuracy")
    return (accuracy.join(b, on=list(keys), how="left", maintain_order="left")
            .with_columns(delta_pts=100 * (pl.col("accuracy") - pl.col("base_acc")))
            .select(*keys, "system", "questions", "accuracy", "delta_pts"))  # fmt: skip


def question_type_table(frame: pl.DataFrame, base: str = "harness:base") -> pl.DataFrame:
    """Accuracy (unparsed = wrong) by source, question type (``tag``: a ToMBench task, a
    Hi-ToM order, an oracle question kind and depth) and system, with each system's change
    against ``base`` on the same questions: the report's Figures 23 (PRISM by ToMBench task)
    and 25 (Starling by Hi-ToM order)."""
    keys = ("source", "tag")
    acc = (frame.group_by(*keys, "system", maintain_order=True)
           .agg(questions=pl.len(), accuracy=pl.col("correct").fill_null(False).mean())
           .sort(*keys, "system"))
    return delta_table(acc, base, keys)


def _extra(frame: pl.DataFrame, system: str) -> list[dict[str, Any]]:
    sub = frame.filter(pl.col("system") == system)
    return [json.loads(x) for x in sub["extra_json"].to_list()]


def routing_table(
    frame: pl.DataFrame, system: str, base: str = "harness:base", library: Any = None
) -> pl.DataFrame:
    """§5.3.3.3's family-hit, strict-hit, repair and damage of ``system``'s routes against
    ``base``'s answers on the same items, per source and overall."""
    b = dict(
        zip(
            frame.filter(pl.col("system") == base)["item_id"].to_list(),
            frame.filter(pl.col("system") == base)["correct"].to_list(),
            strict=True,
        )
    )
    sub = frame.filter(pl.col("system") == system)
    from cogrsi_lib.harness.taxonomy import Annotation

    by_source: dict[str, list[RoutingRow]] = {}
    for row, extra in zip(sub.iter_rows(named=True), _extra(frame, system), strict=True):
        route = extra.get("route") or {}
        ann = (Annotation(row["family"], row["dimension"], row["tag"])
               if row["family"] else None)  # fmt: skip
        rr = RoutingRow(
            ann, route.get("skill_id"), b.get(row["item_id"]), row["correct"], row["item_id"]
        )
        by_source.setdefault(row["source"], []).append(rr)
        by_source.setdefault("all", []).append(rr)
    out = []
    for source, rows in by_source.items():
        m = routing_metrics(rows, library)
        rec: dict[str, Any] = {
            "source": source,
            "system": system,
            "items": m["n_items"],
            "unrouted_share": m["unrouted_share"],
        }
        for key in ("family_hit", "strict_hit", "repair", "damage"):
            rec[key] = m[key]["value"]
            rec[f"{key}_n"] = m[key]["n"]
        out.append(rec)
    return pl.DataFrame(out, infer_schema_length=None)


def module_decisions(frame: pl.DataFrame) -> pl.DataFrame:
    """How often each module's gate injected, by system and module (the trace's decisions)."""
    counts: dict[tuple[str, str, str], int] = {}
    for system in frame["system"].unique(maintain_order=True).to_list():
        for extra in _extra(frame, system):
            for module, key in (
                ("state", "decision"),
                ("retrieval", "decision"),
                ("experience", "level"),
                ("route", "status"),
            ):
                if module in extra:
                    k = (system, module, str(extra[module].get(key)))
                    counts[k] = counts.get(k, 0) + 1
    rows = [
        {"system": s, "module": m, "decision": d, "items": n} for (s, m, d), n in counts.items()
    ]
    schema = {"system": pl.String, "module": pl.String, "decision": pl.String, "items": pl.Int64}
    return pl.DataFrame(rows, schema=schema).sort("system", "module", "decision")


def experience_coverage(frame: pl.DataFrame, system: str) -> dict[str, Any]:
    """SAGE's exact-recall coverage and level shares for ``system``'s activations."""
    acts = [
        Activation(e["experience"]["item_id"], e["experience"]["level"], (), (), None, "")
        for e in _extra(frame, system)
        if "experience" in e
    ]
    if not acts:
        return {"system": system, "n": 0}
    cov = coverage(acts)
    return {"system": system, "n": cov.n, "exact_coverage": cov.exact, **cov.shares}


def state_agreement(n_worlds: int, seed: int, max_depth: int) -> pl.DataFrame:
    """Starling against the oracle on sampled worlds, with gold and presence witnesses."""
    from cogrsi_lib.harness.state_memory import agreement_with_oracle
    from cogrsi_lib.oracle.sampler import sample_worlds

    worlds = list(sample_worlds(n_worlds, seed))
    return agreement_with_oracle(worlds, ("gold", "presence"), max_depth=max_depth).summary()


#: the rule sets Starling is scored with on Hi-ToM: the oracle's (every other source's),
#: Hi-ToM's stated one (trust by exit order) and its generator's (what the runtime uses there)
HITOM_RULE_SETS = {
    "oracle": {"tell_rule": "oracle", "move_rule": "witnessed"},
    "hitom_stated": {"tell_rule": "exit_order", "move_rule": "witnessed"},
    "hitom_generator": {"tell_rule": "exit_order", "move_rule": "hitom_generator"},
}


def hitom_agreement(items: Sequence[Any] | None = None) -> pl.DataFrame | None:
    """Starling against Hi-ToM's gold on the sample (or ``items``), by order, under each of
    :data:`HITOM_RULE_SETS`; ``runtime`` marks the set the harness uses on Hi-ToM items
    (:func:`~cogrsi_lib.harness.runtime.starling_rules`). None when Hi-ToM is absent."""
    from cogrsi_lib import bench
    from cogrsi_lib.harness.runtime import STARLING_RULES
    from cogrsi_lib.harness.state_memory import agreement_with_hitom

    if items is None:
        if not bench.available("hi-tom"):
            return None
        items = bench.load("hi-tom")
    frames = []
    for name, rules in HITOM_RULE_SETS.items():
        s = agreement_with_hitom(items, **rules).summary(by=("order",))
        frames.append(s.with_columns(rules=pl.lit(name),
                                     runtime=pl.lit(rules == STARLING_RULES["hi-tom"])))
    return pl.concat(frames, how="diagonal_relaxed")


# ---------------------------------------------------------------- calibration on validation


@dataclass
class Calibration:
    """What the validation items taught the harness before evaluation: the refined retriever
    (eq. 9), the gate policy (eq. 10) and their tables."""

    retriever: Any
    policy: Policy
    note_credit: pl.DataFrame
    policy_credit: pl.DataFrame
    log: dict[str, Any]


def calibrate(backend: Any, config: Mapping[str, Any], items: Sequence[ReaderItem],
              embedder: Any, store: ExperienceStore, *, test_ids: Sequence[str],
              lr: float = 0.5) -> Calibration:
    """On validation ``items`` (never evaluation ones): credit every injected retrieval note
    by repair and damage against Base and refine the retriever (eq. 9); then run the
    controlled full harness with it and update the gate policy from its traces (eq. 10)."""
    from cogrsi_lib.harness.retrieval import Retriever, credit, load_notes, refine

    ids = [it.item_id for it in items]
    overlap = sorted(set(ids) & set(test_ids))
    if overlap:
        raise ValueError(f"{len(overlap)} validation items are evaluation items: {overlap[:5]}")
    base = HarnessSystem(backend, HarnessConfig(**config), name="harness:base")
    retriever = Retriever(load_notes(), embedder)
    with_rag = HarnessSystem(backend, HarnessConfig(modules=("retrieval",), **config),
                             name="harness:retrieval", retriever=retriever)
    phase("harness calibration: retrieval credit on %d validation items", len(items))
    without = run_system(base, items, len(items) or 1)
    withr = run_system(with_rag, items, len(items) or 1)
    rows = []
    for it, a, b in zip(items, withr, without, strict=True):
        ret = (a.extra or {}).get("retrieval") or {}
        chosen = [c["note_id"] for c in ret.get("chosen", [])] if ret.get(
            "decision") == "inject" else []
        rows.append({"item_id": it.item_id, "injected": chosen,
                     "correct_with": bool(a.correct), "correct_without": bool(b.correct)})
    credits = credit(rows, evaluation_ids=test_ids)
    refined = refine(retriever, credits, evaluation_ids=test_ids)
    note_credit = pl.DataFrame([c.to_dict() for c in credits.values()], schema={
        "note_id": pl.Utf8, "repairs": pl.Int64, "damages": pl.Int64, "unchanged": pl.Int64,
        "n": pl.Int64, "utility": pl.Float64})
    phase("harness calibration: gate policy on %d validation items", len(items))
    full = HarnessSystem(backend, HarnessConfig(modules=MODULES, control=True, **config),
                         name="harness:full", store=store, embedder=embedder,
                         retriever=refined)
    traces = []
    for rec in run_system(full, items, len(items) or 1):
        ctl = (rec.extra or {}).get("control", {})
        final = ctl.get("final") or ctl.get("first") or {}
        traces.append({"correct": bool(rec.correct), "path": ctl.get("path"),
                       "opened": ctl.get("opened", []), "flags": final.get("flags", [])})
    before = full.policy
    policy, table = optimize(traces, before, lr=lr)
    policy_credit = pl.DataFrame(
        [{"decision": k, **{c: v.get(c) for c in ("traces", "loss", "weight")}}
         for k, v in table.items()],
        schema={"decision": pl.Utf8, "traces": pl.Int64, "loss": pl.Float64,
                "weight": pl.Float64})
    r = refined.refinement
    log = {"validation_items": len(items), "notes_credited": len(credits),
           "suppressed": list(r.suppressed) if r else [],
           "skipped_categories": list(r.skipped_categories) if r else [],
           "policy_before": json.loads(before.to_json()),
           "policy_after": json.loads(policy.to_json())}
    return Calibration(refined, policy, note_credit, policy_credit, log)


# ------------------------------------------------------------------- one model's study


@dataclass
class ModelStudy:
    """One model's harness study (the report's Table 10 gives one row per model): its SAGE
    store and distillation log, its calibration, its ablation systems and their records, and
    SAGE's own ablation (Figure 26)."""

    model: str
    store: ExperienceStore
    distil_log: dict[str, Any]
    calibration: Calibration
    systems: list[HarnessSystem]
    frame: pl.DataFrame
    sage_frame: pl.DataFrame


def study(backend: Any, p: HarnessParams, items: Mapping[str, Sequence[ReaderItem]],
          dev_items: Sequence[ReaderItem], embedder: Any, *, test_ids: Sequence[str]
          ) -> ModelStudy:
    """The stage's work for one model: SAGE distilled on ``dev_items`` with Base as the
    Generator, the retriever and gate policy calibrated on them, every ablation of
    ``p.ablations`` and SAGE's ablation on the evaluation ``items``."""
    from cogrsi_lib.harness.runtime import build_ablations
    from cogrsi_lib.progress import timed

    config = p.call_settings()
    base = HarnessSystem(backend, HarnessConfig(**config), name="harness:base")
    with timed(f"SAGE distillation: {backend.model}"):
        store, log = distil_store(base, dev_items, embedder, test_ids=test_ids,
                                  budget=p.dev.budget, rounds=p.dev.rounds,
                                  max_tokens=p.dev.max_tokens)
    with timed(f"calibration: {backend.model}"):
        cal = calibrate(backend, config, dev_items, embedder, store, test_ids=test_ids)
    systems = build_ablations(backend, p.ablations, config=config, store=store,
                              embedder=embedder, retriever=cal.retriever, policy=cal.policy)
    with timed(f"ablations: {backend.model}"):
        frame = run(systems, items, batch_size=p.batch_size)
    sage_items = {k: v for k, v in items.items() if k in SAGE_SOURCES} or {
        "oracle": items["oracle"]}
    sage_frame = run(sage_systems(backend, config, store, embedder), sage_items, p.batch_size)
    return ModelStudy(backend.model, store, log, cal, systems, frame, sage_frame)


# ------------------------------------------------------------------ SAGE ablation (Fig. 26)

def sage_systems(backend: Any, config: Mapping[str, Any], store: ExperienceStore,
                 embedder: Any) -> list[HarnessSystem]:
    """Figure 26's configurations: Base (no memory), then SAGE alone under each Selector mode
    (``store``: curation only, every entry; ``exact_only``: the selector without fallback;
    ``dimension_only``: dimension routing without fallback; ``cascade``: the full cascade)."""
    out = [HarnessSystem(backend, HarnessConfig(**config), name="sage:none")]
    for name, mode in ABLATION_MODES.items():
        out.append(HarnessSystem(
            backend, HarnessConfig(modules=("experience",), experience_mode=mode, **config),
            name=f"sage:{name}", store=store, embedder=embedder))
    return out


# ------------------------------------------------------------ against the report's Table 10

#: zing-social-mind-report Table 10, Base and Full accuracy (%) per benchmark and model
PAPER_TABLE10: dict[str, dict[str, tuple[float, float]]] = {
    "tombench": {"GPT-5.4-mini": (73.64, 79.97), "Qwen3.6-27B": (79.20, 82.94),
                 "DeepSeek-V4-Pro": (78.53, 79.97), "Qwen3.7-Plus": (81.08, 83.85),
                 "GPT-5.5": (83.25, 85.63)},
    "hi-tom": {"GPT-5.4-mini": (54.58, 60.58), "Qwen3.6-27B": (67.28, 70.17),
               "DeepSeek-V4-Pro": (65.17, 70.33), "Qwen3.7-Plus": (75.00, 74.25),
               "GPT-5.5": (69.41, 70.05)},
}


#: the report's Figure 26 (Zing §5.8.5.1: ToMBench test split, DeepSeek-V4-Flash): accuracy
#: (%) of each SAGE configuration, memory-free Base first
PAPER_FIGURE26: dict[str, float] = {
    "sage:none": 81.14, "sage:curation": 84.34, "sage:selector": 84.51,
    "sage:dimension_routing": 83.16, "sage:full": 86.53,
}  # fmt: skip


TITLE26 = "SAGE component ablation (Figure 26)"

#: where SAGE's own ablation runs: ToMBench, the split its store is distilled from (Figure 26,
#: Table 11's in-domain row), and Hi-ToM, held out (Table 11)
SAGE_SOURCES = ("tombench", "hi-tom")

#: the report's Table 11 (Zing §5.8.5.2): accuracy (%) without and with the frozen SAGE store
PAPER_TABLE11: dict[str, tuple[float, float]] = {
    "tombench": (81.14, 86.53), "hi-tom": (82.64, 84.72), "tactfultom": (80.95, 81.60)}


def figure26_frame(sage_frame: pl.DataFrame) -> pl.DataFrame:
    """The rows Figure 26 draws: SAGE's ablation on ToMBench (else its first source)."""
    sources = sage_frame["source"].unique(maintain_order=True).to_list()
    first = "tombench" if "tombench" in sources else sources[0] if sources else None
    return sage_frame.filter(pl.col("source") == first)


def sage_transfer(sage_frame: pl.DataFrame) -> pl.DataFrame:
    """Table 11: per source, Base (``sage:none``) against SAGE's full cascade on the frozen
    store (``sage:full``), in points; ToMBench in domain (the store is distilled on its
    development items and oracle questions), the others held out; the report's row beside."""
    acc = accuracy_table(sage_frame).filter(pl.col("source") != "all")
    pick = {name: acc.filter(pl.col("system") == f"sage:{name}").select(
        "source", "questions", pl.col("accuracy").alias(name)) for name in ("none", "full")}
    paper = pl.DataFrame(
        [(k, b, f, f - b) for k, (b, f) in PAPER_TABLE11.items()],
        schema={"source": pl.Utf8, "paper_base": pl.Float64, "paper_sage": pl.Float64,
                "paper_delta_pts": pl.Float64}, orient="row")
    return (pick["none"].join(pick["full"].drop("questions"), on="source", how="inner",
                              maintain_order="left")
            .select("source",
                    role=pl.when(pl.col("source") == "tombench").then(pl.lit("in domain"))
                    .otherwise(pl.lit("held out")),
                    questions="questions", base="none", sage="full",
                    delta_pts=100 * (pl.col("full") - pl.col("none")))
            .join(paper, on="source", how="left", maintain_order="left")
            .sort(pl.col("source") != "tombench", "source"))  # in domain first


def sage_chart(chance: pl.DataFrame) -> Any:
    """Figure 26 drawn: each SAGE configuration (rows in the report's order) with each
    model's accuracy and 95% interval over stories and its chance level (``chance``:
    :func:`cogrsi_lib.stats.chance_table` by ``system``, with a ``model`` column), beside the
    report's accuracy for the same configuration."""
    import altair as alt

    order = list(PAPER_FIGURE26)
    known = chance.filter(pl.col("system").is_in(order))
    missing = sorted(set(chance["system"]) - set(order))
    if missing:
        raise ValueError(f"no SAGE configuration of Figure 26: {', '.join(missing)}")
    if not known.height:
        from cogrsi_lib.reports import note_chart

        return note_chart(TITLE26, "no multiple-choice item was asked, so no accuracy "
                                   "against chance to draw (the table has the rest)")
    ours = known.select(
        "system", "accuracy", "low", "high", "chance",
        label=pl.col("system") + " (n=" + pl.col("items").cast(pl.Utf8) + ")",
        source=pl.lit("this run (") + pl.col("model") + pl.lit(")"))
    labels = dict(zip(ours["system"], ours["label"], strict=True))
    paper = pl.DataFrame({"system": order, "accuracy": [PAPER_FIGURE26[s] / 100 for s in order],
                          "source": ["report (DeepSeek-V4-Flash, ToMBench test)"] * len(order)}
                         ).filter(pl.col("system").is_in(list(labels))).with_columns(
        label=pl.col("system").replace_strict(labels))
    sort = [labels[s] for s in order if s in labels]
    y = alt.Y("label:N", title=None, sort=sort, axis=alt.Axis(labelLimit=320))
    x = alt.X("accuracy:Q", title="accuracy (95% interval over stories)",
              scale=alt.Scale(domain=[0, 1]))
    colour = alt.Color("source:N", title=None, legend=alt.Legend(
        orient="bottom", direction="vertical", labelLimit=480))
    base = alt.Chart(ours.to_pandas())
    interval = base.mark_rule().encode(y=y, x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1])),
                                       x2="high:Q", color=colour)
    points = base.mark_point(filled=True, size=60).encode(y=y, x=x, color=colour)
    chance_tick = base.mark_tick(color="#999999", thickness=2).encode(y=y, x="chance:Q")
    reported = alt.Chart(paper.to_pandas()).mark_point(shape="diamond", size=70).encode(
        y=y, x=x, color=colour)
    return alt.layer(interval, points, chance_tick, reported).properties(
        width=360, height=alt.Step(22),
        title=TITLE26 + "; grey tick: chance")


def paper_comparison(deltas: pl.DataFrame, model: str) -> pl.DataFrame:
    """This run's Base -> Full change (points) per source beside the report's Table 10
    changes for the same benchmark (their range over its five models)."""
    full = deltas.filter(pl.col("system") == "harness:full")
    rows = []
    for r in full.iter_rows(named=True):
        paper = PAPER_TABLE10.get(r["source"], {})
        changes = [f - b for b, f in paper.values()]
        rows.append({"source": r["source"], "model": model, "questions": r["questions"],
                     "delta_pts": r["delta_pts"],
                     "paper_models": len(changes) or None,
                     "paper_delta_min": min(changes) if changes else None,
                     "paper_delta_max": max(changes) if changes else None})
    return pl.DataFrame(rows, schema={
        "source": pl.Utf8, "model": pl.Utf8, "questions": pl.Int64, "delta_pts": pl.Float64,
        "paper_models": pl.Int64, "paper_delta_min": pl.Float64,
        "paper_delta_max": pl.Float64})
