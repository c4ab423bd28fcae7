"""Scorer of the nested-belief benchmark (plan §4 Suite A core metrics, §7, §8, §17).

``score(items, replies)`` takes raw model replies, parses each strictly
(:mod:`.reply`) and computes, from per-item records:

* accuracy by depth, false-belief and true-belief accuracy (overall and by depth);
* leakage rate: the share of false-belief items answered with reality (plan §3 H1,
  §8.3); an unparsed reply counts in the denominator and is not a leak;
* degradation: the drop ``A_k - A_{k+1}`` and the least-squares slope of accuracy over
  depth (plan §8.2);
* depth AUC: the trapezoid area under accuracy over the depths present (R0..R4),
  divided by their span (4), so that 1.0 is perfect;
* Brier score over items whose reply has a confidence (the probability the answer is
  correct, plan §8.6);
* recursive lift per depth: accuracy minus the best shortcut heuristic's accuracy on
  the same items, on all items and on the adversarial partition (plan §7).

Unparsed replies are counted and scored wrong, never mapped to an option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from cogrsi_lib.nested.baselines import ALL, baseline_table, best_shortcut
from cogrsi_lib.nested.facts import ADVERSARIAL, TRUE_BELIEF
from cogrsi_lib.nested.heuristics import HEURISTICS, Heuristic
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.nested.reply import parse_reply
from cogrsi_lib.oracle.lies import LIE_CONDITIONS

_RECORD_SCHEMA = {
    "id": pl.Utf8, "depth": pl.Int64, "partition": pl.Utf8, "false_belief": pl.Boolean,
    "gold": pl.Utf8, "reality": pl.Utf8, "reply": pl.Utf8, "parsed": pl.Boolean,
    "error": pl.Utf8, "answer": pl.Utf8, "confidence": pl.Float64, "correct": pl.Boolean,
    "leaked": pl.Boolean, "lie_condition": pl.Utf8,
}
_DEPTH_SCHEMA = {
    "depth": pl.Int64, "n": pl.Int64, "correct": pl.Int64, "accuracy": pl.Float64,
    "n_unparsed": pl.Int64, "n_false_belief": pl.Int64, "false_belief_accuracy": pl.Float64,
    "n_true_belief": pl.Int64, "true_belief_accuracy": pl.Float64,
    "leakage_rate": pl.Float64, "adversarial_accuracy": pl.Float64,
}


@dataclass(frozen=True)
class NestedScore:
    """Per-item records, the per-depth table and the summary metrics of one run."""

    records: pl.DataFrame
    by_depth: pl.DataFrame
    by_lie_condition: pl.DataFrame
    n: int
    n_unparsed: int
    accuracy: float
    false_belief_accuracy: float | None
    true_belief_accuracy: float | None
    leakage_rate: float | None
    degradation_slope: float | None
    depth_auc: float | None
    brier: float | None
    n_confidence: int

    def summary(self) -> dict[str, Any]:
        """The scalar metrics plus accuracy and lift per depth (plan §17 profile)."""
        out: dict[str, Any] = {
            "n": self.n, "n_unparsed": self.n_unparsed, "accuracy": self.accuracy,
            "false_belief_accuracy": self.false_belief_accuracy,
            "true_belief_accuracy": self.true_belief_accuracy,
            "leakage_rate": self.leakage_rate, "degradation_slope": self.degradation_slope,
            "depth_auc": self.depth_auc, "brier": self.brier, "n_confidence": self.n_confidence,
        }
        for row in self.by_depth.iter_rows(named=True):
            out[f"R{row['depth']}_accuracy"] = row["accuracy"]
            out[f"R{row['depth']}_recursive_lift"] = row["recursive_lift"]
        return out


def _aligned(items: Sequence[NestedItem], replies: Sequence[Any] | Mapping[str, Any]) -> list:
    if isinstance(replies, Mapping):
        missing = [it.id for it in items if it.id not in replies]
        if missing:
            raise ValueError(f"no reply for {len(missing)} item(s), e.g. {missing[:3]}")
        return [replies[it.id] for it in items]
    if isinstance(replies, str) or len(replies) != len(items):
        raise ValueError("replies must be a mapping by item id or a sequence, one per item")
    return list(replies)


def item_records(
    items: Sequence[NestedItem], replies: Sequence[Any] | Mapping[str, Any]
) -> pl.DataFrame:
    """One record per item: the raw reply, how it parsed, and whether it is correct or leaked."""
    rows = []
    for it, text in zip(items, _aligned(items, replies), strict=True):
        r = parse_reply(text, it.options)
        correct = r.parsed and r.answer == it.gold
        rows.append({
            "id": it.id, "depth": it.depth, "partition": it.partition,
            "false_belief": it.false_belief, "gold": it.gold, "reality": it.reality,
            "reply": text if isinstance(text, str) else repr(text), "parsed": r.parsed,
            "error": r.error, "answer": r.answer, "confidence": r.confidence,
            "correct": correct, "leaked": it.false_belief and r.answer == it.reality,
            "lie_condition": it.strata.get("lie_condition", "no_lie"),
        })
    return pl.DataFrame(rows, schema=_RECORD_SCHEMA)


def lie_condition_table(records: pl.DataFrame) -> pl.DataFrame:
    """Accuracy per lie condition (plan §5.4: no lie, unlabelled lie, known liar, lie revealed
    are scored separately), overall and on false-belief items, from :func:`item_records`."""
    rank = {c: i for i, c in enumerate(LIE_CONDITIONS)}
    return (
        records.group_by("lie_condition", maintain_order=True)
        .agg(
            pl.len().alias("n"),
            pl.col("correct").mean().alias("accuracy"),
            pl.col("false_belief").sum().alias("n_false_belief"),
            pl.col("correct").filter(pl.col("false_belief")).mean()
            .alias("false_belief_accuracy"),
            (~pl.col("parsed")).sum().alias("n_unparsed"),
        )
        .with_columns(pl.col("lie_condition").replace_strict(rank, default=len(rank),
                                                             return_dtype=pl.Int64).alias("_r"))
        .sort("_r").drop("_r")
    )


def _rate(mask: pl.Series) -> float | None:
    """The share of True; None for an empty selection (shown empty in tables)."""
    return float(mask.mean()) if mask.len() else None  # type: ignore[arg-type]


def slope(depths: Sequence[float], accuracy: Sequence[float]) -> float | None:
    """Least-squares slope of accuracy over depth (None with fewer than two depths)."""
    if len(depths) < 2:
        return None
    d, a = np.asarray(depths, float), np.asarray(accuracy, float)
    dd = d - d.mean()
    return float(np.sum(dd * (a - a.mean())) / np.sum(dd * dd))


def depth_auc(depths: Sequence[float], accuracy: Sequence[float]) -> float | None:
    """Trapezoid area under accuracy over depth, divided by the depth span (1.0 = perfect);
    None with fewer than two depths."""
    if len(depths) < 2:
        return None
    d, a = np.asarray(depths, float), np.asarray(accuracy, float)
    return float(np.sum((d[1:] - d[:-1]) * (a[1:] + a[:-1]) / 2) / (d[-1] - d[0]))


def brier(confidence: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Mean squared gap between confidence and correctness (None with no confidences)."""
    if not len(confidence):
        return None
    c, y = np.asarray(confidence, float), np.asarray(correct, float)
    return float(np.mean((c - y) ** 2))


