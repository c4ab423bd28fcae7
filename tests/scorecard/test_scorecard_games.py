"""Game solvers against hand-computed equilibria (plan §4 Suite C)."""

from __future__ import annotations

import numpy as np
import pytest

from cogrsi_lib.scorecard.games import (
    GuessingGame,
    MatrixGame,
    SignallingGame,
    solve_zero_sum,
)


def test_guessing_game_levels_and_equilibrium() -> None:
    g = GuessingGame(p=2 / 3)
    assert [round(g.level_guess(k), 4) for k in range(4)] == [50.0, 33.3333, 22.2222, 14.8148]
    assert g.equilibrium() == 0.0
    assert g.best_response(0.0) == 0.0  # 0 is a fixed point: the equilibrium
    assert GuessingGame(p=0.5, low=10, high=90).equilibrium() == 10.0
    assert GuessingGame(p=0.5, low=10, high=90).best_response(12) == 10  # clipped
    with pytest.raises(ValueError):
        GuessingGame(p=1.0)


def test_zero_sum_mixed_equilibrium_by_hand() -> None:
    # Up/Down vs Left/Right, row payoffs [[3, -1], [-2, 1]]:
    # row p on Up: 3p - 2(1-p) = -p + (1-p)  ->  p = 3/7; value 5p - 2 = 1/7
    # column q on Left: 3q - (1-q) = -2q + (1-q)  ->  q = 2/7
    x, y, v = solve_zero_sum(np.array([[3, -1], [-2, 1]]))
    assert x == pytest.approx([3 / 7, 4 / 7])
    assert y == pytest.approx([2 / 7, 5 / 7])
    assert v == pytest.approx(1 / 7)


@pytest.mark.parametrize(
    ("payoffs", "x", "y", "v"),
    [
        ([[1, -1], [-1, 1]], [0.5, 0.5], [0.5, 0.5], 0.0),  # matching pennies
        ([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], [1 / 3] * 3, [1 / 3] * 3, 0.0),  # RPS
        ([[2, 3], [1, 4]], [1, 0], [1, 0], 2.0),  # saddle point (Up, Left)
    ],
)
def test_zero_sum_known_games(payoffs, x, y, v) -> None:
    gx, gy, gv = solve_zero_sum(np.array(payoffs))
    assert gx == pytest.approx(x, abs=1e-7)
    assert gy == pytest.approx(y, abs=1e-7)
    assert gv == pytest.approx(v, abs=1e-7)


def test_linprog_and_nashpy_agree_on_random_zero_sum_games() -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        a = rng.integers(-5, 6, (2, 2))
        game = MatrixGame.zero_sum(a, ("U", "D"), ("L", "R"))
        if game.pure_equilibria():
            continue
        x, y, _ = solve_zero_sum(a)
        (nx, ny), = game.equilibria()
        assert nx == pytest.approx(x, abs=1e-7) and ny == pytest.approx(y, abs=1e-7)
        assert game.is_equilibrium(x, y)
        checked += 1
    assert checked > 30


def test_prisoners_dilemma_and_battle_of_the_sexes() -> None:
    pd = MatrixGame(np.array([[3, 0], [5, 1]]), np.array([[3, 5], [0, 1]]), ("C", "D"),
                    ("C", "D"))
    (x, y), = pd.equilibria()
    assert list(x) == [0, 1] and list(y) == [0, 1]
    assert pd.pure_equilibria() == [(1, 1)]
    assert list(pd.level_strategy("col", 1)) == [0, 1]  # defect is dominant
    assert list(pd.level_strategy("row", 0)) == [0.5, 0.5]
    # battle of the sexes: (U, L), (D, R) and the mixed x = (2/3, 1/3), y = (1/3, 2/3)
    bos = MatrixGame(np.array([[2, 0], [0, 1]]), np.array([[1, 0], [0, 2]]), ("U", "D"),
                     ("L", "R"))
    eqs = bos.equilibria()
    assert len(eqs) == 3
    mixed = [e for e in eqs if 0 < e[0][0] < 1]
    assert mixed[0][0] == pytest.approx([2 / 3, 1 / 3])
    assert mixed[0][1] == pytest.approx([1 / 3, 2 / 3])
    assert not bos.is_equilibrium(np.array([1, 0]), np.array([0, 1]))


def test_level_k_ties_are_detected() -> None:
    # the column player is indifferent between L and R against uniform rows
    g = MatrixGame(np.zeros((2, 2)), np.array([[1, 0], [0, 1]]), ("U", "D"), ("L", "R"))
    assert g.level_ties("col", 1)
    assert not g.level_ties("col", 0)


def test_signalling_job_market_by_hand() -> None:
    # prior 0.3 on high ability, course costs 1 (high) and 3 (low), high wage worth 2.
    game = SignallingGame.job_market(0.3, 1.0, 3.0)
    eqs = {(e.sender, e.receiver): e for e in game.equilibria()}
    # separating: high takes the course, low does not; the employer follows the signal
    assert ((0, 1), (0, 1)) in eqs
    # pooling on no course: 0.3 < 1/2, so the low wage; the course is off the path, believed
    # low ability (belief on high at most 1/2)
    pool = eqs[((1, 1), (1, 1))]
    assert pool.kind == "pooling" and pool.beliefs[0] == (0.0, 0.5)
    assert len(eqs) == 2
    # the intuitive criterion: the low type can never gain from the course (0 > 2 - 3), so the
    # course signals high ability, and the high type would deviate (2 - 1 > 0)
    assert game.intuitive(eqs[((0, 1), (0, 1))])
    assert not game.intuitive(pool)
    assert [(e.sender, e.receiver) for e in game.refined()] == [((0, 1), (0, 1))]


def test_signalling_no_separation_when_the_course_is_too_dear() -> None:
    game = SignallingGame.job_market(0.3, 2.5, 3.0)
    refined = game.refined()
    assert refined and {e.sender for e in refined} == {(1, 1)}  # nobody takes the course


def test_signalling_two_refined_equilibria_when_the_prior_favours_high() -> None:
    # prior 0.6: pooling on no course pays the high wage; both types would lose by the
    # course, so the criterion cannot rule pooling out, and separation also survives
    game = SignallingGame.job_market(0.6, 1.0, 3.0)
    assert {e.sender for e in game.refined()} == {(0, 1), (1, 1)}


def test_receiver_best_actions_follow_the_belief() -> None:
    game = SignallingGame.job_market(0.3, 1.0, 3.0)
    assert game.best_actions(0.8) == (0,) and game.best_actions(0.2) == (1,)
    assert game.best_actions(0.5) == (0, 1)
    assert game._supporting(0) == (0.5, 1.0) and game._supporting(1) == (0.0, 0.5)
    assert game.posterior((0, 1), 0) == 1.0 and game.posterior((1, 1), 0) is None
    assert game.posterior((1, 1), 1) == pytest.approx(0.3)
