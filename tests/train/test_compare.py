"""Base vs trained: paired differences per set and stratum, pools, and the shortcut columns."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib.train.compare import NESTED, PAIRS, RECORDS, compare
from cogrsi_lib.train.report import transfer_summary


def records(rows):
    """The stage's records: ``system`` is the model asked, ``source`` the set."""
    out = []
    for model, set_, stratum, item, story, gold, correct in rows:
        out.append({"system": model, "source": set_, "stratum": stratum, "item_id": item,
                    "story_id": story, "n_options": 2, "gold": gold, "correct": correct})
    return RECORDS.frame(out)


def test_paired_differences_pools_and_constant_label():
    rows = []
    for k in range(40):
        st = "first_order_1_tom" if k % 2 else "first_order_0_no_tom"
        # base always wrong; trained right on the odd items only, whose gold is always B
        gold = "B" if k % 2 else "A"
        rows.append(("base", "tomi", st, f"t{k}", f"s{k // 2}", gold, False))
        rows.append(("trained", "tomi", st, f"t{k}", f"s{k // 2}", gold, bool(k % 2)))
    for k in range(10):
        # R0, then R1 by partition: the trained model fails the adversarial items only
        st = "R0" if k % 2 == 0 else ("R1:adversarial" if k % 4 == 1 else "R1:true_belief")
        rows.append(("base", NESTED, st, f"n{k}", f"w{k}", "A", True))
        rows.append(("trained", NESTED, st, f"n{k}", f"w{k}", "A", st != "R1:adversarial"))
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
    assert row[(NESTED, "R1 (pooled)")]["n"] == 5 and (NESTED, "R2 (pooled)") not in row
    adversarial, true_belief = (row[(NESTED, f"R1-R4 {p} (pooled)")]
                                for p in ("adversarial", "true belief"))
    assert (adversarial["n"], adversarial["diff"], adversarial["high"]) == (3, -1, -1)
    assert (true_belief["n"], true_belief["diff"]) == (2, 0)
    assert row[(NESTED, "R0")]["diff"] == 0
    summary = transfer_summary(t).to_dicts()
    tomi = next(r for r in summary if r["set"] == "tomi")
    # 20 items, below the 30 a row needs: underpowered and never counted, however clear;
    # the pool of 40 carries the finding
    assert tom["underpowered"] and "n = 20 < 30" in tom["power_note"] and not tom["significant"]
    assert pooled["significant"] and not pooled["underpowered"] and pooled["p_bh"] < 0.05
    assert tomi["helps"] == "first_order (pooled)" and tomi["hurts"] == "-"
    assert tomi["underpowered"] == "2 of 2 strata"
    assert tomi["no_clear_change"] == "1 of 2 strata"  # the pool is not a stratum


def test_unpaired_items_are_not_compared():
    rows = [("base", "tomi", "x", "a", "s", "A", True), ("trained", "tomi", "x", "b", "s", "A",
                                                          True)]
    with pytest.raises(ValueError, match="answered by both"):
        compare(records(rows), n_resamples=50)


def test_a_pair_counts_only_when_both_versions_are_right():
    rows = []
    for k in range(12):
        pair, both_right = f"p{k}", k < 4
        # the trained model gets side 0 of every pair and side 1 of the first four pairs
        for side, gold in ((0, "A"), (1, "A" if k < 6 else "B")):
            item = f"{pair}/{side}"
            rows.append(("base", PAIRS, "v", item, pair, gold, side == 0))
            rows.append(("trained", PAIRS, "v", item, pair, gold, side == 0 or both_right))
    t = compare(records(rows), n_resamples=200)
    row = {(r["set"], r["stratum"]): r for r in t.to_dicts()}
    per_version = row[(PAIRS, "all")]
    assert per_version["n"] == 24 and per_version["trained"] == pytest.approx(16 / 24)
    pairs = row[(PAIRS, "both versions (per pair)")]
    assert pairs["n"] == 12 and pairs["base"] == 0 and pairs["trained"] == pytest.approx(4 / 12)
    assert pairs["chance"] == pytest.approx(0.25)  # two versions of two options each
    assert pairs["best_constant"] == pytest.approx(6 / 12)  # "A" for both only in p0..p5


def test_open_copies_keep_the_item_and_take_the_lettered_chance():
    from cogrsi_lib.reader.items import ReaderItem
    from cogrsi_lib.train.compare import open_items

    lettered = [ReaderItem(f"i{k}", "1 Ann put the key in the box.", "Where?",
                           ("box", "tray", "hall"), "A").with_meta(eval_set=s, stratum="R0")
                for k, s in enumerate(("tomi", "bigtom"))]
    opened = open_items(lettered, ["tomi"])
    assert len(opened) == 1 and opened[0].item_id == "i0" and opened[0].options is None
    assert opened[0].meta["eval_set"] == "tomi (open)" and opened[0].gold_key() == "box"
    rows = records([("base", "tomi (open)", "R0", "i0", "s", "box", False),
                    ("trained", "tomi (open)", "R0", "i0", "s", "box", True)])
    rows = rows.with_columns(pl.lit(len(opened[0].meta["candidates"])).alias("n_options"))
    row = compare(rows, n_resamples=50).row(0, named=True)
    assert row["chance"] == pytest.approx(1 / 3) and row["trained"] == 1


