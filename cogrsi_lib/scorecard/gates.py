"""Keep-or-toss gates for an intervention (plan §16 Gates A-E, §10-11 keep criteria).

Each gate is a function of runs on the same frozen items and returns a
:class:`GateOutcome` whose checks carry the estimate, its bootstrap interval over stories
(:mod:`cogrsi_lib.stats`), the threshold and the status (``pass``, ``fail`` or
``not_run`` when the evidence is missing).  Thresholds are the plan's proposed engineering
values (:class:`GateConfig`); "adjust after observing baseline variance".

* A, benchmark integrity: the Suite A integrity checks, and every run answered the same
  frozen items.
* B, held-out recursive improvement (any one suffices): R2/R3 accuracy +5 points; leakage
  -25% relative; applied-ToM conversion +5 points.  With ``require_ci`` an improvement
  counts only when its interval excludes zero.
* C, no hidden regression (all must hold): R0/R1 accuracy, calibration (Brier),
  cost per task, and the unrelated battery (strategic questions, self/cross prediction).
* D, replication: Gate B again on new procedural seeds, and on an alternate model or
  backend when the mechanism claims to be architectural.
* E, ablation: Gate B with the ablated variant as the comparison: with the component
  disabled the improvement must go away.

A gate passes only with every required check run; missing evidence never passes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from cogrsi_lib.scorecard.runs import SystemRun
from cogrsi_lib.settings import Settings
from cogrsi_lib.stats import MIN_N, paired_bootstrap, resample_counts, why_underpowered

PASS, FAIL, NOT_RUN = "pass", "fail", "not_run"


class GateConfig(Settings):
    """Gate thresholds (``params.yaml: scorecard.gates``; typed, unknown keys refused)."""

    deep_depths: tuple[int, ...] = (2, 3)
    shallow_depths: tuple[int, ...] = (0, 1)
    min_deep_gain: float = 0.05
    min_leakage_reduction: float = 0.25
    min_conversion_gain: float = 0.05
    max_shallow_drop: float = 0.02
    max_brier_rise: float = 0.02
    max_cost_ratio: float = 3.0
    max_battery_drop: float = 0.05
    require_ci: bool = True
    min_n: int = MIN_N  # items a measured check needs to pass (clusters for ratio checks)
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0


#: the default thresholds
DEFAULT_GATES = GateConfig()


@dataclass(frozen=True)
class Check:
    """One measured criterion of one gate."""

    check: str
    status: str
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    threshold: str = ""
    note: str = ""


@dataclass(frozen=True)
class GateOutcome:
    """A gate's checks and its verdict; ``rule`` is ``any`` (Gates B, E) or ``all``."""

    gate: str
    title: str
    rule: str
    checks: tuple[Check, ...]

    @property
    def status(self) -> str:
        ran = [c for c in self.checks if c.status != NOT_RUN]
        if self.rule == "any":
            if any(c.status == PASS for c in ran):
                return PASS
            return FAIL if ran else NOT_RUN
        if any(c.status == FAIL for c in ran):
            return FAIL
        return PASS if ran and len(ran) == len(self.checks) else NOT_RUN

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def table(self, intervention: str = "") -> pl.DataFrame:
        rows = [{"intervention": intervention, "gate": self.gate, "title": self.title,
                 "check": c.check, "status": c.status, "estimate": c.estimate, "low": c.low,
                 "high": c.high, "threshold": c.threshold, "note": c.note}
                for c in self.checks]
        return pl.DataFrame(rows, schema=GATE_SCHEMA)


GATE_SCHEMA = {"intervention": pl.Utf8, "gate": pl.Utf8, "title": pl.Utf8, "check": pl.Utf8,
               "status": pl.Utf8, "estimate": pl.Float64, "low": pl.Float64,
               "high": pl.Float64, "threshold": pl.Utf8, "note": pl.Utf8}


def _status(ok: bool) -> str:
    return PASS if ok else FAIL


