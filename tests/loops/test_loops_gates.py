"""The counterfactual gate and pairs as data, on real gate pairs (CogRSI §4.2, §5.3, App. C)."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.loops.arms import builtin_arms
from cogrsi_lib.loops.builder import Builder, FailureGroup
from cogrsi_lib.loops.devdata import pair_items
from cogrsi_lib.loops.engine import Loop, LoopSettings, choose_groups
from cogrsi_lib.loops.gates import CandidateView, CounterfactualGate
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.pairs.records import build_splits

from .helpers import TableSystem, add_reply, pool

SPLITS = build_splits(gate_seed=11, eval_seed=23, n_gate_narrative=8, n_gate_dialogue=4,
                      n_eval_narrative=2, n_eval_dialogue=2)
GATE = SPLITS["gate"]
PAIR_IDS = sorted(GATE["pair_id"].unique())


def correct(principle: str, item) -> bool:
    if item.meta.get("source") == "pairs":
        k = next((int(t[4:]) for t in principle.split() if t.startswith("lose")), 0)
        if item.meta["side"] == "b" and item.meta["pair_id"] in PAIR_IDS[:k]:
            return False
        return "wrong-a" not in principle or item.meta["side"] != "a"
    return "dev-right" in principle


def view(p: str) -> CandidateView:
    return CandidateView(p, p, "add")


def test_pair_items_keep_ids_forms_and_gold():
    items = pair_items(GATE)
    assert len(items) == 2 * len(PAIR_IDS) == GATE.height
    conv = [it for it in items if it.kind == "conversation"]
    assert conv and all(it.character for it in conv)
    first = items[0]
    assert first.item_id == f"{first.meta['pair_id']}/{first.meta['side']}"
    assert first.option_text(first.gold_key()) == GATE["gold"][0]


def test_the_gate_allows_losses_up_to_the_tolerance():
    system = TableSystem(correct)
    gate = CounterfactualGate(Scorer(system), GATE, tolerance=2)
    n = len(PAIR_IDS)
    assert gate.valid_pairs("") == n
    ok = gate.check(view("lose2"), "")
    assert ok.passed and ok.gain == pytest.approx(-200 / n)
    assert ok.record == {"incumbent_valid": n, "candidate_valid": n - 2, "n_pairs": n,
                         "tolerance": 2}
    bad = gate.check(view("lose3"), "")
    assert not bad.passed and bad.gain == pytest.approx(-300 / n)
    back = gate.check(view(""), "lose3")
    assert back.passed and back.gain == pytest.approx(300 / n)
    assert not CounterfactualGate(Scorer(system), GATE, tolerance=0).check(view("lose1"),
                                                                          "").passed
    # each principle's pairs are answered once
    answered = [p for p, _ in system.calls]
    assert answered.count("lose3") == 2 * n and answered.count("") == 4 * n  # two gates


def test_a_version_wrong_on_either_side_invalidates_the_pair():
    gate = CounterfactualGate(Scorer(TableSystem(correct)), GATE)
    assert gate.valid_pairs("wrong-a") == 0
    assert gate.valid_pairs("wrong-a lose5") == 0


def test_choose_groups_splits_the_builder_calls():
    def g(k: str) -> FailureGroup:
        return FailureGroup(k, (), 1)

    dev = [g("d1"), g("d2"), g("d3"), g("d4")]
    prs = [g("p1"), g("p2"), g("p3")]
    assert [x.key for x in choose_groups(dev, prs, 4, 2)] == ["d1", "d2", "p1", "p2"]
    assert [x.key for x in choose_groups(dev[:1], prs, 4, 2)] == ["d1", "p1", "p2", "p3"]
    assert [x.key for x in choose_groups(dev, prs[:1], 4, 2)] == ["d1", "d2", "d3", "p1"]
    assert [x.key for x in choose_groups(dev, prs, 4, 0)] == ["d1", "d2", "d3", "d4"]


def test_pairs_as_data_shows_both_versions_of_failed_pairs(tmp_path):
    seen: list[str] = []

    def respond(job):
        seen.append(prompt_text(job))
        return add_reply("a story has two versions", "compare them.")

    system = TableSystem(lambda p, it: correct(p or "wrong-a", it))  # incumbent fails side a
    arm = builtin_arms()["pairs_as_data"]
    loop = Loop(arm, LoopSettings(rounds=1, discovery_size=12, trial_size=10), seed=1,
                scorer=Scorer(system), builder=Builder(ScriptedBackend(respond)),
                pool=pool(n_stories=80), run_dir=tmp_path, pair_records=GATE)
    res = loop.run()
    replies = res.table("replies")
    assert replies.height == 4
    assert replies.filter(pl.col("group").str.starts_with("pairs/")).height == 2
    assert res.table("rounds")["n_pair_failures"].to_list() == [len(PAIR_IDS)]
    pair_prompts = [t for t in seen if "counterfactual pair" in t]
    assert len(pair_prompts) == 2
    assert all("version a" in t and "version b" in t for t in pair_prompts)
    with pytest.raises(ValueError, match="pair_records"):
        Loop(arm, LoopSettings(), seed=1, scorer=Scorer(system),
             builder=Builder(ScriptedBackend(respond)), pool=pool(), run_dir=tmp_path / "x")
