"""Registration: the margin, the two-of-three cohort rule, gates and tie-breaking (CogRSI §4.2)."""

from __future__ import annotations

import pytest

from cogrsi_lib.loops.gates import GateResult
from cogrsi_lib.loops.registration import RegistrationRule, Scored, cohort_gain, select, verdict

RULE = RegistrationRule(delta=3.0, min_nonneg=2)


def test_cohort_gain_is_points_of_accuracy():
    assert cohort_gain(46, 40, 80) == pytest.approx(7.5)
    assert cohort_gain(40, 41, 80) == pytest.approx(-1.25)
    with pytest.raises(ValueError):
        cohort_gain(1, 1, 0)


def test_margin_is_inclusive_and_exact_on_cohort_steps():
    # cohorts of 80: a net 7 more right answers over the three cohorts is 2.92 points, 8 is 3.33
    seven = Scored(0, (cohort_gain(3, 0, 80), cohort_gain(2, 0, 80), cohort_gain(2, 0, 80)))
    eight = Scored(1, (cohort_gain(3, 0, 80), cohort_gain(3, 0, 80), cohort_gain(2, 0, 80)))
    assert not verdict(RULE, seven).passes_margin
    assert verdict(RULE, eight).admissible
    # cohorts of 100: a mean of exactly 3.0 passes, whatever the float rounding
    exact = Scored(2, (cohort_gain(43, 40, 100), cohort_gain(51, 47, 100),
                       cohort_gain(30, 28, 100)))
    assert exact.mean_gain == pytest.approx(3.0)
    assert verdict(RULE, exact).passes_margin
    assert not verdict(RegistrationRule(3.01, 2), exact).passes_margin
    assert verdict(RegistrationRule(1.0, 0), seven).admissible


def test_two_of_three_cohorts_must_not_lose():
    spike = Scored(0, (20.0, -1.25, -1.25))  # mean 5.8 >= 3, but only one cohort >= 0
    assert verdict(RULE, spike).passes_margin
    assert not verdict(RULE, spike).passes_cohorts
    assert verdict(RULE, spike).reason == "cohort_rule"
    two = Scored(1, (12.5, 0.0, -1.25))  # a zero gain counts as not losing
    assert verdict(RULE, two).admissible
    assert verdict(RegistrationRule(3.0, 0), spike).admissible  # the rule switched off
    assert verdict(RegistrationRule(3.0, 3), two).reason == "cohort_rule"
    with pytest.raises(ValueError):
        RegistrationRule(3.0, 4).passes_cohorts((1.0, 2.0, 3.0))


def test_largest_mean_gain_wins_over_a_larger_gate_gain():
    a = Scored(0, (4.0, 4.0, 4.0), (GateResult("counterfactual", True, 10.0),))
    b = Scored(1, (5.0, 5.0, 5.0), (GateResult("counterfactual", True, -2.0),))
    assert select(RULE, [a, b])[0] == 1


def test_ties_go_to_the_larger_gate_gain_whatever_the_order():
    low = (GateResult("counterfactual", True, 1.0),)
    high = (GateResult("counterfactual", True, 3.125),)
    gains = (cohort_gain(4, 0, 80), cohort_gain(3, 0, 80), cohort_gain(5, 0, 80))  # 5.0
    gains_b = (cohort_gain(5, 0, 80), cohort_gain(4, 0, 80), cohort_gain(3, 0, 80))  # 5.0
    for order in ((0, 1), (1, 0)):
        cands = [Scored(order[0], gains, low), Scored(order[1], gains_b, high)]
        assert select(RULE, cands)[0] == order[1]


def test_full_tie_goes_to_the_earlier_candidate():
    g = (GateResult("counterfactual", True, 0.0),)
    assert select(RULE, [Scored(2, (4.0,) * 3, g), Scored(1, (4.0,) * 3, g)])[0] == 1
    assert select(RULE, [Scored(3, (4.0,) * 3), Scored(5, (4.0,) * 3)])[0] == 3  # no gates


def test_a_failed_gate_excludes_the_best_candidate():
    best = Scored(0, (9.0,) * 3, (GateResult("counterfactual", False, -5.0),))
    ok = Scored(1, (3.0,) * 3, (GateResult("counterfactual", True, 0.0),))
    winner, verdicts = select(RULE, [best, ok])
    assert winner == 1
    assert [v.reason for v in verdicts] == ["gate", "admissible"]
    assert select(RULE, [best])[0] is None


def test_no_admissible_candidate_no_admission():
    winner, verdicts = select(RULE, [Scored(0, (2.9, 3.0, 3.0)), Scored(1, (-3.0, -1.25, 14.0))])
    assert winner is None
    assert [v.reason for v in verdicts] == ["below_margin", "cohort_rule"]