def _measured(name: str, ok: bool, est: float, low: float, high: float, n: int,
              threshold: str, cfg: GateConfig, note: str = "", gain: bool = True) -> Check:
    """A check on an estimate with an interval: it passes only on at least ``cfg.min_n``
    items, and a claimed ``gain`` only on an interval of some width (a handful of items, or
    an interval collapsed to one value, cannot carry a gate; two runs that answer alike show
    no regression)."""
    why = ""
    if n < cfg.min_n:
        why = f"underpowered: {why_underpowered(est, low, high, n, cfg.min_n)}"
    elif gain and not (high > low):
        why = f"degenerate interval [{low:.3g}, {high:.3g}]"
    notes = "; ".join(x for x in (note, why, f"n = {n}" if not why else "") if x)
    return Check(name, _status(ok and not why), est, low, high, threshold, notes)


def _nested_pairs(treat: SystemRun, base: SystemRun) -> pl.DataFrame:
    """Both runs' Suite A records joined by item id; refuses different item sets."""
    a = treat.nested.score.records
    b = base.nested.score.records
    if set(a["id"]) != set(b["id"]):
        raise ValueError(f"{treat.system} and {base.system} did not answer the same items")
    cols = ["id", "depth", "false_belief", "correct", "leaked", "confidence"]
    return a.select(cols).join(b.select(cols), on="id", suffix="_b",
                               maintain_order="left").with_columns(
        pl.col("id").str.split("-").list.first().alias("world"))


def _paired(a: np.ndarray, b: np.ndarray, clusters: Sequence[object], cfg: GateConfig):
    return paired_bootstrap(a, b, clusters, n_resamples=cfg.n_resamples, seed=cfg.seed,
                            confidence=cfg.confidence)


def _accuracy_gain(pairs: pl.DataFrame, depths: Sequence[int], cfg: GateConfig):
    part = pairs.filter(pl.col("depth").is_in(list(depths)))
    if not part.height:
        return None
    return _paired(part["correct"].cast(pl.Float64).to_numpy(),
                   part["correct_b"].cast(pl.Float64).to_numpy(), part["world"].to_list(), cfg)


def _improvement_checks(treat: SystemRun, base: SystemRun, cfg: GateConfig) -> tuple[Check, ...]:
    """The three Gate B criteria of ``treat`` over ``base``."""
    pairs = _nested_pairs(treat, base)
    deep = "/".join(f"R{k}" for k in cfg.deep_depths)
    out = []
    res = _accuracy_gain(pairs, cfg.deep_depths, cfg)
    if res is None:
        out.append(Check(f"{deep} accuracy gain", NOT_RUN, note="no items at these depths"))
    else:
        ok = res.estimate >= cfg.min_deep_gain and (not cfg.require_ci or res.low > 0)
        n = pairs.filter(pl.col("depth").is_in(list(cfg.deep_depths))).height
        out.append(_measured(f"{deep} accuracy gain", ok, res.estimate, res.low, res.high, n,
                             f">= {cfg.min_deep_gain:+.2f}"
                             + (", CI > 0" if cfg.require_ci else ""), cfg))
    out.append(_leakage_check(pairs, cfg))
    out.append(_conversion_check(treat, base, cfg))
    return tuple(out)


def _leakage_check(pairs: pl.DataFrame, cfg: GateConfig) -> Check:
    name = "leakage relative reduction"
    fb = pairs.filter(pl.col("false_belief"))
    base_rate = float(fb["leaked_b"].cast(pl.Float64).mean()) if fb.height else 0.0
    if not fb.height or base_rate == 0:
        return Check(name, NOT_RUN, note="the comparison leaks on no false-belief item")
    res = cluster_ratio(fb["world"].to_numpy(),
                        [fb["leaked"].cast(pl.Float64).to_numpy(),
                         fb["leaked_b"].cast(pl.Float64).to_numpy()],
                        lambda s: 1 - s[..., 0] / s[..., 1], cfg)
    if res is None:
        return Check(name, NOT_RUN, note="the comparison leaks on no false-belief item")
    est, low, high = res
    ok = est >= cfg.min_leakage_reduction and (not cfg.require_ci or low > 0)
    return _measured(name, ok, est, low, high, fb.height,
                     f">= {cfg.min_leakage_reduction:.0%}"
                     + (", CI > 0" if cfg.require_ci else ""), cfg,
                     f"baseline leakage {base_rate:.3f}")


