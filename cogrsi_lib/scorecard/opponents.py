"""Scripted bounded opponents and the prediction baselines of Suite C (plan §4, §8.5).

A bounded opponent plays its level-k action with probability ``1 - noise`` and a uniformly
random action otherwise (level-k with noise).  Its policy is a distribution over a finite,
ordered action set (guesses are the integers of the range), so everything here is exact:

* :func:`poisson_weights`: the cognitive-hierarchy population of levels (Camerer, Ho &
  Chong 2004), a Poisson(``tau``) distribution truncated to the levels considered;
* :func:`modal`: the prediction that is right most often under a distribution, where a
  prediction is right when it lies within ``tol`` of the action (``tol = 0``: exact);
* :func:`history_mode`: the same rule applied to the opponent's observed history, i.e. the
  target's historical modal action.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def poisson_weights(tau: float, levels: Sequence[int]) -> np.ndarray:
    """P(level) ∝ e^-tau tau^k / k! over ``levels``, normalised."""
    if tau <= 0:
        raise ValueError("tau must be positive")
    w = np.array([math.exp(-tau) * tau**k / math.factorial(k) for k in levels], float)
    return w / w.sum()


def with_noise(dist: np.ndarray, noise: float) -> np.ndarray:
    """``(1 - noise) * dist + noise * uniform``."""
    if not 0 <= noise <= 1:
        raise ValueError("noise must lie in [0, 1]")
    d = np.asarray(dist, float)
    return (1 - noise) * d + noise / len(d)


def point(n: int, index: int, jitter: int = 0) -> np.ndarray:
    """A distribution on action ``index`` (uniform over ``index ± jitter`` within range)."""
    out = np.zeros(n)
    lo, hi = max(0, index - jitter), min(n - 1, index + jitter)
    out[lo:hi + 1] = 1.0
    return out / out.sum()


def hit_probability(dist: np.ndarray, tol: int = 0) -> np.ndarray:
    """For each prediction x, P(|action - x| <= tol) under ``dist``."""
    d = np.asarray(dist, float)
    if tol == 0:
        return d
    kernel = np.ones(2 * tol + 1)
    return np.convolve(d, kernel, mode="same")


def modal(dist: np.ndarray, tol: int = 0) -> int:
    """The prediction most often right under ``dist`` (lowest on ties)."""
    hits = hit_probability(dist, tol)
    return int(np.flatnonzero(hits >= hits.max() - 1e-12)[0])


def history_mode(history: Sequence[int], n_actions: int, tol: int = 0) -> int | None:
    """The observed history's modal action (within ``tol``); None with no history."""
    if not history:
        return None
    counts = np.bincount(np.asarray(history, int), minlength=n_actions).astype(float)
    return modal(counts / counts.sum(), tol)


@dataclass(frozen=True)
class BoundedOpponent:
    """A level-k opponent with noise: its policy is ``with_noise(level policy, noise)``."""

    level: int
    noise: float
    policy: tuple[float, ...]

    @classmethod
    def of(cls, level: int, noise: float, level_policy: np.ndarray) -> BoundedOpponent:
        return cls(level, noise, tuple(float(p) for p in with_noise(level_policy, noise)))

    def dist(self) -> np.ndarray:
        return np.asarray(self.policy, float)

    def sample(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray | int:
        """Draw actions (indices) from the policy."""
        d = self.dist()
        out = rng.choice(len(d), size=size, p=d / d.sum())
        return out if size is not None else int(out)


def population(level_policies: Sequence[np.ndarray], weights: np.ndarray,
               noise: float) -> np.ndarray:
    """The population's action distribution: levels mixed by ``weights``, each with noise."""
    mix = sum(w * with_noise(p, noise) for w, p in zip(weights, level_policies, strict=True))
    return np.asarray(mix, float)
