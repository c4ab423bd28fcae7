"""The audit under each testimony policy of the oracle (SEMANTICS.md, "Testimony").

The seeds do not settle whether a listener takes a whisper against their own sight:
``latest`` (the default) says yes, ``fresher_access`` (Hi-ToM's released rule) only when the
speaker saw the object later.  :func:`policy_samples` rebuilds the audit sample with the same
worlds under each policy; :func:`gold_difference_table` counts the questions whose gold
answer the policy changes; :func:`policy_verdict_table` audits hand-written rules with their
fixed translations on each sample, so the rules' verdicts can be read side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from cogrsi_lib.audit.audit import AuditConfig, Auditor
from cogrsi_lib.audit.handwritten import RULES, HandwrittenRule, scripted_translator
from cogrsi_lib.audit.snapshot import AuditSample, build_sample
from cogrsi_lib.audit.translate import Translator
from cogrsi_lib.oracle.world import TESTIMONY_POLICIES


def policy_samples(sample: AuditSample) -> dict[str, AuditSample]:
    """The sample's worlds under each testimony policy (the sample itself for its own)."""
    out = {}
    for policy in TESTIMONY_POLICIES:
        if all(w.testimony == policy for w in sample.worlds):
            out[policy] = sample
        else:
            worlds = [replace(w, testimony=policy) for w in sample.worlds]
            out[policy] = build_sample(worlds, sample.max_depth, sample.seed)
    return out


def gold_difference_table(samples: dict[str, AuditSample]) -> pl.DataFrame:
    """Per kind and depth: questions, and how many gold answers differ between policies."""
    a, b = (samples[p].questions for p in TESTIMONY_POLICIES)
    if a.height != b.height:
        raise ValueError("the policy samples ask different questions")
    both = a.select("kind", "depth", "via", gold_a="gold").with_columns(
        gold_b=b["gold"], via_b=b["via"])
    differ = pl.col("gold_a") != pl.col("gold_b")
    return (
        both.group_by("kind", "depth", maintain_order=True)
        .agg(pl.len().alias("questions"), differ.sum().alias("gold_differs"),
             (differ & (pl.col("via") == "whisper")).sum().alias("differs_latest_via_whisper"))
        .with_columns((pl.col("gold_differs") / pl.col("questions")).alias("share"))
        .sort("kind", "depth")
    )


def policy_verdict_table(samples: dict[str, AuditSample], config: AuditConfig,
                         rules: Sequence[HandwrittenRule] = RULES) -> pl.DataFrame:
    """Hand-written rules' verdicts (their two fixed translations) under each policy;
    ``expected`` is the verdict each rule is known to have under the default, ``latest``."""
    rules = list({r.text: r for r in rules}.values())
    translators = [Translator("A", scripted_translator("A", rules), "literal", 0),
                   Translator("B", scripted_translator("B", rules), "plain", 1)]
    table = pl.DataFrame({"rule_id": [r.rule_id for r in rules],
                          "expected": [r.expected for r in rules]})
    for policy, sample in samples.items():
        audits = Auditor(sample, translators, config).audit_many(
            [(r.rule_id, r.text) for r in rules])
        rows = pl.DataFrame([{"rule_id": r.rule_id, f"verdict_{policy}": r.verdict.verdict,
                              f"shared_counterexamples_{policy}":
                                  r.verdict.n_shared_counterexamples} for r in audits])
        table = table.join(rows, on="rule_id", how="left", maintain_order="left")
    return table