def cluster_ratio(
    clusters: np.ndarray, columns: Sequence[np.ndarray],
    statistic: Callable[[np.ndarray], np.ndarray], cfg: GateConfig,
) -> tuple[float, float, float] | None:
    """A statistic of column sums (e.g. a difference of two ratios) with a percentile
    interval, resampling clusters with replacement (:func:`cogrsi_lib.stats.resample_counts`);
    resamples where the statistic is undefined are dropped.  None if it is undefined."""
    names, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    sums = np.zeros((len(names), len(columns)))
    for k, col in enumerate(columns):
        np.add.at(sums[:, k], codes, np.asarray(col, float))
    with np.errstate(invalid="ignore", divide="ignore"):
        est = float(statistic(sums.sum(0)))
        if not np.isfinite(est):
            return None
        counts = resample_counts(np.random.default_rng(cfg.seed), len(names), cfg.n_resamples)
        dist = statistic(counts @ sums)
    dist = dist[np.isfinite(dist)]
    alpha = (1 - cfg.confidence) / 2
    low, high = np.quantile(dist, [alpha, 1 - alpha]) if len(dist) else (np.nan, np.nan)
    return est, float(low), float(high)


def conversion_difference(treat: pl.DataFrame, base: pl.DataFrame,
                          cfg: GateConfig = DEFAULT_GATES) -> tuple[float, float, float] | None:
    """Difference of applied-ToM conversion (a ratio), paired bootstrap over worlds."""
    keys = ["id", "world", "belief_correct", "behaviour_correct"]
    j = treat.select(keys).join(base.select(keys), on=["id", "world"], suffix="_b",
                                maintain_order="left")
    if j.height != treat.height or j.height != base.height:
        raise ValueError("the two runs did not answer the same applied items")
    cols = [(j["belief_correct"] & j["behaviour_correct"]), j["belief_correct"],
            (j["belief_correct_b"] & j["behaviour_correct_b"]), j["belief_correct_b"]]
    return cluster_ratio(j["world"].to_numpy(), [c.cast(pl.Float64).to_numpy() for c in cols],
                         lambda s: s[..., 0] / s[..., 1] - s[..., 2] / s[..., 3], cfg)


def _conversion_check(treat: SystemRun, base: SystemRun, cfg: GateConfig) -> Check:
    name = "applied-ToM conversion gain"
    if treat.applied is None or base.applied is None:
        return Check(name, NOT_RUN, note="Suite B was not run for both")
    res = conversion_difference(treat.applied.score.records, base.applied.score.records, cfg)
    if res is None:
        return Check(name, NOT_RUN, note="no belief answer right in one of the runs")
    est, low, high = res
    ok = est >= cfg.min_conversion_gain and (not cfg.require_ci or low > 0)
    n = min(treat.applied.score.records.height, base.applied.score.records.height)
    return _measured(name, ok, est, low, high, n,
                     f">= {cfg.min_conversion_gain:+.2f}" + (", CI > 0" if cfg.require_ci else ""),
                     cfg)


def gate_a(integrity: pl.DataFrame, runs: Sequence[SystemRun]) -> GateOutcome:
    """Gate A: the Suite A integrity table, and one frozen item set for every run."""
    checks = [Check(r["check"], _status(bool(r["passed"])), r["value"], threshold=r["requirement"])
              for r in integrity.iter_rows(named=True)]
    ids = [frozenset(r.nested.score.records["id"]) for r in runs]
    same = len(set(ids)) <= 1
    checks.append(Check("every variant answered the same frozen items", _status(same),
                        float(same), threshold="== 1", note=f"{len(runs)} runs"))
    return GateOutcome("A", "benchmark integrity", "all", tuple(checks))


def gate_b(treat: SystemRun, base: SystemRun, cfg: GateConfig = DEFAULT_GATES) -> GateOutcome:
    """Gate B: held-out recursive improvement of ``treat`` over ``base`` (any criterion)."""
    return GateOutcome("B", f"held-out improvement over {base.system}", "any",
                       _improvement_checks(treat, base, cfg))


