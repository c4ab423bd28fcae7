"""Loaders and scorers of benchmarks with no obtainable sample, on synthetic fixtures.

The fixtures (tests/fixtures/bench, see its README) are invented content in each
benchmark's documented official format; they test parsing and the official rules, not data.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import fantom, mumatom
from cogrsi_lib.bench.report import constant_baselines, evaluate

from .conftest import perfect_reply


@pytest.fixture(scope="module")
def fantom_items(fixtures):
    return bench.load("fantom", fixtures / "fantom")


def test_fantom_flattens_sets_like_setup_fantom(fantom_items):
    assert len(fantom_items) == 28  # 13 + 8 + 7 questions in the three sets
    types = Counter(it.question_type for it in fantom_items)
    assert types["fact"] == 3
    assert types["tom:belief:inaccessible"] == types["tom:belief:inaccessible:multiple-choice"] == 3
    assert types["tom:answerability:binary"] == 6  # the no:long question is dropped
    assert {it.story_id for it in fantom_items} == {"fantom/0", "fantom/1"}
    assert {it.group_id for it in fantom_items} == {"0-0-0", "0-0-1", "1-0-0"}
    lst = next(it for it in fantom_items if it.id == "fantom/0-0-0/answerability-list")
    assert lst.gold_set == ("Sara", "Javier") and lst.wrong_set == ("Gianna",)
    assert lst.question.startswith("Target: Who discussed training their pets")


def test_fantom_multiple_choice_order_follows_seed_99(fantom_items):
    rng = random.Random(99)
    by_id = {it.id: it for it in fantom_items}
    mcs = [it for it in fantom_items if it.question_type.endswith(":multiple-choice")]
    assert len(mcs) == 4
    for it in mcs:  # one draw per belief question, in file order
        assert it.gold == ("b" if rng.choice([True, False]) else "a")
        free = by_id[it.id.removesuffix("-mc")]
        assert it.option_text(it.gold) == free.gold
        assert {text for _, text in it.options} == {free.gold, free.wrong_set[0]}


def test_fantom_column_oriented_file_reads_the_same(fixtures, fantom_items, tmp_path):
    import json

    sets = json.loads((fixtures / "fantom" / "fantom_v1.json").read_text(encoding="utf-8"))
    columns = {key: {str(k): s[key] for k, s in enumerate(sets)} for key in sets[0]}
    (tmp_path / "fantom_v1.json").write_text(json.dumps(columns), encoding="utf-8")
    assert fantom.load(tmp_path) == fantom_items


def test_fantom_full_context_keeps_no_long_and_marks_sets(fixtures):
    items = fantom.load(fixtures / "fantom", context="full")
    binary = [it for it in items if it.question_type == "tom:answerability:binary"]
    assert len(binary) == 7
    assert any(it.context.startswith("Gianna: Did you all sleep well?") for it in items)


def test_fantom_official_rules(fantom_items):
    judge = bench.get("fantom").judge
    by_id = {it.id: it for it in fantom_items}
    lst = by_id["fantom/0-0-0/answerability-list"]
    assert judge(lst, "Sara and Javier").correct
    assert not judge(lst, "Sara, Javier and Gianna").correct   # an unaware character named
    assert not judge(lst, "Sara").correct                      # an aware character left out
    binary = by_id["fantom/0-0-0/answerability-binary0"]      # Gianna: no
    assert judge(binary, "No, she was away.").correct
    assert not judge(binary, "Yes.").correct
    assert judge(binary, "Hmm.").malformed
    mc = by_id["fantom/0-0-0/belief0-mc"]
    other = "a" if mc.gold == "b" else "b"
    assert judge(mc, f"({mc.gold}) is right").correct
    assert not judge(mc, f"{other})").correct
    belief = by_id["fantom/0-0-0/belief0"]
    assert judge(belief, "Gianna does not know who discussed it; she was not in the "
                         "conversation.").correct
    assert not judge(belief, "Gianna believes that Javier and Sara discussed training their "
                             "pets.").correct
    fact = by_id["fantom/0-0-1/fact"]
    assert judge(fact, fact.gold).value == pytest.approx(1.0)
    assert 0 < judge(fact, "Javier trained Bruno.").value < 1


def test_fantom_all_star_needs_every_question_of_a_target_set(fantom_items):
    replies = {it.id: perfect_reply(it) for it in fantom_items}
    full = evaluate("fantom", fantom_items, replies)
    assert full.summary["score"] == 1.0 == full.summary["inaccessible:set:ALL*"]
    assert full.summary["accessible:set:ALL*"] == 1.0
    # one wrong binary answer in set 0-0-1 breaks that set only: All* = 1/2
    replies["fantom/0-0-1/answerability-binary1"] = "No."
    broken = evaluate("fantom", fantom_items, replies)
    assert broken.summary["score"] == 0.5
    assert broken.summary["inaccessible:answerability:binary"] == pytest.approx(4 / 5)
    assert broken.units.height == 2  # the two target sets
    assert sorted(broken.units["value"].to_list()) == [0.0, 1.0]


def test_fantom_constant_answers_are_reported(fantom_items):
    table = constant_baselines("fantom", fantom_items)
    best = {m: (c, v) for _, _, m, c, v in table.iter_rows()}
    assert best["score"][1] == 0.0  # no constant solves a whole target set
    assert best["accessible:answerability:binary"] == ("Yes", 1.0)


@pytest.fixture(scope="module")
def simpletom_items(fixtures):
    return bench.load("simpletom", fixtures / "simpletom")


def test_simpletom_question_sets_and_story_units(simpletom_items):
    assert Counter(it.question_type for it in simpletom_items) == {
        "mental-state": 3, "behavior": 3, "judgment": 3}
    assert len({it.story_id for it in simpletom_items}) == 3
    it = next(i for i in simpletom_items if i.id == "simpletom/gen1_sev1_aware")
    assert it.story_id == "simpletom/gen1_sev1" and it.options == (("A", "No"), ("B", "Yes"))


def test_simpletom_process_answer_rule():
    from cogrsi_lib.bench.simpletom import process_answer

    assert process_answer("Answer: (B)") == "B"
    assert process_answer("(A) or (B)") == "A"      # the first (X) in label order decides
    assert process_answer("(A and (B") is None     # two half marks: not an answer
    assert process_answer("B") == "B"
    assert process_answer("A or B") is None
    assert process_answer("no idea") is None


def test_simpletom_headline_is_behaviour_and_judgment_and_constant_no_maxes_mental_state(
        simpletom_items):
    replies = {it.id: perfect_reply(it) for it in simpletom_items}
    replies["simpletom/gen1_sev1_judge"] = "(A)"  # one judgment wrong
    ev = evaluate("simpletom", simpletom_items, replies)
    assert ev.summary["type:judgment"] == pytest.approx(2 / 3)
    assert ev.summary["score"] == pytest.approx((1 + 2 / 3) / 2)
    table = constant_baselines("simpletom", simpletom_items)
    best = {m: (c, v) for _, _, m, c, v in table.iter_rows()}
    # mental-state gold is always the option "No" (CogRSI Table 22 note)
    assert best["type:mental-state"] == ("No", 1.0)
    assert best["score"][1] < 1.0


def test_exploretom_groups_partitions_and_substring_rule(fixtures):
    items = bench.load("exploretom", fixtures / "exploretom")
    assert len(items) == 6
    assert len({it.story_id for it in items}) == 3  # structural groups
    assert Counter(it.extra["partition"] for it in items) == {"E1": 3, "E2": 3}
    assert {it.question_type for it in items} >= {"order1:container_location", "order-1:memory",
                                                  "order1:<knowledge>"}
    judge = bench.get("exploretom").judge
    q = items[0]
    assert judge(q, "Bob will look in the Red Box.").correct
    assert not judge(q, "the blue box").correct
    replies = {it.id: perfect_reply(it) for it in items}
    replies[items[0].id] = "blue box"  # one E1 question wrong
    ev = evaluate("exploretom", items, replies)
    assert ev.summary["partition:E1"] == pytest.approx(2 / 3)
    assert ev.summary["score"] == pytest.approx((2 / 3 + 1) / 2)


def test_exploretom_partition_of_story_types():
    from cogrsi_lib.bench.exploretom import partition

    assert partition("tomi") == partition("tomi+object-state") == "E1"
    assert partition("tomi+info-exchange") == partition("fantom-private") == "E2"
    assert partition("allbutfantom") == partition("all") == "E2"


def test_cogtom_assumed_format(fixtures):
    items = bench.load("cogtom", fixtures / "cogtom")
    assert len(items) == 4  # the Chinese copy is left out by default
    assert {it.question_type for it in items} == {"Unexpected Transfer", "Hidden Emotion"}
    listed = next(it for it in items if it.id == "cogtom/em-001")
    assert listed.labels == ("A", "B", "C", "D") and listed.gold == "B"
    assert next(it for it in items if it.id == "cogtom/em-002").gold == "B"  # "B." normalised
    # the two questions of one story share its unit
    fb = [it for it in items if it.id.startswith("cogtom/fb-")]
    assert len({it.story_id for it in fb}) == 1
    zh = bench.get("cogtom").load(fixtures / "cogtom", language="zh")
    assert [it.id for it in zh] == ["cogtom/fb-001-zh"]


def test_mmtom_qa_text_split_and_first_letter_rule(fixtures):
    items = bench.load("mmtom-qa", fixtures / "mmtom-qa")
    assert [it.question_type for it in items] == ["1.1", "1.3", "2.2"]
    assert len({it.story_id for it in items}) == 2  # episodes 6 and 23
    it = items[0]
    assert it.context.startswith("What's inside the apartment:")
    assert it.context.endswith("advances towards the fridge.")
    assert it.question.startswith("If Jennifer has been trying to get a plate")
    assert it.options == (("a", "Jennifer thinks that the plate is inside the fridge."),
                          ("b", "Jennifer thinks that the plate is not inside the fridge."))
    judge = bench.get("mmtom-qa").judge
    assert judge(it, "a. Because she walks to it").correct
    assert not judge(it, "The answer is a").correct  # first character only


def test_muma_tom_options_answers_and_bytes_description(fixtures):
    items = bench.load("muma-tom", fixtures / "muma-tom")
    assert len(items) == 4
    assert Counter(it.question_type for it in items) == {"belief": 2, "social_goal": 1,
                                                         "belief_of_goal": 1}
    assert all(it.gold == "B" and len(it.options) == 3 for it in items)
    # 4009 has no texts.json entry: its bytes-literal description is decoded
    it = next(i for i in items if i.id == "muma-tom/4009/1")
    assert it.context.startswith("Mary walked to the fridge")
    assert mumatom.description_text("b'It\\'s here.'") == "It's here."


@pytest.mark.parametrize("name", ["fantom", "simpletom", "exploretom", "cogtom", "mmtom-qa",
                                  "muma-tom"])
def test_gold_replies_score_100_on_fixtures(fixtures, name):
    items = bench.load(name, fixtures / name)
    ev = evaluate(name, items, {it.id: perfect_reply(it) for it in items})
    assert ev.summary["score"] == pytest.approx(1.0)
    assert not ev.records["malformed"].any()
