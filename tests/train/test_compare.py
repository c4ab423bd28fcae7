"""Base vs trained: paired differences per set and stratum, pools, and the shortcut columns."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.train.compare import NESTED, compare
from cogrsi_lib.train.report import transfer_summary


def records(rows):
    out = []
    for model, set_, stratum, item, story, gold, correct in rows:
        out.append({"model": model, "set": set_, "stratum": stratum, "item_id": item,
                    "story_id": story, "n_options": 2, "gold": gold, "correct": correct})
    return pl.DataFrame(out)


def test_paired_differences_pools_and_constant_label():
    rows = []
    for k in range(40):
        st = "first_order_1_tom" if k % 2 else "first_order_0_no_tom"
        # base always wrong; trained right on the odd items only, whose gold is always B
        gold = "B" if k % 2 else "A"
        rows.append(("base", "tomi", st, f"t{k}", f"s{k // 2}", gold, False))
        rows.append(("trained", "tomi", st, f"t{k}", f"s{k // 2}", gold, bool(k % 2)))
    for k in range(10):
        rows.append(("base", NESTED, f"R{k % 2}", f"n{k}", f"w{k}", "A", True))
        rows.append(("trained", NESTED, f"R{k % 2}", f"n{k}", f"w{k}", "A", True))
    t = compare(records(rows), n_resamples=500)
    row = {(r["set"], r["stratum"]): r for r in t.to_dicts()}
    tom = row[("tomi", "first_order_1_tom")]
    assert tom["diff"] == pytest.approx(1.0) and tom["excludes_zero"]
    assert tom["best_constant"] == 1.0  # every gold is B: a fixed "B" would score 1
    pooled = row[("tomi", "first_order (pooled)")]
    assert pooled["n"] == 40 and pooled["diff"] == pytest.approx(0.5)
    assert pooled["low"] > 0 and pooled["best_constant"] == 0.5
    assert row[("tomi", "first_order_0_no_tom")]["diff"] == 0
    assert row[(NESTED, "R1-R4 (pooled)")]["n"] == 5  # R0 is left out of the pool
    nested = row[(NESTED, "all")]
    assert (nested["diff"], nested["low"], nested["high"]) == (0, 0, 0)
    summary = transfer_summary(t).to_dicts()
    tomi = next(r for r in summary if r["set"] == "tomi")
    assert "first_order_1_tom" in tomi["helps"] and tomi["hurts"] == "-"
    assert tomi["no_clear_change"] == "1 of 3 strata"


def test_unpaired_items_are_not_compared():
    rows = [("base", "tomi", "x", "a", "s", "A", True), ("trained", "tomi", "x", "b", "s", "A",
                                                          True)]
    with pytest.raises(ValueError, match="answered by both"):
        compare(records(rows), n_resamples=50)
