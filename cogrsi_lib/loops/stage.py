"""The ``loops`` stage: every arm and seed, the final comparison, selection quality, GEPA
(CogRSI §5.2-5.3, App. C.2, D; Tables 1 and 5, Figure 4).

The stage's settings are its schema, ``params.yaml[loops]`` checked once
(:class:`~cogrsi_lib.loops.params.LoopsParams`, here :class:`StageConfig`). Its ``model`` is
``scripted`` (:mod:`cogrsi_lib.loops.scripted`, the CI default: no model), ``embedded`` (the
CPU model, for the tiny setting), or a ``vllm`` or ``openai`` model (the full setting). Every
loop writes its rounds under ``<out>/runs/<arm>/seed<k>`` and resumes from them when the stage
is run again.

Within a seed every arm is scored on the same cohorts, so arms are compared paired; each
arm's builder samples with its own seed (:func:`cogrsi_lib.loops.builder.arm_seed`), so arms
propose their own candidates, as the paper's separately run arms did.

The development stories come from ExploreToM's situations by default, as the paper's loops
learned from ExploreToM (``dev_situations``, :mod:`cogrsi_lib.oracle.situations`). With
``shadow`` every candidate of every arm meets the counterfactual gate and the result is logged
for shadow registration (:mod:`cogrsi_lib.loops.shadow`); :func:`run_shadow_study` runs the
symbolic study whose audited candidates give Figure 7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.together import run_together, serves_concurrently
from cogrsi_lib.loops.arms import ArmConfig
from cogrsi_lib.loops.builder import Builder, BuilderLimits, arm_seed
from cogrsi_lib.loops.cohorts import schedule
from cogrsi_lib.loops.devdata import (
    TEST_SPLIT,
    bench_dev_items,
    bigtom_u_items,
    manifest_items,
    oracle_dev_items,
    pair_items,
)
from cogrsi_lib.loops.engine import Loop
from cogrsi_lib.loops.evaluate import (
    bigtom_u_scores,
    cohort_records,
    heldout_candidates,
    pair_scores,
    reference_principles,
    score_principles,
    score_test_main,
)
from cogrsi_lib.loops.gates import AuditRegistrationGate, CounterfactualGate, Gate
from cogrsi_lib.loops.gepa_arm import run_gepa
from cogrsi_lib.loops.params import LoopsParams
from cogrsi_lib.loops.records import RECORDS, final_scores, stage_records
from cogrsi_lib.loops.scripted import ScriptedWorld
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.oracle.situations import sampler_config
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.reader import GroundedReader

if TYPE_CHECKING:
    from cogrsi_lib.loops.registration_study import StudyRun

GEPA = "gepa"


#: the stage's settings: its schema (cogrsi_lib/loops/params.py)
StageConfig = LoopsParams


@dataclass
class StageData:
    """The loops' development pool and pair splits, and the test questions (main test
    sample, BigToM-U's versions and pairs) only the final principles are scored on."""

    pool: list[ReaderItem]
    gate: pl.DataFrame
    eval: pl.DataFrame
    test_main: list[ReaderItem] = field(default_factory=list)
    bigtom_u: list[ReaderItem] = field(default_factory=list)
    bigtom_u_pairs: list[tuple[str, str, str, str]] = field(default_factory=list)


def stage_data(cfg: StageConfig) -> StageData:
    """Development pool (oracle stories, plus S1 of ``dev_benchmarks``), pair splits, and
    Table 1's test questions (S3 of ``test_benchmarks``, BigToM-U)."""
    from cogrsi_lib.pairs.records import build_splits
    from cogrsi_lib.pipeline import repo_path

    pool = oracle_dev_items(cfg.dev_stories, cfg.dev_seed, max_depth=cfg.dev_max_depth,
                            config=sampler_config(cfg.dev_situations))
    mdir = Path(cfg.manifest_dir)
    mdir = mdir if mdir.is_absolute() else repo_path(cfg.manifest_dir)
    if cfg.dev_benchmarks:
        pool += bench_dev_items(cfg.dev_benchmarks, mdir)
    splits = build_splits(**cfg.pairs.model_dump())
    test = (manifest_items(cfg.test_benchmarks, mdir, TEST_SPLIT, cfg.test_main)
            if cfg.test_main else [])
    return StageData(pool, splits["gate"], splits["eval"], test,
                     *bigtom_u_items(cfg.bigtom_u_pairs))


def make_backend(cfg: StageConfig, data: StageData) -> Backend:
    """The stage's ``model``; its scripted stand-in is the scripted world, which knows the
    development pool and both pair splits."""
    from cogrsi_lib.pipeline import find_repo_root

    def world() -> Backend:
        return ScriptedWorld(data.pool + pair_items(data.gate) + pair_items(data.eval)
                             + data.test_main + data.bigtom_u).backend()

    return cfg.model.build(find_repo_root(), {"default": world})


def make_reader(cfg: StageConfig, backend: Backend) -> GroundedReader:
    return GroundedReader(backend, "none",
                          cfg.reader.model_copy(update={"structured": cfg.structured}))


