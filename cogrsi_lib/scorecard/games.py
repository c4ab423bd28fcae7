"""Small games with known answers and their solvers (plan §4 Suite C, §3 H6).

* :class:`GuessingGame`: the p-beauty contest (Nagel 1995): level-0 guesses the middle of
  the range, level-k best-responds to level-(k-1), i.e. guesses ``mid * p**k``; the unique
  Nash equilibrium (p < 1) is everybody guessing the bottom of the range.
* :class:`MatrixGame`: a two-player normal-form game.  Nash equilibria come from nashpy's
  support enumeration; a zero-sum game is also solved as a linear programme with
  :func:`scipy.optimize.linprog` (:func:`solve_zero_sum`), the two cross-checked in tests.
  Level-k: level-0 plays uniformly at random, level-k best-responds to the other role's
  level-(k-1) (lowest index on ties).
* :class:`SignallingGame`: two sender types, two messages, two receiver actions (the
  job-market game: a course is a costly signal of ability).  Pure perfect Bayesian
  equilibria are enumerated exactly, and refined by the intuitive criterion (Cho-Kreps).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

TOL = 1e-9


# -- guessing game ------------------------------------------------------------------------
@dataclass(frozen=True)
class GuessingGame:
    """Guess in [low, high]; the winner is closest to ``p`` times the average guess.

    In a large population one player's guess does not move the average, so the best
    response to others guessing ``g`` on average is ``p * g``.
    """

    p: float = 2 / 3
    low: int = 0
    high: int = 100

    def __post_init__(self) -> None:
        if not 0 < self.p < 1:
            raise ValueError("p must lie in (0, 1)")
        if not 0 <= self.low < self.high:
            raise ValueError("need 0 <= low < high")

    @property
    def level0_mean(self) -> float:
        return (self.low + self.high) / 2

    def best_response(self, average: float) -> float:
        return min(max(self.p * average, self.low), self.high)

    def level_guess(self, k: int) -> float:
        """Level-k's guess: level-0 the middle, then best response to the level below."""
        g = self.level0_mean
        for _ in range(k):
            g = self.best_response(g)
        return g

    def equilibrium(self) -> float:
        """The unique Nash equilibrium guess: iterated elimination of dominated guesses
        drives every guess down to ``low`` (the fixed point of the clipped best response)."""
        return float(self.low)


# -- matrix games -------------------------------------------------------------------------
def _argmax_set(values: np.ndarray) -> tuple[int, ...]:
    best = float(np.max(values))
    return tuple(int(i) for i in np.flatnonzero(np.abs(values - best) <= TOL))


