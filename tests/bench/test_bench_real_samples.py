"""Loaders on the real samples in data/benchmarks, against the counts in each SOURCE.md."""

from __future__ import annotations

import json
from collections import Counter

import polars as pl
import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import bigtom, hitom, opentom, percept, tomi
from cogrsi_lib.bench.schema import ITEM_SCHEMA, items_to_frame
from cogrsi_lib.bench.tombench import TASKS

from .conftest import perfect_reply, real


def test_tomi_test_split_matches_source_counts():
    items = real("tomi")
    assert len(items) == 5994
    assert len({it.story_id for it in items}) == 999
    assert Counter(it.question_type for it in items) == {
        "memory": 999, "reality": 999, "first_order_0_no_tom": 999, "first_order_1_no_tom": 595,
        "first_order_1_tom": 404, "second_order_0_no_tom": 724, "second_order_1_no_tom": 724,
        "second_order_0_tom": 275, "second_order_1_tom": 275,
    }
    assert Counter(it.extra["story_type"] for it in items) == {
        "true_belief": 1998, "false_belief": 1998, "second_order_false_belief": 1998}
    first = items[0]
    assert first.question == "Where was the grapefruit at the beginning?"
    assert first.gold == "green_bucket"
    assert first.context.splitlines()[0] == "1 Aria entered the front_yard."
    assert {"green_bucket", "blue_container", "front_yard"} <= set(first.extra["locations"])


@pytest.mark.parametrize("split", ["train", "val"])
def test_tomi_prefix_splits_have_1000_examples(split):
    items = tomi.load_split(bench.get("tomi").root(), split)
    assert len(items) == 1000


def test_bigtom_expands_200_templates_into_5000_conditions():
    items = real("bigtom")
    assert len(items) == 5000
    assert len({it.story_id for it in items}) == 200
    per_type = Counter(it.question_type for it in items)
    for variable in bigtom.VARIABLES:
        for condition in bigtom.CONDITIONS:
            assert per_type[f"{variable}:{condition}"] == 400  # 200 templates x 2 init beliefs
    assert per_type["percept_to_belief:true_belief"] == 200
    assert all(len(it.options) == 2 and it.gold in ("a", "b") for it in items)
    # options are shuffled: the true answer is not always first
    assert 0.4 < sum(it.gold == "a" for it in items) / len(items) < 0.6


def test_bigtom_condition_text_follows_generate_conditions():
    templates = bigtom.read_templates(bench.get("bigtom").root() / bigtom.CSV_PATH)
    t = templates[0]
    assert t["Story"].startswith("Noor is working as a barista")
    parts = t["Story"].split(".")
    items = {it.id: it for it in real("bigtom")}
    fb = items["bigtom/000/0_forward_belief_false_belief"]
    # generate_conditions.py: parts 0,1,2,4 then the not-aware percept; wrong and true swap
    assert fb.context == f"{parts[0]}.{parts[1]}.{parts[2]}.{parts[4]}. {t['Not Aware of event']}"
    assert fb.option_text(fb.gold) == t["Belief Answer not Aware"]
    tc = items["bigtom/000/1_forward_action_true_control"]
    control = ".".join(parts[:4] + [" " + t["Random Event"]])
    assert tc.context == f"{control} {t['Aware of random event']}"
    assert tc.option_text(tc.gold) == t["Action Answer not Aware"]
    bb = items["bigtom/000/1_backward_belief_true_belief"]
    assert bb.context.endswith(t["Action aware"])
    assert bb.option_text(bb.gold) == t["Belief Answer Aware"]


def test_bigtom_u_has_800_pairs_from_200_scenarios():
    items = real("bigtom")
    pairs = bigtom.bigtom_u_pairs(items)
    assert len(pairs) == 800
    assert Counter(kind for _, kind, _, _ in pairs) == {"flip": 400, "same": 400}
    assert len({pid.split("/")[1] for pid, _, _, _ in pairs}) == 200
    by_id = {it.id: it for it in items}
    for _, _, v1, v2 in pairs:
        assert by_id[v1].extra["init_belief"] == by_id[v2].extra["init_belief"] == 1
        assert by_id[v1].story_id == by_id[v2].story_id