def make_gates(cfg: StageConfig, arm: ArmConfig, scorer: Scorer, data: StageData,
               audit: AuditRegistrationGate | None = None) -> dict[str, Gate]:
    """The arm's gates; ``audit`` is shared by every loop (its verdicts are cached by text)."""
    gates: dict[str, Gate] = {}
    if "counterfactual" in arm.gates:
        gates["counterfactual"] = CounterfactualGate(scorer, data.gate, cfg.gate_tolerance)
    if "audit" in arm.gates:
        gates["audit"] = audit if audit is not None else audit_gate(cfg)
    return gates


def shadow_gates(cfg: StageConfig, gates: Mapping[str, Gate], scorer: Scorer,
                 data: StageData) -> dict[str, Gate]:
    """The counterfactual gate every candidate of every arm meets with ``shadow`` (the arm's
    own when it has one, so it runs once); none without."""
    if not cfg.shadow:
        return {}
    return {"counterfactual": gates.get("counterfactual")
            or CounterfactualGate(scorer, data.gate, cfg.gate_tolerance)}


def run_shadow_study(cfg: StageConfig) -> StudyRun | None:
    """The symbolic shadow-registration study (``shadow_study``; None when empty): the bank
    loops on this stage's development situations, shadow gates on, every text audited with
    the bank's translations on a sample of ``shadow_audit`` worlds."""
    study = cfg.study()
    if study is None:
        return None
    from cogrsi_lib.audit.snapshot import sample_audit_worlds
    from cogrsi_lib.loops.registration_study import run_study

    a = cfg.shadow_audit
    return run_study(study, sample_audit_worlds(a.n_worlds, a.seed, a.max_depth))


def audit_gate(cfg: StageConfig) -> AuditRegistrationGate:
    from cogrsi_lib.pipeline import find_repo_root

    root = find_repo_root()
    return AuditRegistrationGate(params=cfg.audit, base_dir=str(root) if root else None)


@dataclass
class StageRun:
    """Everything the notebook tabulates; ``records`` are the stage's records
    (:mod:`cogrsi_lib.loops.records`: the final cohort, and the rounds' with ``log_items``)."""

    rounds: pl.DataFrame
    candidates: pl.DataFrame
    cohorts: pl.DataFrame
    replies: pl.DataFrame
    records: pl.DataFrame
    heldout: pl.DataFrame
    gate_pairs: pl.DataFrame
    eval_pairs: pl.DataFrame
    gepa: pl.DataFrame
    principles: pl.DataFrame
    arms: dict[str, str]
    test_main: pl.DataFrame = field(default_factory=pl.DataFrame)
    bigtom_u: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def final_scores(self) -> pl.DataFrame:
        """The final cohort: one row per seed, principle label and item, right or not."""
        return final_scores(self.records)


