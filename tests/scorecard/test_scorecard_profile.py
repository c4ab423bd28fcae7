"""The §17 profile: the full vector, RR beside it (never alone), the depth curve."""

from __future__ import annotations

import pytest

from cogrsi_lib.nested.baselines import best_shortcut
from cogrsi_lib.scorecard.applied import applied_items
from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.profile import (
    FIELDS,
    RR_LABEL,
    RecursiveProfile,
    build_profile,
    depth_curves,
    interval_table,
    rr_scalar,
    scorecard_table,
)
from cogrsi_lib.scorecard.runs import Suites, run_suites, stack
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill
from cogrsi_lib.scorecard.selfpred import CROSS, SelfPredConfig, Target
from cogrsi_lib.scorecard.strategic import StrategicConfig, generate_strategic

from .helpers import nested_items


def test_rr_formula_by_hand() -> None:
    # (0.5 * 0.8 + 0.2 * 0.6 + 0.15 * 0.4 + 0.15 * 0.5) * (1 - 0.1) = 0.655 * 0.9
    assert rr_scalar(0.8, 0.6, 0.4, 0.5, 0.1) == pytest.approx(0.5895)
    assert rr_scalar(1, 1, 1, 1, 0) == pytest.approx(1.0)
    assert rr_scalar(0.8, None, 0.4, 0.5, 0.1) is None


def test_rr_is_rendered_only_beside_the_full_vector() -> None:
    values = {key: 0.5 for key, _ in FIELDS}
    p = RecursiveProfile("sys", values)
    text = p.render()
    lines = text.splitlines()
    for _, label in FIELDS:
        assert any(line.startswith(label + ":") for line in lines)
    assert lines[-1].startswith(RR_LABEL) and text.count(RR_LABEL) == 1
    assert p.rr == pytest.approx(rr_scalar(0.5, 0.5, 0.5, 0.5, 0.5))
    table = scorecard_table([p, RecursiveProfile("other", {})])
    assert table["key"].to_list()[-1] == "rr" and table.height == len(FIELDS) + 1
    assert table["other"].null_count() == table.height  # nothing measured, nothing shown
    assert "n/a" in RecursiveProfile("other", {}).render().splitlines()[-1]


@pytest.fixture(scope="module")
def runs():
    items = nested_items()
    ap = tuple(applied_items(items))
    st = tuple(generate_strategic(StrategicConfig(n_per_game=2, seed=3)))
    spc = SelfPredConfig(n_test=2, counts=(0, 5), classes=("colour",))
    other = ScriptedModel("other", preferences={"colour": 2}).add_tasks(spc.tasks())
    suites = Suites(items, ap, st, spc,
                    (Target("other", CROSS, DirectSystem(other.backend(), name="other")),),
                    n_resamples=200)
    out = {}
    for name, skill in (("bare", Skill(2, 4, 3, 0.7)), ("deep", Skill(4, 0, 0, 0.9))):
        m = ScriptedModel(name, skills={"bare": skill}).add_nested(items).add_applied(ap)
        m.add_strategic(st).add_tasks(spc.tasks())
        b = m.backend()
        out[name] = run_suites(DirectSystem(b, name=name), b, suites)
    return out, suites


def test_profile_values_come_from_the_suites(runs) -> None:
    out, suites = runs
    bare, deep = out["bare"], out["deep"]
    p = build_profile(deep, bare)
    v = p.values
    by_depth = {r["depth"]: r for r in deep.nested.score.by_depth.iter_rows(named=True)}
    for k in range(5):
        assert v[f"R{k}_accuracy"] == by_depth[k]["accuracy"]
    assert v["R4_accuracy"] == 1.0 and v["leakage_rate"] == 0.0
    assert v["lift_vs_bare"] == pytest.approx(deep.nested.score.accuracy
                                              - bare.nested.score.accuracy)
    best = {r["depth"]: r["best_heuristic_accuracy"]
            for r in best_shortcut(suites.heuristic_baselines()).iter_rows(named=True)}
    assert v["R3_recursive_lift"] == pytest.approx(1.0 - best[3])
    assert v["applied_conversion"] == deep.applied.score.conversion
    assert v["strategic_prediction"] == deep.strategic.score.predictive_accuracy
    assert v["self_prediction"] == deep.selfpred.self_accuracy
    assert v["cross_prediction"] == deep.selfpred.cross_accuracy
    assert v["calls_per_100"] == 100.0  # one call per task
    assert p.rr == pytest.approx(rr_scalar(
        v["depth_auc"], v["applied_behaviour_accuracy"], v["strategic_prediction"],
        (v["self_prediction"] + v["cross_prediction"]) / 2, v["leakage_rate"]))
    assert build_profile(bare).values["lift_vs_bare"] is None
    assert build_profile(bare, bare).values["lift_vs_bare"] == 0.0


def test_depth_curves_and_intervals(runs) -> None:
    out, suites = runs
    curves = depth_curves(list(out.values()), suites.heuristic_baselines())
    assert set(curves["predictor"]) == {"bare", "deep", "best shallow heuristic"}
    deep_all = curves.filter((curves["predictor"] == "deep") & (curves["subset"] == "all"))
    assert deep_all["accuracy"].to_list() == [1.0] * 5
    iv = interval_table(out["bare"], n_resamples=200)
    for r in iv.iter_rows(named=True):
        assert r["low"] <= r["estimate"] <= r["high"]
    assert {"R3_accuracy", "leakage_rate", "false_belief_accuracy"} <= set(iv["metric"])
    cells = stack(out, lambda r: r.applied.score.cells)
    assert set(cells["system"]) == {"bare", "deep"}
