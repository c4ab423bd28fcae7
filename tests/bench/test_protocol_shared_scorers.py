"""Benchmarks whose two protocols share one scorer: that scorer against a transcription of
the released rule, on replies with formatting variants.

* SimpleToM: yulinggu-cs/SimpleToM at 0f054a75c83dbab45276696503a0324f881634b3,
  ``inference/utils.py`` ``process_answer`` (text part).
* Percept-ToMi: chanijung/PercepToM at 39e502a317322007d67659b0ca03573aedb0b013,
  ``eval_percept_tomi.py`` (``row['answer'] in pred``).
* ExploreToM: facebookresearch/ExploreToM at 6a9372870ddc1c7b9b9ce1f3ee1641dbbdb56760,
  ``utils.py`` ``evaluate_question`` / ``verify_answer_to_question`` (string answers).
* MMToM-QA: chuanyangjin/MMToM-QA at cba94f39369828bf6f6173d3b8fd36f128fa0926,
  ``BIP-ALM/testing_gpt.py`` (first character after stripping).
"""

from __future__ import annotations

import re

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench.schema import Item


def rel_simpletom(text: str) -> str | None:
    text = re.sub("(?ims)answer:?", "", text).strip()
    index = None
    for idx, choice in enumerate(["(A)", "(B)", "(C)", "(D)"]):
        if choice in text:
            index = idx
            break
    for marks in (["(A", "(B", "(C", "(D"], ["A", "B", "C", "D"]):
        if index is None:
            for idx, choice in enumerate(marks):
                if choice in text:
                    index = idx if index is None else -1
    return "ABCD"[index] if index is not None and index >= 0 else None


def rel_exploretom(answer: str, response: str) -> bool:
    return answer in response.lower()


def rel_mmtom(response: str, answer: str) -> bool:
    return response.strip("\n").strip(" ").lower()[0] == answer


REPLIES = ["(A)", "(B) because", "Answer: (B)", "answer:B", "(A and (B", "A or B", "B", "no idea",
           "Bob took it (A)", "David thinks so", "  (b)", "\n (A)", "ANSWER: A", "(C)", ""]


def _mc(name: str, gold: str, labels=("A", "B")) -> Item:
    return Item(benchmark=name, id=f"{name}/x", story_id="s", context="c", question="q?",
                question_type="behavior", gold=gold,
                options=tuple((lab, f"option {lab}") for lab in labels))


@pytest.mark.parametrize("reply", REPLIES)
@pytest.mark.parametrize("protocol", ["official", "uniform"])
def test_simpletom_scorer_is_process_answer(reply, protocol):
    proto = bench.get("simpletom").protocol(protocol)
    for gold in ("A", "B"):
        j = proto.score(_mc("simpletom", gold), reply)
        assert j.parsed == rel_simpletom(reply)
        assert j.correct == (rel_simpletom(reply) == gold)


@pytest.mark.parametrize("reply", ["in the basket", "Basket", "the green_basket.", "box", "",
                                   "Anne thinks it is in the Basket", "basket or box"])
def test_exploretom_scorer_is_the_release_rule_on_lower_case_answers(reply):
    item = Item(benchmark="exploretom", id="e/1", story_id="s", context="c", question="q?",
                question_type="t", gold="basket", extra={"partition": "E1"})
    for protocol in ("official", "uniform"):
        assert bench.get("exploretom").protocol(protocol).score(item, reply).correct == \
            rel_exploretom("basket", reply)


def test_exploretom_capitalised_answer_is_the_listed_deviation():
    """The release lower-cases only the reply, so a capitalised expected answer never
    matches; both sides are lower-cased here (listed in the deviations)."""
    item = Item(benchmark="exploretom", id="e/2", story_id="s", context="c", question="q?",
                question_type="t", gold="Anne", extra={"partition": "E1"})
    assert not rel_exploretom("Anne", "Anne knows")
    assert bench.get("exploretom").protocol("official").score(item, "Anne knows").correct
    assert any(d.aspect == "parsing"
               for d in bench.get("exploretom").protocol("official").deviations)


@pytest.mark.parametrize("reply", ["a", "b", "A) the first", " b", "\nA", "b.\n", "(a)",
                                   "answer a", "\tb"])
def test_mmtom_scorer_is_the_first_character(reply):
    item = _mc("mmtom-qa", "a", labels=("a", "b"))
    for protocol in ("official", "uniform"):
        got = bench.get("mmtom-qa").protocol(protocol).score(item, reply).correct
        assert got == rel_mmtom(reply, "a"), reply


@pytest.mark.parametrize("reply", ["The ball is in the basket.", "basket", "Basket", "",
                                   "in the green_basket", "the box, not the basket"])
def test_percept_tomi_scorer_is_a_substring_match(reply):
    item = Item(benchmark="percept-tomi", id="p/1", story_id="s", context="c", question="q?",
                question_type="first_order", gold="basket")
    for protocol in ("official", "uniform"):
        got = bench.get("percept-tomi").protocol(protocol).score(item, reply).correct
        assert got == ("basket" in reply)
