"""GEPA on the principle slot, with the scripted backend and a tiny budget (App. C.2)."""

from __future__ import annotations

import pytest

from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.loops.gepa_arm import ReaderGEPAAdapter, gepa_available, run_gepa
from cogrsi_lib.loops.scripted import BANK, ScriptedWorld
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.reader import GroundedReader

from .helpers import TableSystem, pool

OK, WHY = gepa_available()
pytestmark = pytest.mark.skipif(not OK, reason=WHY)


def test_adapter_scores_and_reflects_on_failures_with_gold():
    items = pool(n_stories=6, per_story=1)
    system = TableSystem(lambda p, it: it.item_id.endswith("0-q0") or "fix" in p)
    adapter = ReaderGEPAAdapter(Scorer(system))
    ev = adapter.evaluate(items, {"principle": ""}, capture_traces=True)
    assert ev.scores == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0] and len(ev.trajectories) == 6
    data = adapter.make_reflective_dataset({"principle": ""}, ev, ["principle"])
    recs = data["principle"]
    assert len(recs) == 5  # the failures only
    assert all(r["Feedback"] == "Wrong. The correct answer is box." for r in recs)
    assert recs[0]["Generated Outputs"] == "bag" and "Options:" in recs[0]["Inputs"]["options"]
    assert adapter.evaluate(items, {"principle": "fix"}).scores == [1.0] * 6
    assert adapter.evaluations == 12


def test_gepa_optimises_from_an_empty_seed_within_budget(tmp_path):
    items = oracle_dev_items(40, 3)
    world = ScriptedWorld(items)
    backend = world.backend()
    out = run_gepa(Scorer(GroundedReader(backend)), backend, items[:60], items[60:76],
                   budget=90, seed=0, run_dir=tmp_path)
    assert out.candidates["principle"][0] == ""  # the empty seed
    assert out.candidates.height >= 2 and out.reflection_calls >= 1
    assert world.calls["reflection"] == out.reflection_calls
    # GEPA stops at the first check past the budget: at most one minibatch pair over it
    assert 16 <= out.metric_calls <= 90 + 2 * 3 + 16
    texts = {b.text() for b in BANK}
    proposed = [p for p in out.candidates["principle"][1:]]
    assert all(any(t in p for t in texts) for p in proposed)
    assert out.principle in set(out.candidates["principle"])
    best = out.candidates.filter(out.candidates["best"])
    assert best["val_score"].item() == out.candidates["val_score"].max()
