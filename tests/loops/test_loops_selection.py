"""Selection quality (Table 5) from held-out scores of the candidates (App. C.2)."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.loops.evaluate import heldout_candidates
from cogrsi_lib.loops.selection import selection_quality
from cogrsi_lib.loops.slot import Scorer

from .helpers import TableSystem, pool


def scored(rows):
    return pl.DataFrame(
        [{"arm": a, "seed": 0, "round": r, "candidate": c, "admitted": adm, "heldout_gain": g,
          "helps": g > 0, "hurts": g < 0} for a, r, c, adm, g in rows])


def test_table5_counts_admissions_precision_harm_recall_missed_and_gap():
    rows = [
        # round 0: admitted a helpful one; a better one existed (gap 2)
        ("x", 0, 0, True, 1.0), ("x", 0, 1, False, 3.0),
        # round 1: admitted a harmful one
        ("x", 1, 0, True, -2.0), ("x", 1, 1, False, -1.0),
        # round 2: a helpful candidate, nothing admitted (missed)
        ("x", 2, 0, False, 4.0),
        # round 3: nothing helpful, nothing admitted
        ("x", 3, 0, False, 0.0),
    ]
    rounds = pl.DataFrame({"arm": ["x"] * 5, "seed": [0] * 5, "round": [0, 1, 2, 3, 4]})
    t = selection_quality(scored(rows), rounds).row(0, named=True)
    assert t["rounds"] == 5 and t["candidates"] == 6 and t["admissions"] == 2
    assert t["adm_share"] == pytest.approx(40.0)
    assert t["precision"] == pytest.approx(50.0) and t["harm"] == pytest.approx(50.0)
    assert t["helpful"] == 3 and t["recall"] == pytest.approx(100 / 3)
    assert t["missed"] == 1 and t["missed_share"] == pytest.approx(20.0)
    assert t["selection_gap"] == pytest.approx((2.0 + 1.0) / 2)  # -1 - (-2) = 1 in round 1


def test_no_admissions_leave_precision_undefined():
    rounds = pl.DataFrame({"arm": ["y"], "seed": [0], "round": [0]})
    t = selection_quality(scored([("y", 0, 0, False, 1.0)]), rounds).row(0, named=True)
    assert t["admissions"] == 0 and t["precision"] is None and t["selection_gap"] is None
    assert t["missed"] == 1


def test_heldout_scoring_compares_each_candidate_with_its_incumbent():
    items = pool(n_stories=10, per_story=1)
    good = {it.item_id for it in items[:7]}

    def correct(p, it):
        return it.item_id in good if "better" in p else it.item_id in list(good)[:5]

    cands = pl.DataFrame({"arm": ["x", "x"], "seed": [0, 0], "round": [0, 1],
                          "candidate": [0, 0], "principle": ["better", "plain"],
                          "admitted": [True, False]})
    rounds = pl.DataFrame({"arm": ["x", "x"], "seed": [0, 0], "round": [0, 1],
                           "incumbent_principle": ["", "better"]})
    out = heldout_candidates(Scorer(TableSystem(correct)), cands, rounds, items)
    assert out["heldout_candidate"].to_list() == pytest.approx([70.0, 50.0])
    assert out["heldout_incumbent"].to_list() == pytest.approx([50.0, 70.0])
    assert out["helps"].to_list() == [True, False] and out["hurts"].to_list() == [False, True]
