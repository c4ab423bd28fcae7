"""Audit in registration, measured symbolically: three registration rules on one bank (CogRSI §6).

The closing remark of the paper proposes the audit as a registration check (§6); §5.3-5.4 show
that neither the margin nor the counterfactual gate filters invalid rules. This study runs the
loop engine (:class:`~cogrsi_lib.loops.engine.Loop`, its registration rule and gates,
unchanged) for the margin-only arm (``accuracy_library``), the gated arm (``gated_library``)
and the audit arm (``audit_library``) on the same seeds and development data, with:

- the scripted builder (:class:`~cogrsi_lib.loops.scripted.ScriptedWorld`'s builder replies,
  drawn from its rule bank, malformed replies included);
- the :class:`~cogrsi_lib.loops.symbolic.SymbolicReader`, which executes each library entry's
  hand-written translation against the oracle world, so every accuracy is a property of the
  rules, not of a model;
- the audit gate on the audit's own sample, with scripted translators serving the same
  hand-written translations (A and B).

No language model takes part. :func:`comparison_table` gives, per arm and seed and pooled,
proposals, admissions, rejections by reason, the kept library's verdicts, development accuracy
(the final cohort, unseen by registration) and accuracy and validity on the evaluation pairs.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib.audit.audit import AuditConfig, Auditor, RuleAudit
from cogrsi_lib.audit.gate import AuditGate
from cogrsi_lib.audit.settings import STUDY_ARMS, StudyConfig
from cogrsi_lib.audit.snapshot import AuditSample
from cogrsi_lib.loops.arms import builtin_arms
from cogrsi_lib.loops.builder import Builder, arm_seed
from cogrsi_lib.loops.cohorts import schedule
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.loops.engine import Loop, LoopSettings
from cogrsi_lib.loops.evaluate import pair_scores
from cogrsi_lib.loops.gates import AuditRegistrationGate, CounterfactualGate, Gate
from cogrsi_lib.loops.library import artifact_from_json
from cogrsi_lib.loops.scripted import ScriptedWorld
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.loops.symbolic import BANK_RULES, SymbolicReader, bank_translators
from cogrsi_lib.oracle.situations import SITUATIONS, sampler_config

LABEL = "symbolic: hand-written candidate rules executed as code; no language model"
ARMS = STUDY_ARMS
#: why a proposal was not admitted, in the order the registration checks run
REASONS = ("margin", "cohort_rule", "counterfactual_gate", "audit_gate", "outranked")
VERDICT_COLUMNS = ("valid", "invalid", "ambiguous", "vacuous")


@dataclass
class StudyRun:
    """Everything the comparison tabulates."""

    candidates: pl.DataFrame
    rounds: pl.DataFrame
    replies: pl.DataFrame
    kept: pl.DataFrame
    scores: pl.DataFrame
    bank: pl.DataFrame
    unknown: dict[str, int]
    config: StudyConfig
    #: per audited text: verdict, shared counterexamples and how many lie outside ExploreToM
    verdicts: pl.DataFrame = field(default_factory=pl.DataFrame)


def bank_auditor(sample: AuditSample, config: AuditConfig | None = None) -> Auditor:
    """An auditor on ``sample`` whose two translators return the bank's fixed translations."""
    return Auditor(sample, bank_translators(), config)


def _outcome(row: Mapping[str, Any]) -> str:
    if row["admitted"]:
        return "admitted"
    reason = row["reason"]
    if reason == "below_margin":
        return "margin"
    if reason == "cohort_rule":
        return "cohort_rule"
    if reason == "gate":
        for g in json.loads(row["gates_json"]):
            if not g["passed"]:
                return f"{g['gate']}_gate"
    if reason == "admissible":
        return "outranked"
    return str(reason)