@dataclass(frozen=True)
class MatrixGame:
    """Payoffs ``row[i, j]`` and ``col[i, j]`` when row plays i and column plays j."""

    row: np.ndarray
    col: np.ndarray
    row_actions: tuple[str, ...]
    col_actions: tuple[str, ...]

    def __post_init__(self) -> None:
        r, c = np.asarray(self.row, float), np.asarray(self.col, float)
        if r.shape != c.shape or r.ndim != 2:
            raise ValueError("row and column payoffs must be matrices of one shape")
        if r.shape != (len(self.row_actions), len(self.col_actions)):
            raise ValueError("one action name per row and per column")
        object.__setattr__(self, "row", r)
        object.__setattr__(self, "col", c)

    @classmethod
    def zero_sum(cls, row: np.ndarray, row_actions: Sequence[str],
                 col_actions: Sequence[str]) -> MatrixGame:
        r = np.asarray(row, float)
        return cls(r, -r, tuple(row_actions), tuple(col_actions))

    @property
    def is_zero_sum(self) -> bool:
        return bool(np.allclose(self.row + self.col, 0))

    def payoff(self, player: str) -> np.ndarray:
        """The payoff matrix of ``player`` seen from its own side (its actions as rows)."""
        if player == "row":
            return self.row
        if player == "col":
            return self.col.T
        raise ValueError("player is 'row' or 'col'")

    def best_responses(self, player: str, opponent: np.ndarray) -> tuple[int, ...]:
        """Every best response of ``player`` to the opponent's mixed strategy."""
        return _argmax_set(self.payoff(player) @ np.asarray(opponent, float))

    def level_strategy(self, player: str, k: int) -> np.ndarray:
        """Level-k's strategy: uniform at k = 0, else the (lowest) best response, as a vector."""
        n = len(self.row_actions if player == "row" else self.col_actions)
        if k == 0:
            return np.full(n, 1 / n)
        other = "col" if player == "row" else "row"
        out = np.zeros(n)
        out[self.best_responses(player, self.level_strategy(other, k - 1))[0]] = 1
        return out

    def level_ties(self, player: str, k: int) -> bool:
        """Whether some step of level-k's reasoning meets a tie between best responses."""
        if k == 0:
            return False
        other = "col" if player == "row" else "row"
        if self.level_ties(other, k - 1):
            return True
        return len(self.best_responses(player, self.level_strategy(other, k - 1))) > 1

    def pure_equilibria(self) -> list[tuple[int, int]]:
        """Pure-strategy Nash equilibria (i, j), by checking best responses cell by cell."""
        return [(i, j) for i in range(self.row.shape[0]) for j in range(self.row.shape[1])
                if self.row[i, j] >= self.row[:, j].max() - TOL
                and self.col[i, j] >= self.col[i, :].max() - TOL]

    def equilibria(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Nash equilibria by support enumeration (nashpy); exact for non-degenerate games."""
        import nashpy  # imported here: it pulls in networkx

        game = nashpy.Game(self.row, self.col)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [(np.asarray(x, float), np.asarray(y, float))
                    for x, y in game.support_enumeration()]

    def is_equilibrium(self, x: np.ndarray, y: np.ndarray, tol: float = 1e-7) -> bool:
        """No player gains by deviating to a pure strategy."""
        x, y = np.asarray(x, float), np.asarray(y, float)
        vr, vc = x @ self.row @ y, x @ self.col @ y
        return bool(np.max(self.row @ y) <= vr + tol and np.max(x @ self.col) <= vc + tol)


def solve_zero_sum(row: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Maximin strategies of both players and the value of the zero-sum game ``row``.

    Row maximises ``v`` subject to ``x @ row[:, j] >= v`` for every column ``j``; the
    column player's strategy is the row solution of ``-row.T``.
    """
    a = np.asarray(row, float)
    x, v = _maximin(a)
    y, w = _maximin(-a.T)
    if not np.isclose(v, -w, atol=1e-7):
        raise RuntimeError(f"linprog values disagree: {v} vs {-w}")
    return x, y, v


def _maximin(a: np.ndarray) -> tuple[np.ndarray, float]:
    m, n = a.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0  # minimise -v
    a_ub = np.hstack([-a.T, np.ones((n, 1))])  # v - x @ a[:, j] <= 0
    a_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    bounds = [(0, None)] * m + [(None, None)]
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=bounds,
                  method="highs")
    if not res.success:
        raise RuntimeError(f"linprog failed: {res.message}")
    x = np.clip(res.x[:m], 0, None)
    return x / x.sum(), float(res.x[-1])


# -- signalling game ----------------------------------------------------------------------
@dataclass(frozen=True)
class Equilibrium:
    """A pure PBE: each type's message, the receiver's action per message, and the belief
    that the sender is ``types[0]`` after each message (an interval off the path)."""

    sender: tuple[int, ...]
    receiver: tuple[int, ...]
    beliefs: tuple[tuple[float, float], ...]

    @property
    def kind(self) -> str:
        return "separating" if len(set(self.sender)) == len(self.sender) else "pooling"

    def on_path(self, message: int) -> bool:
        return message in self.sender