def gate_c(treat: SystemRun, base: SystemRun, cfg: GateConfig = DEFAULT_GATES) -> GateOutcome:
    """Gate C: no material regression of ``treat`` against ``base`` (every check)."""
    pairs = _nested_pairs(treat, base)
    shallow = "/".join(f"R{k}" for k in cfg.shallow_depths)
    checks = []
    res = _accuracy_gain(pairs, cfg.shallow_depths, cfg)
    if res is None:
        checks.append(Check(f"{shallow} accuracy change", NOT_RUN, note="no items"))
    else:
        n = pairs.filter(pl.col("depth").is_in(list(cfg.shallow_depths))).height
        checks.append(_measured(f"{shallow} accuracy change",
                                res.estimate >= -cfg.max_shallow_drop, res.estimate, res.low,
                                res.high, n, f">= {-cfg.max_shallow_drop:+.2f}", cfg,
                                gain=False))
    both = pairs.filter(pl.col("confidence").is_not_null() & pl.col("confidence_b").is_not_null())
    if not both.height:
        checks.append(Check("Brier change", NOT_RUN, note="no item with both confidences"))
    else:
        sq = ((both["confidence"] - both["correct"].cast(pl.Float64)) ** 2).to_numpy()
        sq_b = ((both["confidence_b"] - both["correct_b"].cast(pl.Float64)) ** 2).to_numpy()
        r = _paired(sq, sq_b, both["world"].to_list(), cfg)
        checks.append(_measured("Brier change", r.estimate <= cfg.max_brier_rise, r.estimate,
                                r.low, r.high, both.height, f"<= {cfg.max_brier_rise:+.2f}",
                                cfg, gain=False))
    t_cost, b_cost = treat.cost()["total_tokens"], base.cost()["total_tokens"]
    if b_cost <= 0:
        checks.append(Check("cost ratio (tokens per task)", NOT_RUN, note="no tokens counted"))
    else:
        ratio = t_cost / b_cost
        checks.append(Check("cost ratio (tokens per task)", _status(ratio <= cfg.max_cost_ratio),
                            ratio, threshold=f"<= {cfg.max_cost_ratio:g}",
                            note=f"{t_cost:.0f} vs {b_cost:.0f} tokens per 100 tasks"))
    checks.append(_strategic_change(treat, base, cfg))
    checks.append(_prediction_change(treat, base, cfg))
    return GateOutcome("C", f"no hidden regression against {base.system}", "all", tuple(checks))


def _strategic_change(treat: SystemRun, base: SystemRun, cfg: GateConfig) -> Check:
    name = "strategic accuracy change (unrelated battery)"
    if treat.strategic is None or base.strategic is None:
        return Check(name, NOT_RUN, note="Suite C was not run for both")
    a, b = treat.strategic.score.records, base.strategic.score.records
    j = a.select("id", "correct").join(b.select("id", "correct"), on="id", suffix="_b",
                                       maintain_order="left")
    if j.height != a.height or j.height != b.height:
        raise ValueError("the two runs did not answer the same strategic items")
    r = _paired(j["correct"].cast(pl.Float64).to_numpy(),
                j["correct_b"].cast(pl.Float64).to_numpy(), j["id"].to_list(), cfg)
    return _measured(name, r.estimate >= -cfg.max_battery_drop, r.estimate, r.low, r.high,
                     j.height, f">= {-cfg.max_battery_drop:+.2f}", cfg, gain=False)


def _prediction_change(treat: SystemRun, base: SystemRun, cfg: GateConfig) -> Check:
    name = "self/cross prediction change (unrelated battery)"
    if treat.selfpred is None or base.selfpred is None:
        return Check(name, NOT_RUN, note="Suite D was not run for both")
    keys = ["target", "item_id", "phase", "n_observations"]
    a = treat.selfpred.ledger.select(*keys, "correct")
    b = base.selfpred.ledger.select(*keys, "correct")
    # entries whose target gave no answer are not scored (correct is null)
    j = a.join(b, on=keys, suffix="_b", maintain_order="left").drop_nulls(["correct", "correct_b"])
    if not j.height:
        return Check(name, NOT_RUN, note="no common scored ledger entries")
    r = _paired(j["correct"].cast(pl.Float64).to_numpy(),
                j["correct_b"].cast(pl.Float64).to_numpy(), j["item_id"].to_list(), cfg)
    return _measured(name, r.estimate >= -cfg.max_battery_drop, r.estimate, r.low, r.high,
                     j.height, f">= {-cfg.max_battery_drop:+.2f}", cfg, gain=False)


