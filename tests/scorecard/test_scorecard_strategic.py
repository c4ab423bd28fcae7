"""Suite C: bounded opponents, generated games, their gold answers and the predictive lifts."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from cogrsi_lib.scorecard.games import MatrixGame, SignallingGame, solve_zero_sum
from cogrsi_lib.scorecard.opponents import (
    BoundedOpponent,
    history_mode,
    hit_probability,
    modal,
    point,
    poisson_weights,
    population,
    with_noise,
)
from cogrsi_lib.scorecard.strategic import (
    BASELINES,
    GAMES,
    KINDS,
    ORACLE,
    StrategicConfig,
    generate_strategic,
    run_strategic,
    shortcut_free_levels,
)

from .helpers import TableSystem


def test_poisson_weights_and_noise() -> None:
    w = poisson_weights(1.5, (0, 1, 2))
    assert w.sum() == pytest.approx(1)
    assert w[1] / w[0] == pytest.approx(1.5) and w[2] / w[1] == pytest.approx(0.75)
    assert list(with_noise(np.array([1.0, 0.0, 0.0, 0.0]), 0.2)) == pytest.approx(
        [0.85, 0.05, 0.05, 0.05])
    with pytest.raises(ValueError):
        poisson_weights(0, (0,))


def test_modal_with_tolerance_and_history_mode() -> None:
    d = np.zeros(11)
    d[[2, 3, 4]] = [0.3, 0.0, 0.3]
    d[9] = 0.4
    assert modal(d) == 9  # exact: the single most likely action
    assert modal(d, tol=1) == 3  # within one: 3 covers 2 and 4 (0.6)
    assert hit_probability(d, 1)[3] == pytest.approx(0.6)
    assert history_mode([1, 1, 2, 0, 2], 3) == 1  # ties: lowest action
    assert history_mode([], 3) is None
    assert list(point(5, 0, jitter=1)) == pytest.approx([0.5, 0.5, 0, 0, 0])


def test_bounded_opponent_samples_its_policy() -> None:
    opp = BoundedOpponent.of(1, 0.3, point(3, 2))
    assert opp.dist() == pytest.approx([0.1, 0.1, 0.8])
    draws = opp.sample(np.random.default_rng(0), 4000)
    assert np.bincount(draws, minlength=3) / 4000 == pytest.approx([0.1, 0.1, 0.8], abs=0.03)
    mix = population([point(3, 0), point(3, 2)], np.array([0.25, 0.75]), 0.0)
    assert list(mix) == pytest.approx([0.25, 0, 0.75])


def test_shortcut_free_levels() -> None:
    assert shortcut_free_levels({1: 33, 2: 22, 3: 15}, [0, 33], tol=2) == [2, 3]
    assert shortcut_free_levels({1: 0, 2: 1}, [0, 1]) == []


@pytest.fixture(scope="module")
def items():
    return generate_strategic(StrategicConfig(n_per_game=4, seed=1))


def test_generation_is_deterministic_and_complete(items) -> None:
    again = generate_strategic(StrategicConfig(n_per_game=4, seed=1))
    assert [(i.id, i.context, i.question, i.gold) for i in items] == \
        [(i.id, i.context, i.question, i.gold) for i in again]
    assert {(i.game, i.kind) for i in items} == {(g, k) for g in GAMES for k in KINDS}
    assert len(items) == 4 * 3 * len(GAMES)
    assert len({i.id for i in items}) == len(items)
    other = generate_strategic(StrategicConfig(n_per_game=4, seed=2))
    assert [i.context for i in other] != [i.context for i in items]


def _payoffs(context: str, n_rows: int, zero_sum: bool) -> tuple[np.ndarray, np.ndarray]:
    """Read the payoff table back out of the rendered context."""
    lines = context.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("Left"))
    rows, cols = [], []
    for ln in lines[start + 1:start + 1 + n_rows]:
        cells = ln.split()[1:]
        if zero_sum:
            rows.append([float(c) for c in cells])
        else:
            pairs = [c.strip("(),") for c in cells]
            rows.append([float(pairs[2 * k]) for k in range(len(pairs) // 2)])
            cols.append([float(pairs[2 * k + 1]) for k in range(len(pairs) // 2)])
    r = np.array(rows)
    return r, (np.array(cols) if cols else -r)


def test_gold_answers_recomputed_from_the_rendered_games(items) -> None:
    for it in items:
        if it.game == "guessing" and it.kind == "normative":
            p = Fraction(it.context.split("closest to ")[1].split(" of")[0])
            known = int(it.question.split("guess ")[1].split(".")[0])
            assert abs(float(it.gold) - float(p) * known) <= 0.5
        if it.game == "guessing" and it.kind == "equilibrium":
            assert it.gold == "0"
        if it.game == "matrix" and it.kind == "equilibrium":
            r, c = _payoffs(it.context, 3, zero_sum=False)
            (x, _), = MatrixGame(r, c, ("Up", "Middle", "Down"), ("Left", "Centre", "Right")
                                 ).equilibria()
            assert it.gold == ("Up", "Middle", "Down")[int(np.argmax(x))]
        if it.game == "zero_sum" and it.kind == "equilibrium":
            r, _ = _payoffs(it.context, 2, zero_sum=True)
            x, _, _ = solve_zero_sum(r)
            assert float(it.gold) == pytest.approx(x[0], abs=1e-4)
            assert 0 < x[0] < 1 and it.tolerance > 0
        if it.game == "signalling" and it.kind == "equilibrium":
            q = float(it.context.split("probability ")[1].split(" ")[0])
            ch = float(it.context.split("costs a high-ability worker ")[1].split(" ")[0])
            cl = float(it.context.split("low-ability worker ")[1].split(".")[0])
            refined = SignallingGame.job_market(q, ch, cl).refined()
            t = 0 if "high-ability worker do" in it.question else 1
            assert it.gold == ("take the course", "skip the course")[refined[0].sender[t]]


def test_predictive_items_defeat_the_target_free_answers(items) -> None:
    pred = [i for i in items if i.kind == "predictive"]
    for it in pred:
        names = dict(it.baselines)
        assert set(names) == {*BASELINES, ORACLE}
        assert it.opponent_level is not None
        if it.game in ("matrix", "zero_sum", "guessing"):
            # the opponent's level-k action is neither the equilibrium's nor the population's
            assert names["equilibrium"] != names[ORACLE]
            assert names["population_prior"] != names[ORACLE]
    eq_hits = sum(i.is_correct(i.baseline("equilibrium")) for i in pred)
    oracle_hits = sum(i.is_correct(i.baseline(ORACLE)) for i in pred)
    assert oracle_hits > eq_hits


def test_numeric_answers_are_scored_within_tolerance(items) -> None:
    it = next(i for i in items if i.game == "zero_sum" and i.kind == "equilibrium")
    gold = float(it.gold)
    assert it.is_correct(str(gold + 0.015)) and not it.is_correct(str(gold + 0.03))
    assert not it.is_correct("about a half") and not it.is_correct(None)


def test_lifts_of_known_predictors(items) -> None:
    by_id = {i.id: i for i in items}

    def oracle(reader_item):
        it = by_id[reader_item.item_id]
        return it.baseline(ORACLE) if it.kind == "predictive" else it.gold

    def rational(reader_item):  # H6: the equilibrium answer to the predictive question
        it = by_id[reader_item.item_id]
        return it.baseline("equilibrium") if it.kind == "predictive" else it.gold

    for fn, name in ((oracle, "oracle"), (rational, "rational")):
        run = run_strategic(TableSystem(fn, name), items, n_resamples=200)
        s = run.score
        assert s.accuracy["normative"] == 1.0 and s.accuracy["equilibrium"] == 1.0
        lifts = {r["baseline"]: r for r in s.lifts.iter_rows(named=True)}
        pred = [i for i in items if i.kind == "predictive"]
        expected = sum(i.is_correct(fn(i.reader_item())) for i in pred) / len(pred)
        assert s.predictive_accuracy == pytest.approx(expected)
        for b in BASELINES:
            base = sum(i.is_correct(i.baseline(b)) for i in pred) / len(pred)
            assert lifts[b]["baseline_accuracy"] == pytest.approx(base)
            assert lifts[b]["lift"] == pytest.approx(expected - base)
            assert lifts[b]["low"] <= lifts[b]["lift"] <= lifts[b]["high"]
        if name == "rational":
            assert lifts["equilibrium"]["lift"] == 0.0
            assert lifts[ORACLE]["lift"] < 0


def test_unanswered_strategic_items_are_wrong(items) -> None:
    run = run_strategic(TableSystem(lambda it: None), items[:6], n_resamples=50)
    assert not run.score.records["correct"].any()
    assert set(run.score.records["status"]) == {"unparsed"}
    assert math.isclose(run.score.accuracy["normative"] or 0.0, 0.0)