@dataclass(frozen=True)
class SignallingGame:
    """Two types (prior ``prior`` on ``types[0]``), two messages, two receiver actions.

    ``sender[t, m, a]`` is type t's payoff for sending m and getting a; ``receiver[t, a]`` the
    receiver's payoff for answering a to type t (messages are payoff-irrelevant to it).
    """

    prior: float
    sender: np.ndarray
    receiver: np.ndarray
    types: tuple[str, str] = ("high", "low")
    messages: tuple[str, str] = ("course", "no course")
    actions: tuple[str, str] = ("high wage", "low wage")

    def __post_init__(self) -> None:
        if not 0 < self.prior < 1:
            raise ValueError("prior must lie in (0, 1)")
        object.__setattr__(self, "sender", np.asarray(self.sender, float))
        object.__setattr__(self, "receiver", np.asarray(self.receiver, float))
        if self.sender.shape != (2, 2, 2) or self.receiver.shape != (2, 2):
            raise ValueError("sender payoffs are (type, message, action), receiver (type, action)")

    @classmethod
    def job_market(cls, prior_high: float, cost_high: float, cost_low: float,
                   wage_gap: float = 2.0) -> SignallingGame:
        """A worker of high or low ability takes a course (cost by type) or not; the employer
        pays a high wage (worth ``wage_gap`` more) or a low one and wants to match ability."""
        cost = (cost_high, cost_low)
        wage = (wage_gap, 0.0)
        sender = np.array([[[wage[a] - (cost[t] if m == 0 else 0.0) for a in range(2)]
                            for m in range(2)] for t in range(2)])
        receiver = np.array([[1.0, 0.0], [0.0, 1.0]])
        return cls(prior_high, sender, receiver)

    def best_actions(self, belief: float) -> tuple[int, ...]:
        """The receiver's best actions when it puts ``belief`` on ``types[0]``."""
        return _argmax_set(belief * self.receiver[0] + (1 - belief) * self.receiver[1])

    def best_actions_on(self, belief_range: tuple[float, float]) -> tuple[int, ...]:
        """Actions that are best for some belief in the range (payoffs are linear in it)."""
        lo, hi = belief_range
        return tuple(sorted(set(self.best_actions(lo)) | set(self.best_actions(hi))))

    def posterior(self, sender: Sequence[int], message: int) -> float | None:
        """Bayes' rule on the path; None when no type sends ``message``."""
        w = [self.prior, 1 - self.prior]
        mass = [w[t] for t in range(2) if sender[t] == message]
        if not mass:
            return None
        return (w[0] if sender[0] == message else 0.0) / sum(mass)

    def payoff(self, t: int, sender: Sequence[int], receiver: Sequence[int]) -> float:
        m = sender[t]
        return float(self.sender[t, m, receiver[m]])

    def equilibria(self) -> list[Equilibrium]:
        """Every pure perfect Bayesian equilibrium."""
        out = []
        for s in itertools.product(range(2), repeat=2):
            for r in itertools.product(range(2), repeat=2):
                beliefs = []
                ok = True
                for m in range(2):
                    mu = self.posterior(s, m)
                    rng = (mu, mu) if mu is not None else (0.0, 1.0)
                    if r[m] not in self.best_actions_on(rng):
                        ok = False
                        break
                    beliefs.append(rng if mu is not None else self._supporting(r[m]))
                if not ok:
                    continue
                if all(self.payoff(t, s, r) + TOL >= self.sender[t, m, r[m]]
                       for t in range(2) for m in range(2)):
                    out.append(Equilibrium(tuple(s), tuple(r), tuple(beliefs)))
        return out

    def _supporting(self, action: int) -> tuple[float, float]:
        """The beliefs (an interval) at which ``action`` is a best response, solved exactly:
        its payoff advantage over the other action is linear in the belief."""
        other = 1 - action
        d0 = self.receiver[1, action] - self.receiver[1, other]  # belief 0: surely types[1]
        d1 = self.receiver[0, action] - self.receiver[0, other]  # belief 1: surely types[0]
        if d0 >= -TOL and d1 >= -TOL:
            return (0.0, 1.0)
        cross = float(d0 / (d0 - d1))
        return (0.0, cross) if d0 >= -TOL else (cross, 1.0)

    def intuitive(self, eq: Equilibrium) -> bool:
        """Cho-Kreps: no off-path message that some type would gain from once the receiver
        rules out the types for which the message is equilibrium-dominated."""
        star = [self.payoff(t, eq.sender, eq.receiver) for t in range(2)]
        for m in range(2):
            if eq.on_path(m):
                continue
            any_belief = self.best_actions_on((0.0, 1.0))
            dominated = {t for t in range(2)
                         if star[t] > max(self.sender[t, m, a] for a in any_belief) + TOL}
            rest = [t for t in range(2) if t not in dominated]
            if not dominated or not rest:
                continue
            # beliefs on the remaining types only: a point mass when one type remains
            belief = (1.0, 1.0) if rest == [0] else (0.0, 0.0) if rest == [1] else (0.0, 1.0)
            acts = self.best_actions_on(belief)
            if any(star[t] + TOL < min(self.sender[t, m, a] for a in acts) for t in rest):
                return False
        return True

    def refined(self) -> list[Equilibrium]:
        """The pure PBE that survive the intuitive criterion."""
        return [e for e in self.equilibria() if self.intuitive(e)]