def test_hitom_keeps_one_prompting_copy_of_600_questions():
    items = real("hi-tom")
    assert len(items) == 600
    assert len({it.story_id for it in items}) == 120
    assert Counter(it.question_type for it in items) == {f"order_{k}": 120 for k in range(5)}
    assert Counter(it.extra["deception"] for it in items) == {True: 300, False: 300}
    assert all(len(it.options) == 15 and it.option_text(it.gold) == it.extra["answer_text"]
               for it in items)
    assert all(not it.context.startswith("Read the following") for it in items)
    both = hitom.load(bench.get("hi-tom").root(), prompting_type="all")
    assert len(both) == 1200
    # a CoTP record and its VP twin share the story unit
    assert {it.story_id for it in both} == {it.story_id for it in items}


def test_hitom_choices_string_is_split_into_15_options():
    options = hitom.parse_choices("A. blue_drawer, B. green_crate, C. red_treasure_chest")
    assert options == (("A", "blue_drawer"), ("B", "green_crate"), ("C", "red_treasure_chest"))


def test_opentom_genre_files_hold_13708_questions_over_596_stories():
    items = real("opentom")
    assert len(items) == 13708
    assert len({it.story_id for it in items}) == 596
    by_genre = Counter(it.extra["genre"] for it in items)
    assert by_genre == {"location-coarse-fo": 1192, "location-coarse-so": 1192,
                        "location-fine-fo": 2384, "location-fine-so": 1192,
                        "multihop-fo": 3576, "multihop-so": 3576, "attitude": 596}
    ex = next(it for it in items if it.id == "opentom/75682867/location_cg_fo/0")
    assert ex.question.startswith("From Diego's perspective, is the scarf in its initial")
    assert ex.gold == "No"
    assert ex.extra["original_place"] == "basket"


def test_opentom_long_narratives_cover_100_stories():
    from cogrsi_lib.bench import opentom

    items = opentom.load(bench.get("opentom").root(), long=True)
    assert len({it.story_id for it in items}) == 100


def test_tombench_2860_items_with_nan_options_removed_and_ids_disambiguated():
    items = real("tombench")
    assert len(items) == 2860
    assert len({it.id for it in items}) == 2860  # INDEX repeats; ids do not
    per_task = Counter(it.extra["task"] for it in items)
    assert set(per_task) == set(TASKS)
    assert per_task["False Belief Task"] == 600 and per_task["Faux-pas Recognition Test"] == 560
    two_way = Counter(it.extra["task"] for it in items if len(it.options) == 2)
    assert two_way == {"Faux-pas Recognition Test": 280, "Strange Story Task": 203}
    assert all(it.gold in it.labels for it in items)
    path = bench.get("tombench").root() / "data" / "Knowledge-Attention Links.jsonl"
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    odd = [k for k, rec in enumerate(raw, start=1) if rec["答案\nANSWER"] == "A. "]
    assert len(odd) == 1
    item = next(it for it in items if it.source == f"{path.name}:line {odd[0]}")
    assert item.gold == "A"  # the release's "A. "
    zh = bench.get("tombench").load(bench.get("tombench").root(), language="zh")
    assert Counter(it.extra["task"] for it in zh if len(it.options) == 2) == {
        "Faux-pas Recognition Test": 280, "Strange Story Task": 204}


def test_mmtom_qa_whole_release_has_600_text_questions():
    items = real("mmtom-qa")
    assert len(items) == 600
    assert Counter(it.question_type for it in items) == {
        "1.1": 100, "1.2": 100, "1.3": 100, "2.1": 75, "2.2": 75, "2.3": 75, "2.4": 75}
    assert Counter(it.gold for it in items) == {"a": 292, "b": 308}
    assert all(len(it.options) == 2 and it.context.startswith("What's inside the apartment")
               for it in items)


def test_muma_tom_whole_release_has_900_questions_with_corrected_labels():
    items = real("muma-tom")
    assert len(items) == 900
    assert len({it.story_id for it in items}) == 225
    assert Counter(it.question_type for it in items) == {
        "belief": 300, "social_goal": 300, "belief_of_goal": 300}
    assert Counter(it.gold for it in items) == {"A": 292, "B": 311, "C": 297}
    assert all(len(it.options) == 3 for it in items)