def test_nested_items_are_stratified_by_depth_and_partition():
    from cogrsi_lib.train.compare import nested_items

    items = nested_items(2, {"seed": 5, "n_agents": 3, "n_containers": 3, "min_events": 6,
                             "max_events": 10})
    strata = {it.meta["stratum"] for it in items}
    assert strata == {"R0"} | {f"R{d}:{p}" for d in range(1, 5)
                               for p in ("adversarial", "true_belief")}
    for it in items:
        assert it.meta["stratum"] in ("R0", f"R{it.meta['stratum'][1]}:{it.meta['partition']}")


def test_an_open_answer_counts_when_it_names_exactly_one_candidate():
    from cogrsi_lib.train.compare import named_candidate

    places = ["box", "hatbox", "red_drawer", "hall"]
    assert named_candidate("The key is in the box.", places) == "box"
    assert named_candidate("hatbox", places) == "hatbox"  # whole words: not "box"
    assert named_candidate("the red drawer", places) == "red_drawer"
    assert named_candidate("in the box, not the hatbox", places) is None
    assert named_candidate("bureaucratic", places) is None
    assert named_candidate(None, places) is None


def test_traced_strata_are_asked_to_think_first_and_scored_by_the_place_named():
    from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
    from cogrsi_lib.reader.items import ReaderItem
    from cogrsi_lib.train.compare import ask, traced_items

    lettered = [ReaderItem(f"i{k}", "1 Ann put the key in the box.", "Where?",
                           ("box", "tray"), "A").with_meta(eval_set=s, stratum=st)
                for k, (s, st) in enumerate((("tomi", "first_order_1_tom"), ("tomi", "memory"),
                                             (NESTED, "R1:adversarial"),
                                             (NESTED, "R2:true_belief")))]
    traced = traced_items(lettered, {"tomi": ["first_order"], NESTED: ["R0", "R1"]})
    assert [it.item_id for it in traced] == ["i0", "i2"]
    assert {it.meta["eval_set"] for it in traced} == {"tomi (traced)", f"{NESTED} (traced)"}

    def respond(job):
        text = prompt_text(job)
        if "Think step by step" in text:
            return '{"reasoning":"1 box seen","answer":"the box"}'
        return '{"answer":"A"}'

    rows = ask(ScriptedBackend(respond), [lettered[0], *traced], "base")
    RECORDS.check(rows)
    assert rows["parse_status"].to_list() == ["ok", "ok", "ok"]
    assert rows["correct"].all() and rows["source"].to_list()[1:] == ["tomi (traced)",
                                                                      f"{NESTED} (traced)"]
    replies = [json.loads(r) for r in rows["reply"]]
    assert replies[0] == {"direct": ['{"answer":"A"}']}
    assert replies[1]["traced"][0].startswith('{"reasoning"')
    prompts = [json.loads(p) for p in rows["prompt"]]
    assert "Think step by step" in prompts[1]["traced"][-1]["content"]
    assert "Think step by step" not in prompts[0]["direct"][-1]["content"]
    assert rows["calls"].to_list() == [1, 1, 1] and rows["system"].unique().to_list() == ["base"]


def test_nested_items_take_a_count_per_depth_from_one_generation():
    from cogrsi_lib.train.compare import nested_items

    settings = {"seed": 5, "n_agents": 3, "n_containers": 3, "min_events": 6, "max_events": 10}
    items = nested_items([1, 3, 0, 2, 1], settings)
    counts: dict[str, int] = {}
    for it in items:
        counts[it.meta["stratum"]] = counts.get(it.meta["stratum"], 0) + 1
    assert counts == {"R0": 1, "R1:adversarial": 3, "R1:true_belief": 3, "R3:adversarial": 2,
                      "R3:true_belief": 2, "R4:adversarial": 1, "R4:true_belief": 1}
    # each cell keeps the first items of the benchmark generated at the largest count
    whole = nested_items(3, settings)
    for stratum, n in counts.items():
        assert ([it.item_id for it in items if it.meta["stratum"] == stratum]
                == [it.item_id for it in whole if it.meta["stratum"] == stratum][:n])


@pytest.mark.parametrize("bad", [[1, 2, 3], [0, 0, 0, 0, 0]])
def test_a_wrong_count_per_depth_is_refused_before_training(bad):
    from cogrsi_lib import stage_params

    with pytest.raises(stage_params.StageParamsError, match="eval_n_per_depth"):
        stage_params.load("train", {"eval_n_per_depth": bad})