def run_study(cfg: StudyConfig, sample: AuditSample, audit_config: AuditConfig | None = None,
              run_root: str | Path | None = None) -> StudyRun:
    """Run every arm and seed and score what each kept (see the module docstring)."""
    from cogrsi_lib.pairs.records import build_splits

    pool = oracle_dev_items(cfg.dev_stories, cfg.dev_seed, max_depth=cfg.dev_max_depth,
                            config=sampler_config(cfg.dev_situations))
    splits = build_splits(**dict(cfg.pairs))
    reader = SymbolicReader(BANK_RULES, reading=cfg.reading, default=cfg.default)
    auditor = bank_auditor(sample, audit_config)
    audit_gate = AuditRegistrationGate(AuditGate(auditor, cfg.reject))
    known = builtin_arms(cfg.delta, cfg.min_nonneg)
    arms = [known[a] for a in cfg.arms]
    settings = LoopSettings(rounds=cfg.rounds, discovery_size=cfg.discovery_size,
                            trial_size=cfg.trial_size, n_trials=cfg.n_trials,
                            max_candidates=cfg.max_candidates,
                            failures_per_group=cfg.failures_per_group)
    parts: dict[str, list[pl.DataFrame]] = {"candidates": [], "rounds": [], "replies": [],
                                            "scores": []}
    finals: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(dir=run_root) as tmp:
        for seed in cfg.seeds:
            final = schedule(pool, seed, cfg.rounds, cfg.discovery_size, cfg.trial_size,
                             cfg.n_trials, cfg.final_size)["final"]
            evaluator = Scorer(reader, cfg.batch_size)
            learned = {"none": ""}
            for arm in arms:
                scorer = Scorer(reader, cfg.batch_size)
                gates: dict[str, Gate] = {}
                if "counterfactual" in arm.gates:
                    gates["counterfactual"] = CounterfactualGate(scorer, splits["gate"],
                                                                 cfg.gate_tolerance)
                if "audit" in arm.gates:
                    gates["audit"] = audit_gate
                shadow: dict[str, Gate] = {}
                if cfg.shadow:
                    shadow["counterfactual"] = gates.get("counterfactual") or CounterfactualGate(
                        scorer, splits["gate"], cfg.gate_tolerance)
                builder = Builder(ScriptedWorld([], bad_reply_share=cfg.bad_reply_share)
                                  .backend("scripted-bank-builder"),
                                  seed=arm_seed(arm.name, seed))
                res = Loop(arm, settings, seed=seed, scorer=scorer, builder=builder, pool=pool,
                           run_dir=Path(tmp) / arm.name / f"seed{seed}", gates=gates,
                           pair_records=splits["gate"], shadow_gates=shadow).run()
                learned[arm.name] = res.principle
                for name in ("candidates", "rounds", "replies"):
                    parts[name].append(res.table(name))
                finals.append({"arm": arm.name, "seed": seed,
                               "artifact_json": res.artifact.to_json()})
            dev = pl.DataFrame({
                "arm": list(learned), "seed": [seed] * len(learned),
                "principle": list(learned.values()), "dev_n": [len(final)] * len(learned),
                "dev_correct": [sum(evaluator.correct(t, final)) for t in learned.values()]})
            pairs = pair_scores(evaluator, splits["eval"], learned).rename({"label": "arm"})
            parts["scores"].append(dev.join(
                pairs.select("arm", "n_pairs", "valid_pairs", "pair_validity", "item_accuracy"),
                on="arm", how="left", maintain_order="left"))

    def cat(name: str) -> pl.DataFrame:
        return pl.concat(parts[name], how="diagonal_relaxed") if parts[name] else pl.DataFrame()

    candidates = cat("candidates")
    audits = auditor.audit_many(
        sorted({t for t in candidates["written"] if t} | {r.text for r in BANK_RULES}))
    verdict_of = {a.text: a.verdict.verdict for a in audits}
    candidates = candidates.with_columns(
        outcome=pl.Series([_outcome(r) for r in candidates.iter_rows(named=True)],
                          dtype=pl.Utf8),
        verdict=pl.Series([verdict_of.get(t) if t else None for t in candidates["written"]],
                          dtype=pl.Utf8))
    kept_rows = []
    for f in finals:
        art = artifact_from_json(f["artifact_json"])
        for k, r in enumerate(getattr(art, "rules", ()), start=1):
            kept_rows.append({"arm": f["arm"], "seed": f["seed"], "entry": k, "text": r.text(),
                              "verdict": verdict_of.get(r.text()) or
                              auditor.audit(r.text()).verdict.verdict})
    kept = pl.DataFrame(kept_rows, schema={"arm": pl.Utf8, "seed": pl.Int64, "entry": pl.Int64,
                                           "text": pl.Utf8, "verdict": pl.Utf8})
    base = _accuracy(reader, pool, "")
    bank = pl.DataFrame([{
        "rule_id": r.rule_id, "text": r.text, "verdict": verdict_of[r.text],
        "dev_accuracy_alone": _accuracy(reader, pool, f"(1) {r.text}"),
        "dev_accuracy_default": base} for r in BANK_RULES])
    return StudyRun(candidates, cat("rounds"), cat("replies"), kept, cat("scores"), bank,
                    dict(reader.unknown), cfg, verdict_table(auditor, audits))