def test_items_frame_has_the_fixed_schema():
    frame = items_to_frame(real("hi-tom")[:5])
    assert dict(frame.schema) == ITEM_SCHEMA
    assert frame["option_labels"].list.len().to_list() == [15] * 5


def _fine_location_uncreditable(item) -> bool:
    if not item.question_type.startswith("location-fine"):
        return False
    gold, pred = opentom.fine_location_labels(item.gold, item.gold, item.extra["original_place"],
                                              item.extra["move_to_place"])
    return gold == "?" or pred != gold


@pytest.mark.parametrize("name", ["tomi", "bigtom", "hi-tom", "opentom", "tombench", "mmtom-qa",
                                  "muma-tom"])
def test_gold_replies_score_100_and_ids_unique(name):
    items = real(name)
    b = bench.get(name)
    judgements = [b.judge(it, perfect_reply(it)) for it in items]
    wrong = {it.id for it, j in zip(items, judgements, strict=True) if not j.correct}
    # OpenToM's own fine-location rule cannot credit a few gold answers: the answer is
    # neither the recorded original nor final place (a typo in the release), or both places
    # overlap the answer equally ("drawer" / "another drawer")
    expected = {it.id for it in items if _fine_location_uncreditable(it)}
    assert wrong == expected, f"{len(wrong)} gold replies judged wrong, e.g. {sorted(wrong)[:3]}"
    assert len(expected) <= 12
    score = b.summarize(items, judgements)["score"]
    assert score == pytest.approx(1 - len(expected) / len(items))


def test_percept_tomi_shared_sample(shared_benchmarks):
    items = bench.load("percept-tomi", shared_benchmarks / "percept-tomi")
    assert len(items) == 600
    assert Counter(it.question_type for it in items) == {
        f"{o}_order_{k}_{t}": 75 for o in ("first", "second") for k in (0, 1)
        for t in ("tom", "no_tom")}
    for it in items:
        assert it.gold in it.extra["candidates"]
        assert len(it.extra["perceivers"]) == len(it.context.splitlines())
    first = next(it for it in items if it.id == "percept-tomi/1596")
    assert first.question == "Where will Lucas look for the boots?"
    assert first.gold == "cupboard"
    assert first.extra["perceivers"][2] == ["Lucas", "Ella"]
    assert bench.get("percept-tomi").judge(first, "He will look in the cupboard.").correct


def test_percept_fantom_perceivers_and_questions(shared_benchmarks):
    root = shared_benchmarks / "percept-fantom"
    parts = percept.load_fantom_perceivers(root)
    assert len(parts) == 311
    first_turn = parts["3-0"][0]
    assert first_turn[0].startswith("Richard: I'm sorry, I have to cut the conversation short.")
    assert first_turn[1] == ("Richard", "Kobe", "Elena")
    questions = percept.load_fantom_questions(root)
    assert questions.height == 3048
    counts = dict(questions.group_by("question_type").len().iter_rows())
    assert counts["tom:answerability:binary"] == 867
    assert counts["tom:belief:inaccessible:multiple-choice"] == 254
    assert counts["fact"] == 200
    assert questions.filter(pl.col("set_id") == "0-0-0")["part_id"].unique().to_list() == ["0-0"]


def test_shared_samples_load_only_when_named(shared_benchmarks, monkeypatch):
    """With no selection, what loads depends on the project's data alone: a shared sample
    found beside the project (not shipped) is left out unless named."""
    from cogrsi_lib.bench.report import load_available

    monkeypatch.setenv(bench.registry.SHARED_ENV, str(shared_benchmarks))
    assert bench.available("percept-tomi")
    default = load_available()
    assert "percept-tomi" not in default and "percept-fantom" not in default
    assert {"tomi", "hi-tom", "bigtom", "tombench"} <= set(default)
    named = load_available(["percept-tomi", "tomi"])
    assert set(named) == {"percept-tomi", "tomi"} and named["percept-tomi"]
