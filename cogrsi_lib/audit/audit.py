"""The audit of rule texts: translate twice, run both in the sandbox, decide (CogRSI §4.3).

:class:`Auditor` holds the fixed world sample and the two translators.  ``audit_many``
translates every text with both translators (one batch per translator), recompiles
replies that hit the output cap when ``recompile_max_tokens`` is set (the paper's recorded
deviation: the verdicts before and after are both kept), runs every translation in its own
sandbox process, and decides each rule.  Identical texts and identical code are audited
once.  :func:`audit_rule` is the one-call form a registration step uses.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from cogrsi_lib.audit.sandbox import RunResult, SandboxLimits, normalise, run_many
from cogrsi_lib.audit.snapshot import AuditSample
from cogrsi_lib.audit.translate import Translation, Translator, text_id, translate_all
from cogrsi_lib.audit.verdict import Verdict, VerdictConfig, decide
from cogrsi_lib.progress import phase

#: run-summary keys that vary from run to run (seconds): logged, kept out of the tables
RUN_TIMINGS = ("wall_s", "run_s", "load_s")


@dataclass(frozen=True)
class AuditConfig:
    """Everything but the sample and the translators (``params.yaml: audit``)."""

    verdict: VerdictConfig = field(default_factory=VerdictConfig)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    recompile_max_tokens: int | None = None
    workers: int | None = None


@dataclass
class RuleAudit:
    """One rule's audit: translations, sandbox runs, verdict and shared counterexamples.

    ``before_recompile`` is the verdict with the capped replies, when some were recompiled.
    ``sandbox_s`` is the wall time of the slower of its two sandbox runs, which run in
    parallel (translation calls excluded).
    """

    rule_id: str
    text: str
    verdict: Verdict
    translations: tuple[Translation, Translation]
    runs: tuple[RunResult, RunResult]
    counterexamples: np.ndarray
    before_recompile: Verdict | None = None
    recompiled: tuple[str, ...] = ()
    sandbox_s: float = 0.0

    def row(self) -> dict[str, Any]:
        """A flat verdict row (the verdicts table)."""
        v = self.verdict.to_dict()
        ta, tb = self.translations
        return {
            "rule_id": self.rule_id, "rule_sha": text_id(self.text), "text": self.text,
            **v,
            "translation_a": ta.status, "translation_b": tb.status,
            "capped_a": ta.capped, "capped_b": tb.capped,
            "recompiled": ",".join(self.recompiled),
            "verdict_before_recompile": (self.before_recompile.verdict
                                         if self.before_recompile else v["verdict"]),
            # no sandbox seconds: they vary by run (stage.timings logs them)
        }  # fmt: skip

    def translation_rows(self) -> list[dict[str, Any]]:
        rows = []
        for t, r in zip(self.translations, self.runs, strict=True):
            rows.append({"rule_id": self.rule_id, **t.to_dict(), **{
                f"run_{k}": v for k, v in r.summary().items() if k not in RUN_TIMINGS}})
        return rows


class Auditor:
    """The audit of rule texts on one fixed sample with two translators."""

    def __init__(self, sample: AuditSample, translators: Sequence[Translator],
                 config: AuditConfig | None = None) -> None:
        if len(translators) != 2:
            raise ValueError("the audit needs exactly two translators")
        self.sample = sample
        self.translators = tuple(translators)
        self.config = config or AuditConfig()
        self.gold = np.asarray([normalise(g) for g in sample.gold], dtype=object)
        self._runs: dict[str, RunResult] = {}
        self._done: dict[str, RuleAudit] = {}
        #: wall seconds spent translating and in the sandbox, over every call
        self.timings = {"translate_s": 0.0, "sandbox_s": 0.0}

    # -- sandbox ---------------------------------------------------------------------
    def _run_all(self, translations: Iterable[Translation]) -> None:
        todo: dict[str, str] = {}
        for t in translations:
            if t.code is not None and t.code not in self._runs:
                todo[t.code] = t.code
        codes = list(todo)
        phase("audit: %d translations in the sandbox", len(codes))
        results = run_many(codes, self.sample, self.config.limits, self.config.workers)
        self._runs.update(zip(codes, results, strict=True))

    def _run_of(self, t: Translation) -> RunResult:
        if t.code is None:
            return RunResult("no_code", t.no_code_reason())
        return self._runs[t.code]

    def decide_codes(self, code_a: str | None, code_b: str | None) -> tuple[Verdict, np.ndarray]:
        """The verdict of two given translations (no translator call)."""
        runs = run_many([code_a, code_b], self.sample, self.config.limits, self.config.workers)
        return decide(runs[0], runs[1], self.gold, self.config.verdict)

    # -- rules -----------------------------------------------------------------------
    def _translate(self, texts: list[str]) -> tuple[dict[str, list[Translation]],
                                                    dict[str, list[Translation]]]:
        """Per text: the final translations, and the first ones where any was recompiled."""
        phase("audit: %d rules to translate, %d translators", len(texts), len(self.translators))
        per_role = translate_all(self.translators, texts, self.config.recompile_max_tokens)
        final: dict[str, list[Translation]] = {}
        first: dict[str, list[Translation]] = {}
        for i, t in enumerate(texts):
            pairs = [per_role[0][i], per_role[1][i]]
            final[t] = [orig if again is None else again for orig, again in pairs]
            if any(again is not None for _, again in pairs):
                first[t] = [orig for orig, _ in pairs]
        return final, first

    def audit_many(self, rules: Sequence[tuple[str, str]] | Sequence[str]) -> list[RuleAudit]:
        """Audit ``(rule_id, text)`` pairs (or bare texts, their sha as id), in order."""
        pairs = [(text_id(r), r) if isinstance(r, str) else (str(r[0]), str(r[1]))
                 for r in rules]
        new = list(dict.fromkeys(t for _, t in pairs if t not in self._done))
        if new:
            start = time.perf_counter()
            final, first = self._translate(new)
            middle = time.perf_counter()
            self._run_all(x for t in new for x in final[t])
            self.timings["translate_s"] += middle - start
            self.timings["sandbox_s"] += time.perf_counter() - middle
            for t in new:
                ta, tb = final[t]
                ra, rb = self._run_of(ta), self._run_of(tb)
                verdict, cx = decide(ra, rb, self.gold, self.config.verdict)
                before = None
                recompiled: tuple[str, ...] = ()
                if t in first:
                    fa, fb = first[t]
                    before, _ = decide(self._run_of(fa), self._run_of(fb), self.gold,
                                       self.config.verdict)
                    recompiled = tuple(x.translator for x, y in ((fa, ta), (fb, tb)) if x is not y)
                self._done[t] = RuleAudit(
                    "", t, verdict, (ta, tb), (ra, rb), cx, before, recompiled,
                    sandbox_s=max(ra.wall_s, rb.wall_s),
                )
        out = []
        for rid, t in pairs:
            done = self._done[t]
            out.append(RuleAudit(rid, t, done.verdict, done.translations, done.runs,
                                 done.counterexamples, done.before_recompile, done.recompiled,
                                 done.sandbox_s))
        return out

    def audit(self, text: str, rule_id: str | None = None) -> RuleAudit:
        return self.audit_many([(rule_id or text_id(text), text)])[0]

    # -- tables ----------------------------------------------------------------------
    def counterexample_table(self, audits: Sequence[RuleAudit],
                             max_per_rule: int | None = None) -> pl.DataFrame:
        """One row per shared counterexample: the question, both answers and the gold."""
        q = self.sample.questions
        tags = self.sample.world_tags()
        rows = []
        for a in audits:
            idx = a.counterexamples if max_per_rule is None else a.counterexamples[:max_per_rule]
            if not len(idx):
                continue
            sub = q[idx.tolist()].select(
                "question_id", "world_id", "kind", "property", "chain", "depth", "gold", "via",
                "question")
            sub = sub.with_columns(
                pl.lit(a.rule_id).alias("rule_id"),
                pl.Series("answer", [a.runs[0].answers[i] for i in idx], dtype=pl.Utf8),
            )
            rows.append(sub)
        if not rows:
            return pl.DataFrame(schema={
                "rule_id": pl.Utf8, "question_id": pl.Int64, "world_id": pl.Int64,
                "kind": pl.Utf8, "property": pl.Utf8, "chain": pl.List(pl.Utf8),
                "depth": pl.Int64, "answer": pl.Utf8, "gold": pl.Utf8, "via": pl.Utf8,
                "question": pl.Utf8, "event_types": pl.List(pl.Utf8), "has_lie": pl.Boolean,
                "outside_exploretom": pl.Boolean})
        out = pl.concat(rows).join(tags, on="world_id", how="left", maintain_order="left")
        return out.select("rule_id", "question_id", "world_id", "kind", "property", "chain",
                          "depth", "answer", "gold", "via", "question", "event_types", "has_lie",
                          "outside_exploretom")


def audit_rule(text: str, translators: Sequence[Translator], sample: AuditSample,
               config: AuditConfig | None = None) -> Verdict:
    """The audit verdict of one rule text (what an audit-gated registration step calls)."""
    return Auditor(sample, translators, config).audit(text).verdict