def run_stage(cfg: StageConfig, data: StageData, out: str | Path,
              backend: Backend | None = None) -> StageRun:
    """Run (or resume) every arm and seed, then score what they learned.

    The loops of every seed and arm (and GEPA) are independent: on a backend that serves
    concurrent requests they run side by side (:mod:`cogrsi_lib.llm.together`), one after
    another otherwise; the tables are the same either way.
    """
    out = Path(out)
    backend = backend or make_backend(cfg, data)
    reader = make_reader(cfg, backend)
    settings = cfg.settings()
    limits = BuilderLimits()
    arms = cfg.arm_configs()
    audit = audit_gate(cfg) if any("audit" in a.gates for a in arms) else None
    together = serves_concurrently(backend)
    parts: dict[str, list[pl.DataFrame]] = {k: [] for k in (
        "rounds", "candidates", "cohorts", "replies", "final", "items", "heldout", "gate",
        "eval", "test_main", "bigtom_u", "tested", "gepa", "principles")}
    scheds = {seed: schedule(data.pool, seed, cfg.rounds, cfg.discovery_size, cfg.trial_size,
                             cfg.n_trials, cfg.final_size) for seed in cfg.seeds}
    # one evaluator per seed: the held-out and final scores of its arms share its answers
    evaluators = {seed: Scorer(reader, cfg.batch_size) for seed in cfg.seeds}

    def run_arm(seed: int, arm: ArmConfig) -> tuple[str, dict[str, pl.DataFrame]]:
        scorer = Scorer(reader, cfg.batch_size)
        gates = make_gates(cfg, arm, scorer, data, audit)
        loop = Loop(arm, settings, seed=seed, scorer=scorer,
                    builder=Builder(backend, limits=limits,
                                    temperature=cfg.builder_temperature,
                                    max_tokens=cfg.builder_max_tokens,
                                    seed=arm_seed(arm.name, seed),
                                    structured=cfg.structured),
                    pool=data.pool, run_dir=out / "runs" / arm.name / f"seed{seed}",
                    gates=gates, pair_records=data.gate,
                    shadow_gates=shadow_gates(cfg, gates, scorer, data))
        res = loop.run()
        tables = {name: res.table(name) for name in ("rounds", "candidates", "cohorts",
                                                     "replies")}
        if cfg.log_items:
            tables["items"] = res.table("items")
        heldout = scheds[seed]["final"][: cfg.heldout_size]
        tables["heldout"] = heldout_candidates(evaluators[seed], tables["candidates"],
                                               tables["rounds"], heldout)
        return res.principle, tables

    def run_gepa_arm(seed: int) -> tuple[str, dict[str, pl.DataFrame]]:
        sched = scheds[seed]
        dev = [it for rnd in sched["rounds"] for it in rnd["discovery"]] + [
            it for rnd in sched["rounds"] for t in rnd["trials"] for it in t]
        val, train = dev[: cfg.gepa_val_size], dev[cfg.gepa_val_size:]
        g = run_gepa(Scorer(reader, cfg.batch_size), backend, train, val,
                     budget=cfg.gepa_budget, seed=seed, minibatch_size=cfg.gepa_minibatch,
                     reflection_max_tokens=cfg.gepa_reflection_max_tokens,
                     run_dir=out / "runs" / GEPA / f"seed{seed}", structured=cfg.structured)
        return g.principle, {"gepa": g.candidates.with_columns(
            seed=pl.lit(seed), metric_calls=pl.lit(g.metric_calls),
            reflection_calls=pl.lit(g.reflection_calls))}

    keys = [(seed, arm.name) for seed in cfg.seeds for arm in arms] + [
        (seed, GEPA) for seed in cfg.seeds if cfg.run_gepa and seed in cfg.gepa_seeds]
    by_name = {a.name: a for a in arms}
    done = dict(zip(keys, run_together(
        [(lambda s=s, n=n: run_gepa_arm(s) if n == GEPA else run_arm(s, by_name[n]))
         for s, n in keys], together), strict=True))

    def score_seed(seed: int) -> dict[str, pl.DataFrame]:
        learned = dict(reference_principles())
        learned.update({name: done[(seed, name)][0] for s, name in keys if s == seed})
        return score_learned(cfg, data, evaluators[seed], learned, scheds[seed]["final"], seed)

    scored = run_together([lambda s=s: score_seed(s) for s in cfg.seeds], together)
    for seed, scores in zip(cfg.seeds, scored, strict=True):
        for s, name in keys:  # in the serial run's order: each seed's arms, then GEPA
            if s == seed:
                for table, df in done[(s, name)][1].items():
                    parts[table].append(df)
        for table, df in scores.items():
            parts[table].append(df)

    def cat(name: str) -> pl.DataFrame:
        return pl.concat(parts[name], how="diagonal_relaxed") if parts[name] else pl.DataFrame()

    arm_text = {a.name: a.describe() for a in arms}
    if cfg.run_gepa:
        arm_text[GEPA] = f"GEPA (Pareto), {cfg.gepa_budget} reader evaluations"
    records = stage_records(parts["final"] + parts["tested"] + parts["items"])
    return StageRun(cat("rounds"), cat("candidates"), cat("cohorts"), cat("replies"),
                    records, cat("heldout"), cat("gate"), cat("eval"), cat("gepa"),
                    cat("principles"), arm_text, cat("test_main"), cat("bigtom_u"))


def score_learned(cfg: StageConfig, data: StageData, evaluator: Scorer,
                  learned: Mapping[str, str], final: Sequence[ReaderItem], seed: int
                  ) -> dict[str, pl.DataFrame]:
    """Seed ``seed``'s principles (label -> text) on everything no loop saw: the final
    cohort, the pair splits, Table 1's test questions (scores and records), and the texts."""
    scores = {"final": score_principles(evaluator, final, learned, seed),
              "gate": pair_scores(evaluator, data.gate, learned).with_columns(seed=pl.lit(seed))}
    if cfg.eval_pairs:
        scores["eval"] = (pair_scores(evaluator, data.eval, learned)
                          .with_columns(seed=pl.lit(seed)))
    if data.test_main:
        scores["test_main"] = (score_test_main(evaluator, data.test_main, learned)
                               .with_columns(seed=pl.lit(seed)))
    if data.bigtom_u:
        scores["bigtom_u"] = (bigtom_u_scores(evaluator, data.bigtom_u, data.bigtom_u_pairs,
                                              learned).with_columns(seed=pl.lit(seed)))
    scores["tested"] = pl.concat([
        cohort_records(evaluator, items, learned, seed, cohort)
        for cohort, items in (("test_main", data.test_main), ("bigtom_u", data.bigtom_u))
        if items] or [RECORDS.empty()])
    scores["principles"] = pl.DataFrame({
        "seed": [seed] * len(learned), "label": list(learned),
        "principle": list(learned.values()), "words": [len(t.split()) for t in learned.values()]})
    return scores


def write_logs(run: StageRun, out: str | Path) -> list[Path]:
    """The pooled logs and scores as parquet under ``out``, and the stage's records
    (``records.parquet``)."""
    out = Path(out)
    paths = [RECORDS.write(run.records, out)]
    for name in ("rounds", "candidates", "cohorts", "replies", "heldout", "gate_pairs",
                 "eval_pairs", "test_main", "bigtom_u", "gepa", "principles"):
        df: pl.DataFrame = getattr(run, name)
        p = out / f"{name}.parquet"
        df.write_parquet(p)
        paths.append(p)
    return paths
