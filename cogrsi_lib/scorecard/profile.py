"""The canonical scorecard: the Recursive Reasoning Profile (plan §17, §8, §20).

"Do not report one scalar alone": :class:`RecursiveProfile` holds the full §17 vector
(R0-R4 accuracy, false-belief accuracy, leakage, applied-ToM conversion, strategic target
prediction, self- and cross-agent prediction, calibration, adaptation gain, cost per 100
tasks, recursive lift versus the best shallow heuristic, lift versus the bare model).  The
optional RR scalar (§17) is only ever rendered beside that vector::

    RR = (0.50 DepthAUC + 0.20 AppliedPrediction + 0.15 StrategicPrediction
          + 0.15 Self/CrossPrediction) x (1 - LeakageRate)

with AppliedPrediction the Suite B behaviour accuracy, StrategicPrediction the Suite C
predictive accuracy and Self/CrossPrediction the mean of self- and cross-prediction
accuracy; RR is undefined (None) when any part is missing.  Architecture existence is not
part of any score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import polars as pl

from cogrsi_lib.nested.baselines import ALL, best_shortcut
from cogrsi_lib.nested.curve import depth_chart
from cogrsi_lib.nested.facts import ADVERSARIAL
from cogrsi_lib.scorecard.runs import SystemRun
from cogrsi_lib.stats import cluster_bootstrap

RR_WEIGHTS = {"depth_auc": 0.50, "applied": 0.20, "strategic": 0.15, "self_cross": 0.15}
DEPTHS = (0, 1, 2, 3, 4)

# (key, label) in the §17 order
FIELDS: tuple[tuple[str, str], ...] = (
    *((f"R{k}_accuracy", f"R{k} {'world' if k == 0 else 'belief' if k == 1 else 'nested'} "
       "accuracy") for k in DEPTHS),
    ("false_belief_accuracy", "False-belief accuracy"),
    ("leakage_rate", "Leakage rate"),
    ("abstention_rate", "Abstention rate"),
    ("depth_auc", "Depth AUC"),
    ("degradation_slope", "Accuracy-depth slope"),
    ("applied_conversion", "Applied-ToM conversion"),
    ("applied_behaviour_accuracy", "Applied behaviour accuracy"),
    ("strategic_prediction", "Strategic target prediction"),
    ("strategic_lift", "Strategic lift vs best target-free answer"),
    ("self_prediction", "Self-prediction"),
    ("cross_prediction", "Cross-agent prediction"),
    ("brier", "Calibration (Brier, Suite A)"),
    ("adaptation_gain", "Adaptation gain"),
    ("calls_per_100", "Cost / 100 tasks: calls"),
    ("tokens_per_100", "Cost / 100 tasks: tokens"),
    ("latency_per_100", "Cost / 100 tasks: latency (s; replies replayed from the cache add 0)"),
    *((f"R{k}_recursive_lift", f"Recursive lift vs best shallow heuristic, R{k}")
      for k in DEPTHS[1:]),
    ("lift_vs_bare", "Lift vs bare base model (Suite A accuracy)"),
)
RR_LABEL = "RR summary scalar (read beside the full vector, never alone)"


def rr_scalar(depth_auc: float | None, applied: float | None, strategic: float | None,
              self_cross: float | None, leakage: float | None) -> float | None:
    """The §17 optional scalar; None when any component is missing."""
    parts = (depth_auc, applied, strategic, self_cross, leakage)
    if any(p is None for p in parts):
        return None
    w = RR_WEIGHTS
    core = (w["depth_auc"] * depth_auc + w["applied"] * applied  # type: ignore[operator]
            + w["strategic"] * strategic + w["self_cross"] * self_cross)  # type: ignore[operator]
    return float(core * (1 - leakage))  # type: ignore[operator]


@dataclass(frozen=True)
class RecursiveProfile:
    """The §17 vector of one system, with RR computed from it."""

    system: str
    values: dict[str, float | None]

    @property
    def rr(self) -> float | None:
        v = self.values
        sc = [x for x in (v.get("self_prediction"), v.get("cross_prediction")) if x is not None]
        return rr_scalar(v.get("depth_auc"), v.get("applied_behaviour_accuracy"),
                         v.get("strategic_prediction"), sum(sc) / len(sc) if sc else None,
                         v.get("leakage_rate"))

    def render(self) -> str:
        """The profile as the plan prints it, RR last and beside the vector."""
        width = max(len(label) for _, label in FIELDS) + 2
        lines = [f"Recursive Reasoning Profile: {self.system}", "-" * (width + 10)]
        for key, label in FIELDS:
            lines.append(f"{(label + ':').ljust(width)}{_fmt(self.values.get(key))}")
        lines.append(f"{(RR_LABEL + ':')} {_fmt(self.rr)}")
        return "\n".join(lines)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def build_profile(run: SystemRun, bare: SystemRun | None = None) -> RecursiveProfile:
    """The §17 vector of ``run``; ``bare`` is the bare model on the same items."""
    s = run.nested.score
    by_depth = {row["depth"]: row for row in s.by_depth.iter_rows(named=True)}
    v: dict[str, float | None] = {}
    for k in DEPTHS:
        row = by_depth.get(k)
        v[f"R{k}_accuracy"] = row["accuracy"] if row else None
        if k:
            v[f"R{k}_recursive_lift"] = row["recursive_lift"] if row else None
    v |= {"false_belief_accuracy": s.false_belief_accuracy, "leakage_rate": s.leakage_rate,
          "abstention_rate": run.nested.abstention_rate, "depth_auc": s.depth_auc,
          "degradation_slope": s.degradation_slope, "brier": s.brier}
    a = run.applied.score if run.applied else None
    v["applied_conversion"] = a.conversion if a else None
    v["applied_behaviour_accuracy"] = a.behaviour_accuracy if a else None
    st = run.strategic.score if run.strategic else None
    v["strategic_prediction"] = st.predictive_accuracy if st else None
    lifts = st.lifts.filter(pl.col("baseline") != "oracle") if st else None
    v["strategic_lift"] = (float(lifts["lift"].min()) if lifts is not None and lifts.height
                           else None)
    d = run.selfpred
    v["self_prediction"] = d.self_accuracy if d else None
    v["cross_prediction"] = d.cross_accuracy if d else None
    v["adaptation_gain"] = d.adaptation_gain if d else None
    cost = run.cost()
    v["calls_per_100"], v["tokens_per_100"] = cost["calls"], cost["total_tokens"]
    v["latency_per_100"] = cost["latency_s"]
    v["lift_vs_bare"] = (s.accuracy - bare.nested.score.accuracy) if bare is not None else None
    return RecursiveProfile(run.system, v)


def scorecard_table(profiles: Sequence[RecursiveProfile]) -> pl.DataFrame:
    """Metric rows (the §17 order, RR last) by system columns."""
    rows = []
    for key, label in FIELDS:
        rows.append({"metric": label, "key": key} | {p.system: p.values.get(key)
                                                     for p in profiles})
    rows.append({"metric": RR_LABEL, "key": "rr"} | {p.system: p.rr for p in profiles})
    schema = {"metric": pl.Utf8, "key": pl.Utf8} | {p.system: pl.Float64 for p in profiles}
    return pl.DataFrame(rows, schema=schema)


def interval_table(run: SystemRun, n_resamples: int = 2000, seed: int = 0,
                   confidence: float = 0.95) -> pl.DataFrame:
    """Accuracy by depth, false-belief accuracy and leakage with cluster-bootstrap intervals
    over stories (plan §6.3: "Report confidence intervals, not just point estimates")."""
    rec = run.nested.score.records.with_columns(
        pl.col("id").str.split("-").list.first().alias("world"))
    rows = []

    def put(metric: str, part: pl.DataFrame, col: str) -> None:
        if not part.height:
            return
        res = cluster_bootstrap(part[col].cast(pl.Float64).to_numpy(), part["world"].to_list(),
                                n_resamples=n_resamples, seed=seed, confidence=confidence)
        rows.append({"system": run.system, "metric": metric, "n": part.height,
                     "estimate": res.estimate, "low": res.low, "high": res.high})

    for k in DEPTHS:
        put(f"R{k}_accuracy", rec.filter(pl.col("depth") == k), "correct")
    fb = rec.filter(pl.col("false_belief"))
    put("false_belief_accuracy", fb, "correct")
    put("leakage_rate", fb, "leaked")
    schema = {"system": pl.Utf8, "metric": pl.Utf8, "n": pl.Int64, "estimate": pl.Float64,
              "low": pl.Float64, "high": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def depth_curves(runs: Sequence[SystemRun], baselines: pl.DataFrame) -> pl.DataFrame:
    """Accuracy by depth of each system and of the best shallow heuristic, on all items and
    the adversarial partition (the columns of :func:`cogrsi_lib.nested.curve_table`)."""
    rows = []
    for run in runs:
        for row in run.nested.score.by_depth.iter_rows(named=True):
            rows.append({"predictor": run.system, "subset": ALL, "depth": row["depth"],
                         "n": row["n"], "accuracy": row["accuracy"]})
            if row["adversarial_accuracy"] is not None:
                n_adv = int(run.nested.score.records.filter(
                    (pl.col("depth") == row["depth"]) & (pl.col("partition") == ADVERSARIAL)
                ).height)
                rows.append({"predictor": run.system, "subset": ADVERSARIAL,
                             "depth": row["depth"], "n": n_adv,
                             "accuracy": row["adversarial_accuracy"]})
    for subset in (ALL, ADVERSARIAL):
        best = best_shortcut(baselines, subset)
        n = baselines.filter(pl.col("subset") == subset).group_by("depth", maintain_order=True).agg(
            pl.col("n").first())
        by_depth = best.join(n, on="depth", maintain_order="left").sort("depth")
        for row in by_depth.iter_rows(named=True):
            rows.append({"predictor": "best shallow heuristic", "subset": subset,
                         "depth": row["depth"], "n": row["n"],
                         "accuracy": row["best_heuristic_accuracy"]})
    schema = {"predictor": pl.Utf8, "subset": pl.Utf8, "depth": pl.Int64, "n": pl.Int64,
              "accuracy": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def depth_figure(curves: pl.DataFrame, chance: float | None = None) -> alt.FacetChart:
    """The depth-curve figure (plan §4: "the central measurement")."""
    chart = depth_chart(curves, chance)
    subtitle = chart.title.subtitle if isinstance(chart.title, alt.Title) else None
    return chart.properties(title=alt.Title("Recursive reasoning: accuracy by depth",
                                            subtitle=subtitle))