@dataclass(frozen=True)
class Replication:
    """A treatment and its comparison re-run on new seeds (``seed``) or another model
    (``model``)."""

    kind: str
    label: str
    treatment: SystemRun
    baseline: SystemRun

    def __post_init__(self) -> None:
        if self.kind not in ("seed", "model"):
            raise ValueError("a replication is on new seeds ('seed') or another model ('model')")


def gate_d(replications: Sequence[Replication], architectural: bool = True,
           cfg: GateConfig = DEFAULT_GATES, primary: GateOutcome | None = None) -> GateOutcome:
    """Gate D: Gate B holds on every replication; one on new seeds is required, and one on
    another model when the mechanism claims to be architectural. With the ``primary`` run's
    Gate B given, a failed one leaves nothing to replicate and Gate D fails."""
    checks = []
    if primary is not None:
        checks.append(Check("Gate B on the primary run", primary.status, threshold="passes",
                            note="" if primary.passed else "nothing to replicate"))
    for rep in replications:
        b = gate_b(rep.treatment, rep.baseline, cfg)
        best = max((c for c in b.checks if c.estimate is not None),
                   key=lambda c: c.status == PASS, default=None)
        checks.append(Check(f"Gate B on {rep.kind}: {rep.label}", b.status,
                            best.estimate if best else None, best.low if best else None,
                            best.high if best else None, "Gate B passes",
                            f"passing criterion: {best.check}" if best and b.passed else ""))
    need = ["seed"] + (["model"] if architectural else [])
    for kind in need:
        if not any(r.kind == kind for r in replications):
            what = "new procedural seeds" if kind == "seed" else "an alternate model or backend"
            checks.append(Check(f"replication on {what}", NOT_RUN,
                                note="required, not run: the gate cannot pass without it"))
    return GateOutcome("D", "replication", "all", tuple(checks))


def gate_e(treat: SystemRun, ablated: SystemRun, cfg: GateConfig = DEFAULT_GATES) -> GateOutcome:
    """Gate E: with the component disabled (``ablated``) the improvement must go away, i.e.
    the treatment must pass Gate B's criteria against its own ablation."""
    return GateOutcome("E", f"ablation: {treat.system} against {ablated.system}", "any",
                       _improvement_checks(treat, ablated, cfg))


@dataclass(frozen=True)
class Decision:
    """The recorded outcome of every gate for one intervention, and keep or toss."""

    intervention: str
    outcomes: tuple[GateOutcome, ...]

    @property
    def keep(self) -> bool:
        return all(o.passed for o in self.outcomes)

    def table(self) -> pl.DataFrame:
        """Every check of every gate."""
        parts = [o.table(self.intervention) for o in self.outcomes]
        return pl.concat(parts) if parts else pl.DataFrame(schema=GATE_SCHEMA)

    def summary(self) -> dict[str, object]:
        return {"intervention": self.intervention} | {
            f"gate_{o.gate}": o.status for o in self.outcomes} | {
            "decision": "keep" if self.keep else "toss"}


def decision_table(decisions: Sequence[Decision]) -> pl.DataFrame:
    """One row per intervention: each gate's status and keep/toss."""
    rows = [d.summary() for d in decisions]
    gates = sorted({k for r in rows for k in r if k.startswith("gate_")})
    schema = {"intervention": pl.Utf8} | {g: pl.Utf8 for g in gates} | {"decision": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


def decision_checks(decisions: Sequence[Decision]) -> pl.DataFrame:
    """Every check of every gate of every intervention, one row each."""
    parts = [d.table() for d in decisions]
    return pl.concat(parts) if parts else pl.DataFrame(schema=GATE_SCHEMA)
