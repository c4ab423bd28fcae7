"""Gates A-E as decision rules: runs from scripted models whose differences are known."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import polars as pl
import pytest

from cogrsi_lib.nested import baseline_curves, baseline_table, generate, integrity_table
from cogrsi_lib.nested.items import NestedConfig
from cogrsi_lib.scorecard.applied import applied_items
from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.gates import (
    FAIL,
    NOT_RUN,
    PASS,
    Check,
    Decision,
    GateConfig,
    GateOutcome,
    Replication,
    decision_table,
    gate_a,
    gate_b,
    gate_c,
    gate_d,
    gate_e,
)
from cogrsi_lib.scorecard.runs import Suites, SystemRun, run_suites
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill
from cogrsi_lib.scorecard.strategic import StrategicConfig, generate_strategic

from .helpers import nested_items

CFG = GateConfig(n_resamples=300)


@lru_cache(maxsize=4)
def suites(seed: int = 5) -> Suites:
    # 10 per cell (60 applied items): enough that the scripted skills' real differences
    # have intervals that exclude zero
    items = nested_items(seed, n_per_cell=10)
    return Suites(items, tuple(applied_items(items)),
                  tuple(generate_strategic(StrategicConfig(n_per_game=3, seed=seed))),
                  n_resamples=200)


@lru_cache(maxsize=32)
def run(skill: Skill, seed: int = 5, name: str = "x", model: str = "m") -> SystemRun:
    s = suites(seed)
    m = ScriptedModel(name=model, skills={"bare": skill}).add_nested(s.nested)
    m.add_applied(s.applied).add_strategic(s.strategic)
    b = m.backend()
    return run_suites(DirectSystem(b, name=name), b, s)


SHALLOW = Skill(depth_limit=2, leak_period=2, gap_period=2, confidence=0.7)
DEEP = Skill(depth_limit=4, confidence=0.9)


def statuses(o: GateOutcome) -> dict[str, str]:
    return {c.check: c.status for c in o.checks}


def test_gate_b_passes_a_real_improvement_and_fails_none() -> None:
    better = gate_b(run(DEEP, name="deep"), run(SHALLOW, name="shallow"), CFG)
    assert better.passed
    s = statuses(better)
    assert s["R2/R3 accuracy gain"] == PASS and s["applied-ToM conversion gain"] == PASS
    # the deep model never leaks: every resample gives a reduction of exactly 1, an interval
    # without width, which cannot carry the criterion
    (leak,) = [c for c in better.checks if c.check == "leakage relative reduction"]
    assert leak.status == FAIL and (leak.low, leak.high) == (1.0, 1.0)
    assert "degenerate interval" in leak.note
    same = gate_b(run(SHALLOW, name="a"), run(SHALLOW, name="b"), CFG)
    assert same.status == FAIL
    assert {c.estimate for c in same.checks if c.check != "leakage relative reduction"} == {0.0}
    # a leak-free comparison leaves the leakage criterion without evidence, not passed
    none = gate_b(run(DEEP, name="a"), run(DEEP, name="b"), CFG)
    assert statuses(none)["leakage relative reduction"] == NOT_RUN and not none.passed


def test_gate_b_needs_an_interval_that_excludes_zero() -> None:
    # identical runs: every estimate is 0 with the interval [0, 0]; thresholds of -1 are met
    lenient = CFG.model_copy(update={"min_deep_gain": -1.0, "min_leakage_reduction": -1.0,
                                     "min_conversion_gain": -1.0})
    a, b = run(SHALLOW, name="a"), run(SHALLOW, name="b")
    strict = gate_b(a, b, lenient)
    assert strict.status == FAIL
    assert all(c.low == 0.0 for c in strict.checks if c.status != NOT_RUN)
    # without the CI requirement the thresholds are met, but an interval collapsed to one
    # value measured nothing: still no pass
    loose = gate_b(a, b, lenient.model_copy(update={"require_ci": False}))
    assert loose.status == FAIL
    assert all("degenerate interval" in c.note for c in loose.checks if c.status != NOT_RUN)


def test_gate_c_catches_regressions_and_missing_evidence() -> None:
    base = run(DEEP, name="base")
    worse = run(Skill(depth_limit=0, confidence=0.99), name="worse")  # answers reality
    c = gate_c(worse, base, CFG)
    s = statuses(c)
    assert s["R0/R1 accuracy change"] == FAIL and s["Brier change"] == FAIL
    assert c.status == FAIL
    ok = gate_c(run(DEEP, name="same"), base, CFG)
    assert statuses(ok)["R0/R1 accuracy change"] == PASS
    # Suite D was not run: the battery check has no evidence, so Gate C cannot pass
    assert statuses(ok)["self/cross prediction change (unrelated battery)"] == NOT_RUN
    assert ok.status == NOT_RUN and not ok.passed
    costly = gate_c(run(DEEP, name="same"), base, CFG.model_copy(update={"max_cost_ratio": 0.5}))
    assert statuses(costly)["cost ratio (tokens per task)"] == FAIL


def test_gate_c_compares_predictions_only_where_the_target_answered() -> None:
    from cogrsi_lib.scorecard.selfpred import (
        CROSS,
        SelfPredConfig,
        Target,
        run_selfpred,
        score_selfpred,
    )

    from .helpers import TableSystem

    cfg = SelfPredConfig(n_test=4, counts=(0,), classes=("colour",))
    test_ids = sorted(t.id for t in cfg.tasks()[: cfg.n_test])

    def scored(answer: str, silent: list[str]):
        target = Target("t", CROSS, TableSystem(lambda it: None if it.item_id in silent
                                                else "red"))
        return score_selfpred(run_selfpred(TableSystem(lambda it: answer), [target], cfg))

    name = "self/cross prediction change (unrelated battery)"
    # the target said nothing on every task: no evidence, never a tie at zero
    mute = gate_c(replace(run(DEEP, name="a"), selfpred=scored("red", test_ids)),
                  replace(run(DEEP, name="b"), selfpred=scored("blue", test_ids)), CFG)
    check = next(c for c in mute.checks if c.check == name)
    assert check.status == NOT_RUN and "no common scored" in check.note
    # where it answered, the change is measured on those entries only
    part = gate_c(replace(run(DEEP, name="a"), selfpred=scored("blue", test_ids[:2])),
                  replace(run(DEEP, name="b"), selfpred=scored("red", test_ids[:2])), CFG)
    check = next(c for c in part.checks if c.check == name)
    assert check.status == FAIL and check.estimate == -1.0


def test_gate_d_requires_the_replications_it_names() -> None:
    t, b = run(DEEP, name="t"), run(SHALLOW, name="b")
    t2, b2 = run(DEEP, seed=6, name="t"), run(SHALLOW, seed=6, name="b")
    seed_only = [Replication("seed", "seed 6", t2, b2)]
    assert gate_d(seed_only, architectural=False, cfg=CFG).passed
    d = gate_d(seed_only, architectural=True, cfg=CFG)
    assert d.status == NOT_RUN and not d.passed  # no alternate model: not run, not passed
    alt = Replication("model", "alt", run(DEEP, name="t", model="alt"),
                      run(SHALLOW, name="b", model="alt"))
    assert gate_d([*seed_only, alt], architectural=True, cfg=CFG).passed
    flat = Replication("seed", "seed 6, no gain", t2, run(DEEP, seed=6, name="b"))
    assert gate_d([flat], architectural=False, cfg=CFG).status == FAIL
    assert gate_b(t, b, CFG).passed
    with pytest.raises(ValueError):
        Replication("vibes", "x", t, b)


def test_gate_e_fails_when_the_ablation_scores_the_same() -> None:
    t = run(DEEP, name="t")
    assert gate_e(t, run(SHALLOW, name="ablated"), CFG).passed
    e = gate_e(t, run(DEEP, name="ablated"), CFG)
    assert e.status in (FAIL, NOT_RUN) and not e.passed


def test_gate_a_and_frozen_items() -> None:
    gen = generate(NestedConfig(n_per_cell=6, seed=5))
    table = baseline_table(gen.items)
    integrity = integrity_table(gen, table, baseline_curves(gen.items))
    runs = [run(DEEP, name="a"), run(SHALLOW, name="b")]
    assert gate_a(integrity, runs).passed
    other = run(DEEP, seed=6, name="c")
    a = gate_a(integrity, [*runs, other])
    assert statuses(a)["every variant answered the same frozen items"] == FAIL
    broken = integrity.with_columns(pl.lit(False).alias("passed"))
    assert gate_a(broken, runs).status == FAIL
    with pytest.raises(ValueError, match="same items"):
        gate_b(runs[0], other, CFG)


def test_decisions_keep_only_when_every_gate_passes() -> None:
    ok = GateOutcome("B", "b", "any", (Check("x", PASS),))
    bad = GateOutcome("C", "c", "all", (Check("y", PASS), Check("z", NOT_RUN)))
    keep = Decision("good", (ok,))
    toss = Decision("bad", (ok, bad))
    assert keep.keep and not toss.keep
    t = decision_table([keep, toss])
    assert t["decision"].to_list() == ["keep", "toss"]
    assert t.filter(t["intervention"] == "bad")["gate_C"][0] == NOT_RUN
    assert toss.table().height == 3
    assert GateOutcome("E", "e", "any", (Check("x", NOT_RUN),)).status == NOT_RUN
    assert GateOutcome("E", "e", "any", (Check("x", FAIL), Check("y", PASS))).passed


def test_a_gate_check_on_too_few_items_cannot_pass() -> None:
    strict = CFG.model_copy(update={"min_n": 1000})
    better = gate_b(run(DEEP, name="deep"), run(SHALLOW, name="shallow"), strict)
    assert better.status == FAIL
    for c in better.checks:
        assert c.status == FAIL and "underpowered: n = " in c.note and "< 1000" in c.note
    regress = gate_c(run(DEEP, name="deep"), run(SHALLOW, name="shallow"), strict)
    assert statuses(regress)["R0/R1 accuracy change"] == FAIL


def test_gate_d_has_nothing_to_replicate_after_a_failed_gate_b() -> None:
    failed = gate_b(run(SHALLOW, name="a"), run(SHALLOW, name="b"), CFG)
    reps = [Replication("seed", "seed 6", run(DEEP, 6, "deep"), run(SHALLOW, 6, "shallow"))]
    assert gate_d(reps, architectural=False, cfg=CFG).passed
    d = gate_d(reps, architectural=False, cfg=CFG, primary=failed)
    assert d.status == FAIL
    assert statuses(d)["Gate B on the primary run"] == FAIL