def score(
    items: Sequence[NestedItem],
    replies: Sequence[Any] | Mapping[str, Any],
    heuristics: Mapping[str, Heuristic] = HEURISTICS,
    baselines: pl.DataFrame | None = None,
) -> NestedScore:
    """Score raw ``replies`` (one per item, in order, or a mapping by item id).

    ``baselines`` is ``baseline_table(items, heuristics)`` when already computed.
    """
    if not items:
        raise ValueError("no items to score")
    rec = item_records(items, replies)
    if baselines is None:
        baselines = baseline_table(items, heuristics)
    best_all = best_shortcut(baselines, ALL)
    best_adv = best_shortcut(baselines, ADVERSARIAL).rename({
        "best_heuristic": "best_heuristic_adversarial",
        "best_heuristic_accuracy": "best_heuristic_adversarial_accuracy",
    })
    rows = []
    for depth in sorted(set(rec["depth"].to_list())):
        d = rec.filter(pl.col("depth") == depth)
        fb = d.filter(pl.col("false_belief"))
        tb = d.filter(pl.col("partition") == TRUE_BELIEF)
        adv = d.filter(pl.col("partition") == ADVERSARIAL)
        rows.append({
            "depth": depth, "n": d.height, "correct": int(d["correct"].sum()),
            "accuracy": _rate(d["correct"]), "n_unparsed": int((~d["parsed"]).sum()),
            "n_false_belief": fb.height, "false_belief_accuracy": _rate(fb["correct"]),
            "n_true_belief": tb.height, "true_belief_accuracy": _rate(tb["correct"]),
            "leakage_rate": _rate(fb["leaked"]),
            "adversarial_accuracy": _rate(adv["correct"]),
        })
    by_depth = pl.DataFrame(rows, schema=_DEPTH_SCHEMA).with_columns(
        (pl.col("accuracy") - pl.col("accuracy").shift(-1)).alias("drop_to_next"),
    )
    by_depth = by_depth.join(best_all, on="depth", how="left", maintain_order="left")
    by_depth = by_depth.join(best_adv, on="depth", how="left", maintain_order="left")
    by_depth = by_depth.with_columns(
        (pl.col("accuracy") - pl.col("best_heuristic_accuracy")).alias("recursive_lift"),
        (pl.col("adversarial_accuracy") - pl.col("best_heuristic_adversarial_accuracy"))
        .alias("recursive_lift_adversarial"),
    ).sort("depth")
    fb_all = rec.filter(pl.col("false_belief"))
    tb_all = rec.filter(pl.col("partition") == TRUE_BELIEF)
    conf = rec.filter(pl.col("confidence").is_not_null())
    depths, acc = by_depth["depth"].to_list(), by_depth["accuracy"].to_list()
    return NestedScore(
        records=rec,
        by_depth=by_depth,
        by_lie_condition=lie_condition_table(rec),
        n=rec.height,
        n_unparsed=int((~rec["parsed"]).sum()),
        accuracy=float(rec["correct"].mean()),  # type: ignore[arg-type]
        false_belief_accuracy=_rate(fb_all["correct"]),
        true_belief_accuracy=_rate(tb_all["correct"]),
        leakage_rate=_rate(fb_all["leaked"]),
        degradation_slope=slope(depths, acc),
        depth_auc=depth_auc(depths, acc),
        brier=brier(conf["confidence"].to_list(), conf["correct"].to_list()),
        n_confidence=conf.height,
    )
