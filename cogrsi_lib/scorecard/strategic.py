"""Suite C, strategic recursive reasoning (plan §4 Suite C, §3 H6, §8.5).

Generated small games with known answers: the guessing game (beauty contest / level-k),
3x3 general-sum matrix games with a unique pure Nash equilibrium, 2x2 zero-sum games
with a mixed equilibrium, and the job-market signalling game.  For every game instance
three questions:

1. normative: the best response when the opponent's play is known;
2. equilibrium: the Nash (or refined perfect Bayesian) solution;
3. predictive: what *this* bounded opponent (level-k with noise, :mod:`.opponents`) will do
   next, given its observed history.  The gold is the opponent's actual next action, drawn
   from its policy.

Predictive accuracy is compared with three answers that need no model of the target
(plan §8.5): the equilibrium answer, the population prior (the cognitive-hierarchy mixture
of levels) and the target's historical modal action; ``oracle`` (the mode of the target's
true policy) is the ceiling.  A model earns no recursive-reasoning credit for solving the
equilibrium alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import polars as pl

from cogrsi_lib.nested.reply import format_number
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import System, run_system
from cogrsi_lib.scorecard.games import (
    Equilibrium,
    GuessingGame,
    MatrixGame,
    SignallingGame,
    solve_zero_sum,
)
from cogrsi_lib.scorecard.opponents import (
    BoundedOpponent,
    history_mode,
    modal,
    point,
    poisson_weights,
    population,
)
from cogrsi_lib.stats import paired_bootstrap

GAMES = ("guessing", "matrix", "zero_sum", "signalling")
KINDS = ("normative", "equilibrium", "predictive")
BASELINES = ("equilibrium", "population_prior", "history_mode")
ORACLE = "oracle"
ROWS3, COLS3 = ("Up", "Middle", "Down"), ("Left", "Centre", "Right")
ROWS2, COLS2 = ("Up", "Down"), ("Left", "Right")
WORKER = ("take the course", "skip the course")


@dataclass(frozen=True)
class StrategicConfig:
    """Knobs of the game generator (``params.yaml: scorecard``)."""

    n_per_game: int = 5
    seed: int = 0
    history_length: int = 10
    noise: float = 0.15
    tau: float = 1.5
    levels: tuple[int, ...] = (1, 2, 3)
    population_levels: tuple[int, ...] = (0, 1, 2, 3, 4)
    guess_tolerance: int = 2
    prob_tolerance: float = 0.02
    games: tuple[str, ...] = GAMES

    def __post_init__(self) -> None:
        unknown = set(self.games) - set(GAMES)
        if unknown:
            raise ValueError(f"unknown games {sorted(unknown)}; known: {GAMES}")
        if self.n_per_game < 1 or self.history_length < 1:
            raise ValueError("n_per_game and history_length must be at least 1")


@dataclass(frozen=True)
class StrategicItem:
    """One question about one game; ``gold`` is an option or a number (within ``tolerance``)."""

    id: str
    game: str
    kind: str
    context: str
    question: str
    options: tuple[str, ...] | None
    gold: str
    tolerance: float = 0.0
    baselines: tuple[tuple[str, str], ...] = ()
    opponent_level: int | None = None

    def reader_item(self) -> ReaderItem:
        return ReaderItem(item_id=self.id, context=self.context, question=self.question,
                          options=self.options, gold=self.gold, story_id=self.id.rsplit("-", 1)[0],
                          meta={"suite": "strategic", "game": self.game, "kind": self.kind})

    def baseline(self, name: str) -> str:
        return dict(self.baselines)[name]

    def is_correct(self, answer: str | None) -> bool:
        """Exact option match, or a number within ``tolerance`` of the gold."""
        if answer is None:
            return False
        if self.options:
            return answer == self.gold
        try:
            return abs(float(answer) - float(self.gold)) <= self.tolerance + 1e-9
        except ValueError:
            return False


def shortcut_free_levels(actions: Mapping[int, int], avoid: Sequence[int], tol: int = 0
                         ) -> list[int]:
    """Opponent levels whose action is more than ``tol`` away from every action in ``avoid``
    (the equilibrium answer, the population's modal action): with such an opponent, the
    answers that need no model of the target are wrong unless the noise says otherwise."""
    return [k for k, a in actions.items() if all(abs(a - b) > tol for b in avoid)]


def _history_text(names: Sequence[str]) -> str:
    return ", ".join(names)


def _table(game: MatrixGame, zero_sum: bool) -> str:
    width = max(len(c) for c in game.col_actions) + 10
    head = " " * 8 + "".join(c.ljust(width) for c in game.col_actions)
    lines = [head.rstrip()]
    for i, r in enumerate(game.row_actions):
        cells = []
        for j in range(len(game.col_actions)):
            a, b = format_number(game.row[i, j]), format_number(game.col[i, j])
            cells.append((a if zero_sum else f"({a}, {b})").ljust(width))
        lines.append((r.ljust(8) + "".join(cells)).rstrip())
    return "\n".join(lines)


class _Gen:
    """Item generator for one config; each game draws from its own seeded stream."""

    def __init__(self, cfg: StrategicConfig) -> None:
        self.cfg = cfg
        self.weights = poisson_weights(cfg.tau, cfg.population_levels)

    def rng(self, game: str) -> np.random.Generator:
        return np.random.default_rng([self.cfg.seed, GAMES.index(game)])

    def items(self) -> list[StrategicItem]:
        out: list[StrategicItem] = []
        for game in self.cfg.games:
            rng = self.rng(game)
            make = getattr(self, game)
            for i in range(self.cfg.n_per_game):
                out += make(rng, f"{game}-{i:03d}")
        return out

    def _history(self, rng: np.random.Generator, opp: BoundedOpponent) -> tuple[list[int], int]:
        hist = [int(a) for a in opp.sample(rng, self.cfg.history_length)]  # type: ignore[union-attr]
        return hist, int(opp.sample(rng))  # type: ignore[arg-type]

    def guessing(self, rng: np.random.Generator, gid: str) -> list[StrategicItem]:
        cfg = self.cfg
        p = Fraction(rng.choice(["1/2", "2/3", "3/4"]))
        g = GuessingGame(float(p))
        ctx = (f"A guessing game: each of many players picks a whole number from {g.low} to "
               f"{g.high}. The winner is the player closest to {p} of the average of all "
               "guesses. One player's guess is too small a part of the average to move it.")
        known = int(round(g.level_guess(int(rng.choice(cfg.levels)))))
        norm = StrategicItem(f"{gid}-normative", "guessing", "normative", ctx,
                             f"Every other player is known to guess {known}. What number "
                             "should you guess?", None, format_number(round(float(p) * known)),
                             tolerance=1.0)
        eq = StrategicItem(f"{gid}-equilibrium", "guessing", "equilibrium", ctx,
                           "What number does every player guess in the game's Nash "
                           "equilibrium?", None, format_number(g.equilibrium()))
        n = g.high - g.low + 1

        def level_policy(k: int) -> np.ndarray:
            return np.full(n, 1 / n) if k == 0 else point(n, int(round(g.level_guess(k))), 2)

        tol = cfg.guess_tolerance
        pop = population([level_policy(k) for k in cfg.population_levels], self.weights,
                         cfg.noise)
        guesses = {k: int(round(g.level_guess(k))) for k in cfg.levels}
        free = shortcut_free_levels(guesses, [int(g.equilibrium()), modal(pop, tol)], tol)
        level = int(rng.choice(free or list(cfg.levels)))
        opp = BoundedOpponent.of(level, cfg.noise, level_policy(level))
        hist, nxt = self._history(rng, opp)
        hm = history_mode(hist, n, tol)
        baselines = (("equilibrium", format_number(g.equilibrium())),
                     ("population_prior", str(modal(pop, tol))),
                     ("history_mode", str(hm)), (ORACLE, str(modal(opp.dist(), tol))))
        pred = StrategicItem(
            f"{gid}-predictive", "guessing", "predictive",
            ctx + f"\nOne particular player's last {len(hist)} guesses, oldest first: "
            f"{_history_text([str(h) for h in hist])}.",
            "What number will this player guess next?", None, str(nxt), tolerance=float(tol),
            baselines=baselines, opponent_level=level)
        return [norm, eq, pred]

    def matrix(self, rng: np.random.Generator, gid: str) -> list[StrategicItem]:
        cfg = self.cfg
        while True:
            game = MatrixGame(rng.integers(0, 10, (3, 3)), rng.integers(0, 10, (3, 3)),
                              ROWS3, COLS3)
            if len(game.pure_equilibria()) != 1:
                continue
            eqs = game.equilibria()
            if len(eqs) != 1 or max(eqs[0][0]) < 1 - 1e-9 or max(eqs[0][1]) < 1 - 1e-9:
                continue
            if any(len(game.best_responses("row", np.eye(3)[j])) > 1 for j in range(3)):
                continue
            if any(game.level_ties("col", k) for k in (*cfg.population_levels, *cfg.levels)):
                continue
            if self._column_levels(game, int(np.argmax(eqs[0][1]))):
                break
        x, y = eqs[0]
        ctx = ("A two-player game. You choose a row (Up, Middle or Down) and the other player "
               "a column (Left, Centre or Right), at the same time. Payoffs (yours, "
               f"theirs):\n{_table(game, zero_sum=False)}")
        c = int(rng.integers(3))
        norm = StrategicItem(f"{gid}-normative", "matrix", "normative", ctx,
                             f"Suppose you know the other player will choose {COLS3[c]}. "
                             "Which row should you choose?", ROWS3,
                             ROWS3[game.best_responses("row", np.eye(3)[c])[0]])
        eq = StrategicItem(f"{gid}-equilibrium", "matrix", "equilibrium", ctx,
                           "Which row do you choose in the game's unique Nash equilibrium?",
                           ROWS3, ROWS3[int(np.argmax(x))])
        pred = self._predict_column(rng, gid, "matrix", game, ctx, COLS3, int(np.argmax(y)))
        return [norm, eq, pred]

    def zero_sum(self, rng: np.random.Generator, gid: str) -> list[StrategicItem]:
        cfg = self.cfg
        while True:
            a = rng.integers(-5, 6, (2, 2))
            game = MatrixGame.zero_sum(a, ROWS2, COLS2)
            if game.pure_equilibria():
                continue  # a saddle point: the equilibrium is pure
            x, y, _ = solve_zero_sum(a)
            if not (0.05 < x[0] < 0.95 and 0.05 < y[0] < 0.95):
                continue  # a saddle point: the equilibrium is pure
            if len(game.equilibria()) != 1:
                continue
            if any(game.level_ties("col", k) for k in (*cfg.population_levels, *cfg.levels)):
                continue
            if not self._column_levels(game, int(np.flatnonzero(y >= y.max() - 1e-12)[0])):
                continue
            q = float(rng.choice([0.2, 0.3, 0.7, 0.8]))
            if len(game.best_responses("row", np.array([q, 1 - q]))) == 1:
                break
        ctx = ("A two-player zero-sum game: whatever you win the other player loses. You "
               "choose a row (Up or Down) and the other player a column (Left or Right), at "
               f"the same time. Your payoffs:\n{_table(game, zero_sum=True)}")
        norm = StrategicItem(f"{gid}-normative", "zero_sum", "normative", ctx,
                             f"Suppose you know the other player chooses Left with "
                             f"probability {q} and Right otherwise. Which row should you "
                             "choose?", ROWS2,
                             ROWS2[game.best_responses("row", np.array([q, 1 - q]))[0]])
        eq = StrategicItem(f"{gid}-equilibrium", "zero_sum", "equilibrium", ctx,
                           "In the game's equilibrium, with what probability do you choose "
                           "Up? Answer with a number from 0 to 1.", None,
                           format_number(round(float(x[0]), 4)),
                           tolerance=cfg.prob_tolerance)
        eq_col = int(np.flatnonzero(y >= y.max() - 1e-12)[0])
        pred = self._predict_column(rng, gid, "zero_sum", game, ctx, COLS2, eq_col)
        return [norm, eq, pred]

    def _column_population(self, game: MatrixGame) -> np.ndarray:
        return population([game.level_strategy("col", k) for k in self.cfg.population_levels],
                          self.weights, self.cfg.noise)

    def _column_levels(self, game: MatrixGame, eq_col: int) -> list[int]:
        """Column levels whose action is neither the equilibrium's nor the population's."""
        actions = {k: int(np.argmax(game.level_strategy("col", k))) for k in self.cfg.levels}
        return shortcut_free_levels(actions, [eq_col, modal(self._column_population(game))])

    def _predict_column(self, rng: np.random.Generator, gid: str, name: str, game: MatrixGame,
                        ctx: str, cols: tuple[str, ...], eq_col: int) -> StrategicItem:
        cfg = self.cfg
        level = int(rng.choice(self._column_levels(game, eq_col)))
        opp = BoundedOpponent.of(level, cfg.noise, game.level_strategy("col", level))
        hist, nxt = self._history(rng, opp)
        pop = self._column_population(game)
        hm = history_mode(hist, len(cols))
        baselines = (("equilibrium", cols[eq_col]), ("population_prior", cols[modal(pop)]),
                     ("history_mode", cols[hm if hm is not None else 0]),
                     (ORACLE, cols[modal(opp.dist())]))
        return StrategicItem(
            f"{gid}-predictive", name, "predictive",
            ctx + f"\nThis opponent's last {len(hist)} choices, oldest first: "
            f"{_history_text([cols[h] for h in hist])}.",
            "Which column will this opponent choose next?", cols, cols[nxt],
            baselines=baselines, opponent_level=level)

    def signalling(self, rng: np.random.Generator, gid: str) -> list[StrategicItem]:
        while True:
            q = float(rng.choice([0.2, 0.3, 0.4, 0.6, 0.7]))
            ch = float(rng.choice([0.5, 1.0, 1.5, 2.5]))
            cl = float(rng.choice([2.5, 3.0, 4.0]))
            if cl <= ch:
                continue
            game = SignallingGame.job_market(q, ch, cl)
            refined = game.refined()
            if refined and len({e.sender for e in refined}) == 1:
                break
        ctx = (f"A worker is of high ability with probability {q} and of low ability "
               "otherwise; only the worker knows which. Before applying, the worker can take a "
               f"course: it costs a high-ability worker {format_number(ch)} and a low-ability "
               f"worker {format_number(cl)}. An employer sees whether the worker took the "
               "course, not the ability, and pays a high wage (worth 2 to the worker) or a "
               "low wage (worth 0). The employer wants to pay the high wage to high-ability "
               "workers and the low wage to low-ability ones.")
        t = int(rng.integers(2))
        better = 0 if game.sender[t, 0, 0] > game.sender[t, 1, 1] else 1
        norm = StrategicItem(f"{gid}-normative", "signalling", "normative", ctx,
                             "Suppose the employer pays the high wage exactly to workers who "
                             f"took the course. What should a {game.types[t]}-ability worker "
                             "do?", WORKER, WORKER[better])
        t2 = int(rng.integers(2))
        eq = StrategicItem(f"{gid}-equilibrium", "signalling", "equilibrium", ctx,
                           "In the game's equilibrium (pure perfect Bayesian, surviving the "
                           f"intuitive criterion), what does a {game.types[t2]}-ability worker "
                           "do?", WORKER, WORKER[refined[0].sender[t2]])
        return [norm, eq, self._predict_employer(rng, gid, game, ctx, refined[0])]

    def _predict_employer(self, rng: np.random.Generator, gid: str, game: SignallingGame,
                          ctx: str, eq: Equilibrium) -> StrategicItem:
        cfg = self.cfg
        acts = game.actions
        prior_best = game.best_actions(game.prior)[0]

        def level_policy(k: int, m: int) -> np.ndarray:
            # level-0 ignores the course and answers the prior; level-1 trusts it
            return point(2, prior_best if k == 0 else m)

        def eq_action(m: int) -> int:
            # the refined equilibrium's response on its path; off the path, the prior's best
            return eq.receiver[m] if eq.on_path(m) else prior_best

        # an employer level and a next message on which the equilibrium answer is wrong
        combos = [(k, m) for k in (0, 1) for m in range(2)
                  if int(np.argmax(level_policy(k, m))) != eq_action(m)]
        level, m = combos[int(rng.integers(len(combos)))] if combos else (0, 0)
        opps = [BoundedOpponent.of(level, cfg.noise, level_policy(level, mm)) for mm in range(2)]
        msgs = [int(x) for x in rng.integers(0, 2, cfg.history_length)]
        hist = [int(opps[mm].sample(rng)) for mm in msgs]  # type: ignore[arg-type]
        nxt = int(opps[m].sample(rng))  # type: ignore[arg-type]
        weights = poisson_weights(cfg.tau, (0, 1))
        pop = population([level_policy(k, m) for k in (0, 1)], weights, cfg.noise)
        same = [a for mm, a in zip(msgs, hist, strict=True) if mm == m] or hist
        hm = history_mode(same, 2)
        eq_act = eq_action(m)
        baselines = (("equilibrium", acts[eq_act]), ("population_prior", acts[modal(pop)]),
                     ("history_mode", acts[hm if hm is not None else 0]),
                     (ORACLE, acts[modal(opps[m].dist())]))
        told = "took" if m == 0 else "skipped"
        past = [f"{'course' if mm == 0 else 'no course'} -> {acts[a]}"
                for mm, a in zip(msgs, hist, strict=True)]
        return StrategicItem(
            f"{gid}-predictive", "signalling", "predictive",
            ctx + f"\nThis employer's last {len(hist)} decisions, oldest first: "
            f"{'; '.join(past)}.",
            f"The next worker {told} the course. Which wage will this employer pay?", acts,
            acts[nxt], baselines=baselines, opponent_level=level)


def generate_strategic(cfg: StrategicConfig) -> list[StrategicItem]:
    """Three questions per game instance, ``cfg.n_per_game`` instances per game; the same
    config gives the same items."""
    return _Gen(cfg).items()


@dataclass(frozen=True)
class StrategicScore:
    """Per-item records, accuracy by game and question, and predictive lifts (plan §8.5)."""

    records: pl.DataFrame
    by_kind: pl.DataFrame
    lifts: pl.DataFrame
    accuracy: dict[str, float | None]

    @property
    def predictive_accuracy(self) -> float | None:
        return self.accuracy.get("predictive")


def score_strategic(
    items: Sequence[StrategicItem], records: Mapping[str, ItemRecord],
    n_resamples: int = 2000, seed: int = 0,
) -> StrategicScore:
    """Score one system's records (keyed by item id) against the gold and the baselines."""
    rows = []
    for it in items:
        rec = records[it.id]
        row: dict[str, object] = {
            "id": it.id, "game": it.game, "kind": it.kind, "gold": it.gold,
            "answer": rec.answer_text, "status": rec.status,
            "correct": it.is_correct(rec.answer_text), "opponent_level": it.opponent_level,
        }
        for b in (*BASELINES, ORACLE):
            row[f"{b}_correct"] = it.is_correct(it.baseline(b)) if it.baselines else None
        rows.append(row)
    schema = {"id": pl.Utf8, "game": pl.Utf8, "kind": pl.Utf8, "gold": pl.Utf8,
              "answer": pl.Utf8, "status": pl.Utf8, "correct": pl.Boolean,
              "opponent_level": pl.Int64} | {f"{b}_correct": pl.Boolean
                                             for b in (*BASELINES, ORACLE)}
    rec = pl.DataFrame(rows, schema=schema)
    by_kind = (rec.group_by("game", "kind", maintain_order=True).agg(pl.len().alias("n"),
                                                pl.col("correct").mean().alias("accuracy"))
               .sort("game", "kind"))
    overall = (rec.group_by("kind", maintain_order=True).agg(pl.len().alias("n"),
                                        pl.col("correct").mean().alias("accuracy"))
               .with_columns(pl.lit("all").alias("game")).select(by_kind.columns))
    by_kind = pl.concat([by_kind, overall.sort("kind")])
    accuracy = {k: _mean(rec.filter(pl.col("kind") == k)["correct"]) for k in KINDS}
    return StrategicScore(rec, by_kind, _lifts(rec, n_resamples, seed), accuracy)


def _mean(s: pl.Series) -> float | None:
    return float(s.cast(pl.Float64).mean()) if s.len() else None  # type: ignore[arg-type]


def _lifts(rec: pl.DataFrame, n_resamples: int, seed: int) -> pl.DataFrame:
    pred = rec.filter(pl.col("kind") == "predictive")
    rows = []
    if pred.height:
        mine = pred["correct"].cast(pl.Float64).to_numpy()
        for b in (*BASELINES, ORACLE):
            theirs = pred[f"{b}_correct"].cast(pl.Float64).to_numpy()
            res = paired_bootstrap(mine, theirs, pred["id"].to_list(), n_resamples=n_resamples,
                                   seed=seed)
            rows.append({"baseline": b, "n": pred.height, "accuracy": float(mine.mean()),
                         "baseline_accuracy": float(theirs.mean()), "lift": res.estimate,
                         "low": res.low, "high": res.high})
    schema = {"baseline": pl.Utf8, "n": pl.Int64, "accuracy": pl.Float64,
              "baseline_accuracy": pl.Float64, "lift": pl.Float64, "low": pl.Float64,
              "high": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


@dataclass(frozen=True)
class StrategicRun:
    system: str
    records: tuple[ItemRecord, ...]
    score: StrategicScore


def run_strategic(system: System, items: Sequence[StrategicItem], batch_size: int = 64,
                  n_resamples: int = 2000, seed: int = 0) -> StrategicRun:
    """Ask every strategic question and score the answers."""
    records = run_system(system, [it.reader_item() for it in items], batch_size)
    score = score_strategic(items, {r.item_id: r for r in records}, n_resamples, seed)
    return StrategicRun(system.name, tuple(records), score)
