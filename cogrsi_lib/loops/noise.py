"""Registration noise: how often null candidates are admitted (CogRSI §4.2, App. C.2).

"A fixed principle's accuracy varies by 2.7 points across trial cohorts of 80 questions.
Simulating four candidates with no real gain per round, a 1-point margin admits one in 70%
of rounds and a 3-point margin in about 10%." Here each of ``n_candidates`` null candidates
has a gain on each of ``n_cohorts`` trial cohorts drawn from N(true_gain, sd^2), ``sd`` being
that cohort-to-cohort variation; a round admits if any candidate passes the registration rule.
With ``shared_incumbent`` the per-cohort noise is split evenly between the incumbent (shared
by the round's candidates) and each candidate, so the gains keep SD ``sd`` but correlate 0.5.
``cohort_size`` rounds every accuracy to whole questions (80 per cohort: steps of 1.25).

:func:`measured_cohort_sd` reads the variation from real round logs: the pooled SD of one
principle's accuracy across the trial cohorts it was scored on.

That SD is an *accuracy* SD.  The paper's simulation uses it as the SD of each candidate's
gain, drawn independently per candidate.  The engine does something else: it scores the
incumbent once per trial cohort and every candidate's gain is its accuracy minus that one
score, so the gains of a round share the incumbent's noise, and a gain's SD is
``sqrt(2) * accuracy SD`` when the two principles' accuracies on a cohort are independent
(:func:`gain_sd`).  :func:`noise_models` reports both, side by side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from cogrsi_lib.loops.registration import EPS, RegistrationRule

PAPER_SD = 2.7


@dataclass(frozen=True)
class NoiseResult:
    delta: float
    min_nonneg: int
    share: float
    se: float
    n_rounds: int
    sd: float

    def as_dict(self) -> dict[str, float]:
        return {"delta": self.delta, "min_nonneg": self.min_nonneg, "share": self.share,
                "se": self.se, "n_rounds": self.n_rounds, "sd": self.sd}


def simulate_gains(sd: float = PAPER_SD, *, n_candidates: int = 4, n_cohorts: int = 3,
                   n_rounds: int = 100_000, seed: int = 0, true_gain: float = 0.0,
                   shared_incumbent: bool = False, cohort_size: int | None = None
                   ) -> np.ndarray:
    """Gains (rounds, candidates, cohorts) of candidates whose real gain is ``true_gain``."""
    rng = np.random.default_rng(seed)
    shape = (n_rounds, n_candidates, n_cohorts)
    if shared_incumbent:
        half = sd / math.sqrt(2.0)
        inc = rng.normal(0.0, half, size=(n_rounds, 1, n_cohorts))
        cand = rng.normal(true_gain, half, size=shape)
        if cohort_size:
            step = 100.0 / cohort_size
            inc, cand = np.round(inc / step) * step, np.round(cand / step) * step
        return cand - inc
    gains = rng.normal(true_gain, sd, size=shape)
    if cohort_size:
        step = 100.0 / cohort_size
        gains = np.round(gains / step) * step
    return gains


def admission_share(gains: np.ndarray, rule: RegistrationRule) -> tuple[float, float]:
    """Share of rounds in which at least one candidate passes ``rule`` (and its s.e.)."""
    margin = gains.mean(axis=2) >= rule.delta - EPS
    cohorts = (gains >= -EPS).sum(axis=2) >= rule.min_nonneg
    admitted = (margin & cohorts).any(axis=1)
    p = float(admitted.mean())
    return p, math.sqrt(p * (1 - p) / len(admitted))


def simulate_admission(delta: float, min_nonneg: int = 0, sd: float = PAPER_SD,
                       **kwargs: object) -> NoiseResult:
    """Share of rounds in which a margin of ``delta`` admits a null candidate."""
    gains = simulate_gains(sd, **kwargs)  # type: ignore[arg-type]
    share, se = admission_share(gains, RegistrationRule(delta, min_nonneg))
    return NoiseResult(delta, min_nonneg, share, se, gains.shape[0], sd)


def calibration_table(sd: float = PAPER_SD, *, deltas: tuple[float, ...] = (1.0, 3.0),
                      rules: tuple[int, ...] = (0, 2), **kwargs: object) -> pl.DataFrame:
    """Admission shares for each margin with and without the cohort rule (same draws)."""
    gains = simulate_gains(sd, **kwargs)  # type: ignore[arg-type]
    rows = []
    for d in deltas:
        for m in rules:
            share, se = admission_share(gains, RegistrationRule(d, m))
            rows.append({"delta": d, "min_nonneg": m, "share": share, "se": se, "sd": sd,
                         "n_rounds": gains.shape[0], "n_candidates": gains.shape[1],
                         "n_cohorts": gains.shape[2]})
    return pl.DataFrame(rows)


def measured_cohort_sd(cohorts: pl.DataFrame) -> float | None:
    """Pooled SD (points) of one principle's accuracy across its trial cohorts.

    ``cohorts`` is the loops' ``cohorts`` table; each (arm, seed, round, role, candidate) is
    one principle scored on ``n_trials`` cohorts. ``None`` when there are no such groups.
    """
    trial = cohorts.filter(pl.col("cohort").str.starts_with("trial"))
    if trial.height == 0:
        return None
    keys = ["arm", "seed", "round", "role", "candidate"]
    g = (trial.group_by(keys, maintain_order=True)
         .agg(pl.col("accuracy").var(ddof=1).alias("var"), pl.len().alias("k"))
         .filter(pl.col("k") > 1)
         .sort(keys))  # a fixed order: the float sum below is the same on every run
    if g.height == 0:
        return None
    dof = (g["k"] - 1).sum()
    return float(math.sqrt(math.fsum((g["var"] * (g["k"] - 1)).to_list()) / dof))


def gain_sd(accuracy_sd: float, correlation: float = 0.0) -> float:
    """SD of a candidate's gain over the incumbent on one cohort, from the SD of one
    principle's accuracy across cohorts: ``sqrt(2 (1 - correlation)) * accuracy_sd``, where
    ``correlation`` is that of the two principles' accuracies on the same cohort (0: the
    engine's questions favour neither)."""
    if not -1.0 <= correlation <= 1.0:
        raise ValueError("correlation must be in [-1, 1]")
    return math.sqrt(2.0 * (1.0 - correlation)) * accuracy_sd


