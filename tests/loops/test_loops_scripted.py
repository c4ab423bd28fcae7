"""The model-free stand-in backend: the reader parses it, principles move its accuracy."""

from __future__ import annotations

from cogrsi_lib.loops.builder import Builder, Failure, FailureGroup
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.loops.library import RuleLibrary
from cogrsi_lib.loops.scripted import BANK, ScriptedWorld
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.reader import GroundedReader
from cogrsi_lib.reader.principles import format_rule_library

ITEMS = oracle_dev_items(60, seed=8)


def test_reader_records_parse_and_perception_is_the_oracles():
    world = ScriptedWorld(ITEMS)
    recs = GroundedReader(world.backend()).answer_batch(ITEMS[:20])
    assert all(r.status == "ok" and r.perception.status == "ok" for r in recs)
    it, rec = ITEMS[0], recs[0]
    assert [list(w) for w in rec.perception.witnesses] == it.meta["perceivers"]


def test_a_helpful_bank_rule_raises_accuracy_on_its_group():
    world = ScriptedWorld(ITEMS)
    scorer = Scorer(GroundedReader(world.backend()))
    fb = [it for it in ITEMS if it.meta["group"] == "location/first-order/false-belief"]
    assert len(fb) >= 20
    helpful = format_rule_library([(BANK[0].condition, BANK[0].rule)])
    harmful = format_rule_library([(BANK[3].condition, BANK[3].rule)])
    acc = {p: sum(scorer.correct(p, fb)) / len(fb) for p in ("", helpful, harmful)}
    assert acc[helpful] > acc[""] > acc[harmful]


def test_builder_replies_mix_accepted_and_rejected():
    world = ScriptedWorld(ITEMS, bad_reply_share=0.5)
    recs = GroundedReader(world.backend()).answer_batch(ITEMS[:8])
    groups = [FailureGroup(f"g{i}", (Failure.of(it, rec),), 1, (rec,))
              for i, (it, rec) in enumerate(zip(ITEMS[:8], recs, strict=True))]
    replies = Builder(world.backend(), seed=1).propose(RuleLibrary(), groups)
    assert {r.status for r in replies} == {"ok", "rejected"}
    assert world.calls["builder"] == 8