def verdict_table(auditor: Auditor, audits: Sequence[RuleAudit]) -> pl.DataFrame:
    """Per audited text: its verdict, its shared counterexamples and how many of them lie in
    worlds outside ExploreToM's situations (``only_outside``: all of them, CogRSI §5.4)."""
    cx = auditor.counterexample_table(audits)
    per = {r["rule_id"]: r for r in cx.group_by("rule_id", maintain_order=True).agg(
        pl.len().alias("n"), pl.col("outside_exploretom").sum().alias("out")).to_dicts()}
    rows = []
    for a in audits:
        n = int(per[a.rule_id]["n"]) if a.rule_id in per else 0
        out = int(per[a.rule_id]["out"]) if a.rule_id in per else 0
        rows.append({"text": a.text, "verdict": a.verdict.verdict, "counterexamples": n,
                     "inside_exploretom": n - out, "outside_exploretom": out,
                     "only_outside": n > 0 and out == n})
    return pl.DataFrame(rows, schema={
        "text": pl.Utf8, "verdict": pl.Utf8, "counterexamples": pl.Int64,
        "inside_exploretom": pl.Int64, "outside_exploretom": pl.Int64,
        "only_outside": pl.Boolean})


def _accuracy(reader: SymbolicReader, items: Sequence[Any], principle: str) -> float:
    recs = reader.with_principle(principle).answer_batch(items)
    return 100.0 * sum(bool(r.correct) for r in recs) / len(recs)