def noise_models(accuracy_sd: float, *, n_candidates: int = 4, n_cohorts: int = 3,
                 cohort_size: int | None = 80, n_rounds: int = 100_000, seed: int = 0,
                 deltas: tuple[float, ...] = (1.0, 3.0), rules: tuple[int, ...] = (0, 2)
                 ) -> pl.DataFrame:
    """Admission shares of null candidates under two models of the same accuracy SD.

    ``paper``: each candidate's gain independent, N(0, accuracy_sd^2) per cohort (App. C.2's
    assumption, continuous).  ``engine``: what the engine does: one incumbent score per
    cohort shared by the round's candidates, every accuracy rounded to whole questions of a
    ``cohort_size`` cohort, gain SD from :func:`gain_sd` (independent accuracies).
    """
    models = (
        ("paper", accuracy_sd, False, None),
        ("engine", gain_sd(accuracy_sd), True, cohort_size),
    )
    frames = []
    for name, sd, shared, size in models:
        t = calibration_table(sd, deltas=deltas, rules=rules, n_candidates=n_candidates,
                              n_cohorts=n_cohorts, n_rounds=n_rounds, seed=seed,
                              shared_incumbent=shared, cohort_size=size)
        frames.append(t.rename({"sd": "gain_sd"}).with_columns(
            model=pl.lit(name), accuracy_sd=pl.lit(accuracy_sd),
            shared_incumbent=pl.lit(shared), cohort_size=pl.lit(size, dtype=pl.Int64)))
    cols = ["model", "accuracy_sd", "gain_sd", "shared_incumbent", "cohort_size", "delta",
            "min_nonneg", "share", "se", "n_rounds", "n_candidates", "n_cohorts"]
    return pl.concat(frames).select(cols)
