"""Tables and figures of the audit stage (CogRSI Table 1 "Invalid rules", §5.4, Figure 7b).

Everything is computed from the per-rule audit records: the verdict table (one row per
rule, joined with its source's arm, round, admission and trial gain), the verdicts by arm
(the share of invalid rules among all and among decided ones, and among admitted ones),
the trial-gain distributions of valid and invalid rules with their difference and total
variation distance, and the translator roles. The translations are also the stage's
records (:data:`RECORDS`, ``records.parquet``: one per rule and translator).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Sequence
from pathlib import Path

import altair as alt
import numpy as np
import polars as pl

from cogrsi_lib.audit.audit import RuleAudit
from cogrsi_lib.audit.snapshot import AuditSample
from cogrsi_lib.audit.translate import Translator
from cogrsi_lib.audit.verdict import VERDICTS, Verdict
from cogrsi_lib.oracle.render import render
from cogrsi_lib.records_schema import RecordSchema, calls_json, messages_of


class ExpectedVerdictError(AssertionError):
    """A rule with a known verdict got another one."""


def _verdict_row_schema() -> dict[str, pl.DataType]:
    """The types of :meth:`RuleAudit.row`'s columns, from :class:`Verdict`'s fields and the
    row's own: declared, so a column null in every row (an agreement no rule reached) keeps
    its type."""
    kinds = {int: pl.Int64, float: pl.Float64, str: pl.Utf8, bool: pl.Boolean}
    hints = typing.get_type_hints(Verdict)
    verdict = {}
    for f in dataclasses.fields(Verdict):
        hint = hints[f.name]
        (kind,) = [t for t in (typing.get_args(hint) or (hint,)) if t is not type(None)]
        verdict[f.name] = kinds[kind]
    return {"rule_id": pl.Utf8, "rule_sha": pl.Utf8, "text": pl.Utf8, **verdict,
            "decided": pl.Boolean, "translation_a": pl.Utf8, "translation_b": pl.Utf8,
            "capped_a": pl.Boolean, "capped_b": pl.Boolean, "recompiled": pl.Utf8,
            "verdict_before_recompile": pl.Utf8}


def verdict_table(audits: Sequence[RuleAudit], rules: pl.DataFrame,
                  translations: str = "model translations") -> pl.DataFrame:
    """One row per rule: its verdict record joined with the rules source's columns;
    ``translations`` says where the code came from (models, or the reference code)."""
    rows = pl.DataFrame([a.row() for a in audits], schema=_verdict_row_schema())
    meta = rules.drop("text")
    return meta.join(rows, on="rule_id", how="left", maintain_order="left").with_columns(
        translations=pl.lit(translations))


def translation_table(audits: Sequence[RuleAudit]) -> pl.DataFrame:
    """One row per rule and translator: reply, code, status, cap, sandbox outcome."""
    return pl.DataFrame([r for a in audits for r in a.translation_rows()],
                        infer_schema_length=None)


#: the audit's records (``records.parquet``): one per rule and translator, the core as
#: :mod:`cogrsi_lib.records_schema` defines it for a translation (``system`` the translator,
#: ``item_id``/``story_id`` the rule, ``source`` its arm, ``answer`` the code, no gold), then
#: the translation's cap and finish and its sandbox run on the sample (``run_*``)
RECORDS = RecordSchema("audit", {
    "rule_sha": pl.Utf8, "prompt_wording": pl.Utf8, "finish_reason": pl.Utf8,
    "capped": pl.Boolean, "max_tokens": pl.Int64, "structured": pl.Boolean, "error": pl.Utf8,
    "run_outcome": pl.Utf8, "run_message": pl.Utf8, "run_n_applies": pl.Int64,
    "run_n_errors": pl.Int64, "run_n_no_answer": pl.Int64, "run_error_samples_json": pl.Utf8,
    "run_isolation": pl.Utf8,
})


def translation_records(audits: Sequence[RuleAudit], translators: Sequence[Translator],
                        rules: pl.DataFrame) -> pl.DataFrame:
    """The translations of ``audits`` as the stage's records (:data:`RECORDS`); the
    translators give each call's messages, ``rules`` each rule's arm."""
    by_name = {t.name: t for t in translators}
    arms = dict(zip(rules["rule_id"], rules["arm"], strict=True))
    rows = []
    for a in audits:
        for t in a.translation_rows():
            translator = by_name[t["translator"]]
            rows.append({
                "run": 0, "system": t["translator"], "model": t["model"],
                "source": arms.get(a.rule_id), "item_id": a.rule_id, "story_id": a.rule_id,
                "prompt": calls_json({"translation": messages_of(translator.messages(a.text))}),
                "reply": calls_json({"translation": [t["reply"]]}),
                "parse_status": t["status"], "answer": t["code"],
                "calls": 1, "cached_calls": int(t["from_cache"]),
                "prompt_tokens": t["prompt_tokens"], "completion_tokens": t["completion_tokens"],
                "rule_sha": t["rule_sha"], "prompt_wording": t["prompt"],
                "finish_reason": t["finish_reason"], "capped": t["capped"],
                "max_tokens": t["max_tokens"], "structured": t["structured"],
                "error": t["error"], "run_outcome": t["run_outcome"],
                "run_message": t["run_message"], "run_n_applies": t["run_n_applies"],
                "run_n_errors": t["run_n_errors"], "run_n_no_answer": t["run_n_no_answer"],
                "run_error_samples_json": t["run_error_samples"],
                "run_isolation": t["run_isolation"],
            })
    return RECORDS.frame(rows)


def verdicts_by_arm(verdicts: pl.DataFrame, column: str = "verdict") -> pl.DataFrame:
    """Counts of each verdict by arm, the invalid share of all and of decided rules, and
    invalid among admitted rules (Table 1's column; §5.4 "What each loop kept")."""
    v = pl.col(column)
    decided = v.is_in(["invalid", "valid"])
    admitted = pl.col("admitted").fill_null(False)
    aggs = [pl.len().alias("rules")]
    aggs += [(v == k).sum().alias(k) for k in VERDICTS]
    aggs += [
        decided.sum().alias("decided"),
        ((v == "invalid").sum() / pl.len()).alias("invalid_of_all"),
        pl.when(decided.sum() > 0)
        .then((v == "invalid").sum() / decided.sum())
        .otherwise(None)
        .alias("invalid_of_decided"),
        (pl.col("translation_a").ne("ok") | pl.col("translation_b").ne("ok")).sum()
        .alias("without_code"),
        (pl.col("capped_a") | pl.col("capped_b")).sum().alias("capped"),
        (pl.col("outcome_a").ne("ok") | pl.col("outcome_b").ne("ok")).sum().alias("failed_run"),
        admitted.sum().alias("admitted"),
        (admitted & decided).sum().alias("admitted_decided"),
        (admitted & (v == "invalid")).sum().alias("admitted_invalid"),
    ]
    by_arm = verdicts.group_by("arm", maintain_order=True).agg(aggs)
    total = verdicts.select(aggs).with_columns(pl.lit("all").alias("arm"))
    return pl.concat([by_arm, total.select(by_arm.columns)], how="vertical_relaxed")


def table1_with_invalid_share(loops_run: str | Path, by_arm: pl.DataFrame) -> pl.DataFrame:
    """A loops run's Table 1 (``table1.csv`` in the run's folder) with the invalid-rules
    column filled from :func:`verdicts_by_arm`: per arm, the share (in points) of the texts it
    proposed that have a shared counterexample, and ``decided_rules``, how many of them the
    audit could decide (a share of 0 over none decided says nothing); empty for the
    no-principle and expert rows and for an arm whose rules this audit did not see."""
    path = Path(loops_run) / "table1.csv"
    if not path.is_file():
        raise FileNotFoundError(f"not a loops run (run the loops stage first): no {path}")
    table1 = pl.read_csv(path)
    share = by_arm.filter(pl.col("arm") != "all").select(
        pl.col("arm").alias("label"), (pl.col("invalid_of_all") * 100).alias("invalid_rules"),
        pl.col("decided").alias("decided_rules"))
    return (table1.drop("invalid_rules", "decided_rules", strict=False)
            .join(share, on="label", how="left", maintain_order="left"))


def expected_check(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Rules with a known verdict: expected, got, and whether they match."""
    known = verdicts.filter(pl.col("expected").is_not_null())
    return known.select(
        "rule_id", "expected", "verdict", "reason",
        (pl.col("expected") == pl.col("verdict")).alias("matches"),
    )


def check_expected(table: pl.DataFrame) -> None:
    """Raise :class:`ExpectedVerdictError` if a known verdict was not reproduced."""
    bad = table.filter(~pl.col("matches"))
    if bad.height:
        raise ExpectedVerdictError(f"verdicts differ from the known ones: {bad.to_dicts()}")


def why_no_counterexamples(verdicts: pl.DataFrame) -> str:
    """Why a run has no shared counterexample: the verdict counts it reached instead."""
    counts = verdicts.group_by("verdict", maintain_order=True).len().sort("verdict")
    got = ", ".join(f"{n} {v}" for v, n in counts.iter_rows()) or "no rules"
    return (f"no rule was judged invalid on this run's model translations ({got}), and only "
            "an invalid rule has shared counterexamples; verdicts_reference.md audits the "
            "hand-written translations")


def why_no_trial_gain(verdicts: pl.DataFrame) -> str | None:
    """None when the audited rules carry trial gains of both verdicts, else why Figure 7b's
    comparison cannot be drawn."""
    g = verdicts.filter(pl.col("trial_gain").is_not_null()) if (
        "trial_gain" in verdicts.columns) else verdicts.clear()
    if g.is_empty():
        return ("the audited rules record no trial gain (hand-written rules have none); "
                "Figure 7b needs rules registered by the loops (audit.rules: a candidates "
                "file)")
    missing = [v for v in ("valid", "invalid") if not (g["verdict"] == v).any()]
    if missing:
        return f"no {' or '.join(missing)} rule among the {g.height} with a trial gain"
    return None


def counterexample_summary(counterexamples: pl.DataFrame) -> pl.DataFrame:
    """Per rule: shared counterexamples, the share in worlds with a lie or with an event
    ExploreToM never contains, and whether every one of them is in such a world (§5.4: 116 of
    286 invalid rules fail only there)."""
    return counterexamples.group_by("rule_id", maintain_order=True).agg(
        pl.len().alias("counterexamples"),
        pl.col("depth").min().alias("min_depth"),
        pl.col("has_lie").mean().alias("share_with_lie"),
        pl.col("outside_exploretom").mean().alias("share_outside_exploretom"),
        pl.col("outside_exploretom").all().alias("only_outside_exploretom"),
    )


def counterexample_examples(counterexamples: pl.DataFrame, sample: AuditSample) -> pl.DataFrame:
    """The first shared counterexample of each rule as a rendered story (Box D style)."""
    firsts = counterexamples.group_by("rule_id", maintain_order=True).first()
    stories = [render(sample.worlds[w]).text for w in firsts["world_id"]]
    return firsts.select("rule_id", "question_id", "question", "answer", "gold").with_columns(
        pl.Series("story", stories, dtype=pl.Utf8))


def _tv_distance(a: np.ndarray, b: np.ndarray, bins: np.ndarray) -> float:
    pa = np.histogram(a, bins)[0] / max(len(a), 1)
    pb = np.histogram(b, bins)[0] / max(len(b), 1)
    return float(0.5 * np.abs(pa - pb).sum())


def trial_gain_table(verdicts: pl.DataFrame, bin_width: float = 1.0, n_resamples: int = 2000,
                     seed: int = 0) -> pl.DataFrame:
    """Mean trial gain of valid and invalid rules, their difference (valid - invalid) with a
    95% bootstrap interval over rules, and the total variation distance of the binned
    distributions (§5.4: -1.22 vs -1.47, +0.24 [-0.82, +1.32], TV 0.16)."""
    g = verdicts.filter(pl.col("trial_gain").is_not_null())
    valid = g.filter(pl.col("verdict") == "valid")["trial_gain"].to_numpy()
    invalid = g.filter(pl.col("verdict") == "invalid")["trial_gain"].to_numpy()
    row: dict[str, float | int | None] = {
        "n_valid": len(valid), "n_invalid": len(invalid),
        "mean_valid": float(valid.mean()) if len(valid) else None,
        "mean_invalid": float(invalid.mean()) if len(invalid) else None,
        "difference": None, "low": None, "high": None, "tv_distance": None,
    }  # fmt: skip
    if len(valid) and len(invalid):
        rng = np.random.default_rng(seed)
        da = rng.choice(valid, (n_resamples, len(valid))).mean(axis=1)
        db = rng.choice(invalid, (n_resamples, len(invalid))).mean(axis=1)
        lo, hi = np.percentile(da - db, [2.5, 97.5])
        both = np.concatenate([valid, invalid])
        edges = np.arange(np.floor(both.min()), np.ceil(both.max()) + bin_width, bin_width)
        if len(edges) < 2:
            edges = np.array([both.min() - 0.5, both.max() + 0.5])
        row |= {"difference": float(valid.mean() - invalid.mean()), "low": float(lo),
                "high": float(hi), "tv_distance": _tv_distance(valid, invalid, edges)}
    return pl.DataFrame([row])


def trial_gain_bins(verdicts: pl.DataFrame, bin_width: float = 1.0) -> pl.DataFrame:
    """Share of valid and of invalid rules per trial-gain bin (``bin`` = the bin's left edge)."""
    data = verdicts.filter(
        pl.col("trial_gain").is_not_null() & pl.col("verdict").is_in(["valid", "invalid"])
    )
    return (
        data.with_columns(((pl.col("trial_gain") / bin_width).floor() * bin_width).alias("bin"))
        .group_by("verdict", "bin", maintain_order=True)
        .agg(pl.len().alias("rules"))
        .with_columns((pl.col("rules") / pl.col("rules").sum().over("verdict")).alias("share"))
        .sort("verdict", "bin")
    )


def trial_gain_chart(verdicts: pl.DataFrame, bin_width: float = 1.0) -> alt.Chart:
    """Figure 7b style: the trial-gain distribution of valid and invalid rules."""
    return (
        alt.Chart(trial_gain_bins(verdicts, bin_width))
        .mark_bar(opacity=0.6)
        .encode(
            x=alt.X("bin:Q", title="trial gain (points)"),
            y=alt.Y("share:Q", title="share of rules", stack=None),
            color=alt.Color("verdict:N", scale=alt.Scale(domain=["valid", "invalid"])),
        )
        .properties(title="Trial gain of valid and invalid rules", width=360, height=200)
    )


def translator_table(translators: Sequence[Translator]) -> pl.DataFrame:
    """The two translator roles; says so when one model plays both."""
    rows = [t.describe() for t in translators]
    same = len({r["backend"] for r in rows}) == 1
    for r in rows:
        r["note"] = "one model plays both roles (different prompt and seed)" if same else ""
    return pl.DataFrame(rows)