def _counts(cands: pl.DataFrame, replies: pl.DataFrame, kept: pl.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {
        "builder_replies": replies.height,
        "builder_rejected": int((replies["status"] != "ok").sum()) if replies.height else 0,
        "proposals": cands.height,
        "admissions": int((cands["outcome"] == "admitted").sum()) if cands.height else 0,
    }
    for r in REASONS:
        out[f"rejected_{r}"] = int((cands["outcome"] == r).sum()) if cands.height else 0
    adm = cands.filter(pl.col("outcome") == "admitted") if cands.height else cands
    written = adm.filter(pl.col("verdict").is_not_null()) if adm.height else adm
    out["admitted_invalid"] = int((written["verdict"] == "invalid").sum()) if adm.height else 0
    out["admitted_valid"] = int((written["verdict"] == "valid").sum()) if adm.height else 0
    out["kept_rules"] = kept.height
    for v in VERDICT_COLUMNS:
        n = int((kept["verdict"] == v).sum()) if kept.height else 0
        out[f"kept_{v}"] = n
    for v in VERDICT_COLUMNS:
        out[f"kept_{v}_share"] = (100.0 * out[f"kept_{v}"] / kept.height
                                  if kept.height else None)
    return out


def comparison_table(run: StudyRun) -> pl.DataFrame:
    """One row per arm and seed, then one pooled row per arm (``seed`` null). ``proposals``
    equals ``admissions`` plus the ``rejected_*`` columns (``counts_add_up``)."""
    rows = []
    arms = list(run.config.arms)
    for arm in arms:
        for seed in [*run.config.seeds, None]:
            def sel(df: pl.DataFrame, arm: str = arm, seed: int | None = seed) -> pl.DataFrame:
                if not df.height:
                    return df
                out = df.filter(pl.col("arm") == arm)
                return out if seed is None else out.filter(pl.col("seed") == seed)
            row: dict[str, Any] = {"arm": arm, "seed": seed}
            row |= _counts(sel(run.candidates), sel(run.replies), sel(run.kept))
            sc = sel(run.scores)
            row["dev_n"] = int(sc["dev_n"].sum())
            row["dev_accuracy"] = 100.0 * float(sc["dev_correct"].sum()) / max(1, row["dev_n"])
            row["pair_accuracy"] = float(sc["item_accuracy"].mean())
            row["pair_validity"] = float(sc["pair_validity"].mean())
            row["counts_add_up"] = row["proposals"] == row["admissions"] + sum(
                row[f"rejected_{r}"] for r in REASONS)
            rows.append(row)
    base = run.scores.filter(pl.col("arm") == "none")
    rows.append({"arm": "none (default reader, empty library)", "seed": None,
                 "dev_n": int(base["dev_n"].sum()),
                 "dev_accuracy": 100.0 * float(base["dev_correct"].sum())
                 / max(1, int(base["dev_n"].sum())),
                 "pair_accuracy": float(base["item_accuracy"].mean()),
                 "pair_validity": float(base["pair_validity"].mean())})
    shares = {f"kept_{v}_share": pl.Float64 for v in VERDICT_COLUMNS}
    # a run that kept no rule has no share in any row: the columns stay typed
    return pl.DataFrame(rows, infer_schema_length=None, schema_overrides=shares)


def margin_passing(candidates: pl.DataFrame) -> pl.DataFrame:
    """Per arm: candidates that pass the margin and the cohort rule, counted by verdict."""
    ok = candidates.filter(pl.col("passes_margin") & pl.col("passes_cohorts"))
    rows = []
    for arm in candidates["arm"].unique(maintain_order=True):
        sub = ok.filter(pl.col("arm") == arm)
        rows.append({"arm": arm, "passing": sub.height,
                     **{v: int((sub["verdict"] == v).sum()) for v in VERDICT_COLUMNS},
                     "retire": int(sub["verdict"].is_null().sum())})
    return pl.DataFrame(rows)


def comparison_markdown(table: pl.DataFrame, run: StudyRun) -> str:
    """The report: label, settings, the pooled table, the per-seed table and the kept rules."""
    from cogrsi_lib.reports import markdown_table

    cfg = run.config
    pooled = table.filter(pl.col("seed").is_null())
    short = ["arm", "proposals", "admissions", *[f"rejected_{r}" for r in REASONS],
             "kept_rules", *[f"kept_{v}" for v in VERDICT_COLUMNS], "dev_accuracy",
             "pair_accuracy", "pair_validity"]
    per_seed = table.filter(pl.col("seed").is_not_null())
    kept = (run.kept.group_by("arm", "text", "verdict",
                              maintain_order=True).agg(pl.len().alias("seeds_kept"))
            .sort("arm", "seeds_kept", descending=[False, True])) if run.kept.height else run.kept
    lines = [
        f"# Registration with and without the audit ({LABEL})", "",
        f"Arms {', '.join(cfg.arms)}; seeds {list(cfg.seeds)}; {cfg.rounds} rounds; cohorts of "
        f"{cfg.trial_size} ({cfg.n_trials} trials); margin {cfg.delta:g} points, gain >= 0 on "
        f"{cfg.min_nonneg} cohorts; gate tolerance {cfg.gate_tolerance} pairs; audit rejects "
        f"{', '.join(cfg.reject)}. Development data: {cfg.dev_stories} oracle stories "
        f"(seed {cfg.dev_seed}, depth <= {cfg.dev_max_depth}; situations: "
        f"{SITUATIONS[cfg.dev_situations]}); dev accuracy is on each seed's "
        f"final cohort of {cfg.final_size} questions no registration step saw. Pairs: the eval "
        f"split. Reader: translation {cfg.reading} of each entry, first applicable entry "
        f"answers, default answer '{cfg.default}'. Unknown rule texts met: "
        f"{sum(run.unknown.values())}.", "",
        "## Pooled over seeds", "", markdown_table(pooled.select(short), ".3g"), "",
        "## The bank: audit verdict and accuracy of each rule alone (whole dev pool)", "",
        markdown_table(run.bank.select("rule_id", "verdict", "dev_accuracy_alone",
                                       "dev_accuracy_default"), ".3g"), "",
        "## Proposals that pass the margin and cohort rule, by audit verdict", "",
        "What the audit gate meets: every candidate the accuracy rule admits (the gates run "
        "on these only), by its written rule's verdict (a retire writes none).", "",
        markdown_table(margin_passing(run.candidates), ".3g"), "",
        "## Kept rules (final libraries)", "",
        markdown_table(kept, ".3g") if kept.height else "(none)", "",
        "## Per seed", "", markdown_table(per_seed.select(["seed", *short]), ".3g"), "",
    ]
    return "\n".join(lines)


def write_comparison(run: StudyRun, out: str | Path) -> pl.DataFrame:
    """``registration_comparison.md/.parquet/.csv`` and the candidate and kept-rule logs."""
    from cogrsi_lib.reports import write_table

    out = Path(out)
    table = comparison_table(run)
    table.write_parquet(out / "registration_comparison.parquet")
    write_table(table, out / "registration_comparison_full", title=LABEL)
    (out / "registration_comparison.md").write_text(comparison_markdown(table, run),
                                                     encoding="utf-8")
    run.candidates.write_parquet(out / "registration_candidates.parquet")
    run.kept.write_parquet(out / "registration_kept.parquet")
    run.bank.write_parquet(out / "registration_bank.parquet")
    return table


def run_from_params(params: Mapping[str, Any], out: str | Path) -> pl.DataFrame:
    """The comparison alone, from ``params.yaml: audit`` (its sample, sandbox settings and
    ``registration``), without the rest of the audit stage (no translator model is loaded)."""
    from cogrsi_lib.stage_params import load

    p = load("audit", params)
    run = run_study(p.registration, p.sample(), p.config())
    Path(out).mkdir(parents=True, exist_ok=True)
    return write_comparison(run, out)


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m cogrsi_lib.loops.registration_study [--params F] [--out D]``."""
    import argparse

    import yaml

    ap = argparse.ArgumentParser(description="symbolic audit-in-registration comparison")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--out", default="reports/audit")
    args = ap.parse_args(argv)
    with open(args.params, encoding="utf-8") as fh:
        params = yaml.safe_load(fh)["audit"]
    table = run_from_params(params, args.out)
    print(table.filter(pl.col("seed").is_null()).select(
        "arm", "proposals", "admissions", "kept_rules", "kept_invalid", "dev_accuracy",
        "pair_accuracy", "pair_validity"))


if __name__ == "__main__":
    main()
