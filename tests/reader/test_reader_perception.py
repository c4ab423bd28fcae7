"""Items, the perception call's prompt and strict parser, views and principles."""

from __future__ import annotations

import pytest

from cogrsi_lib.reader import (
    EXPERT_PRINCIPLE,
    ReaderItem,
    Rule,
    format_rule_library,
    parse_rule_library,
    resolve_principle,
    split_context,
)
from cogrsi_lib.reader.items import answer_key
from cogrsi_lib.reader.perception import parse_perception, perception_request
from cogrsi_lib.reader.views import annotated_view, character_view, filtered_view, plain_view

from .helpers import CONV_PERCEPTION, CONVERSATION, PERCEPTION_OK, STORY, conversation, narrative


def test_segments_drop_tomi_numbers_and_split_prose() -> None:
    assert split_context(STORY)[0] == "Aria entered the front_yard."
    assert len(split_context(STORY)) == 5
    assert split_context("Ann is in the den. Bob enters! Is the cat there? Yes.") == (
        "Ann is in the den.",
        "Bob enters!",
        "Is the cat there?",
        "Yes.",
    )
    assert narrative(segments=("a", "b")).lines() == ("a", "b")


def test_gold_keys_and_labels() -> None:
    assert narrative().gold_key() == "A"
    assert narrative(gold="blue_container").gold_key() == "B"
    assert narrative(options=None, gold="the green_bucket").gold_key() == "green bucket"
    item = narrative(options=("yes", "no"), labels=("a", "b"), gold="b")
    assert item.gold_key() == "b" and item.option_text("b") == "no"
    with pytest.raises(ValueError):
        answer_key("purple", ["red", "green"])
    with pytest.raises(ValueError):
        ReaderItem("x", "c", "q", options=("one",))
    with pytest.raises(ValueError):
        ReaderItem("x", "c", "q", options=("a", "b"), labels=("A", "a"))


def test_perception_request_is_indexed_greedy_and_budgeted() -> None:
    r = perception_request(narrative(), max_tokens=1024, per_line_tokens=12)
    text = r.messages[0].content
    assert "1. Aria entered the front_yard.\n2. Aiden entered the front_yard." in text
    assert "<number>: <names separated by commas>" in text
    assert "actor of an action always perceives" in text
    assert r.params.temperature == 0.0 and r.params.max_tokens == 12 * 5 + 24
    assert perception_request(narrative(), max_tokens=30).params.max_tokens == 30
    conv = perception_request(conversation()).messages[0].content
    assert "numbered utterance" in conv and "Conversation:" in conv


def test_perception_parser_accepts_variants_of_the_indexed_format() -> None:
    lines = split_context(STORY)
    r = parse_perception(
        "Here you go:\n[1] aria\n2) Aria and Aiden\n3. Aria; Aiden\n4 - Aria, Aiden\n5: none",
        lines,
        STORY,
    )
    assert r.status == "ok"
    assert r.perception.witnesses == (
        ("Aria",),
        ("Aria", "Aiden"),
        ("Aria", "Aiden"),
        ("Aria", "Aiden"),
        (),
    )
    assert r.perception.names() == ("Aria", "Aiden")
    assert r.perception.perceived_by("aiden") == [1, 2, 3]
    assert r.perception.has_asymmetry()


@pytest.mark.parametrize(
    "reply,reason",
    [
        ("1: Aria\n2: Aria", "missing"),
        ("1: Aria\n2: Aria\n3: Aria\n4: Aria\n5: The whole class of fifth graders", "not a name"),
        ("1: Aria\n2: Aria\n3: 42\n4: Aria\n5: Aria", "not a name"),
    ],
)
def test_perception_parser_rejects(reply, reason) -> None:
    r = parse_perception(reply, split_context(STORY), STORY)
    assert r.status == "malformed" and reason in r.reason and r.perception is None


def test_views() -> None:
    p = parse_perception(PERCEPTION_OK, split_context(STORY), STORY).perception
    ann = annotated_view(narrative(), p)
    assert ann.splitlines()[0] == "Story (each line shows who witnessed it):"
    assert ann.splitlines()[1] == "1. Aria entered the front_yard. [witnessed by: Aria]"
    assert plain_view(narrative()) == "Story:\n" + STORY
    f = filtered_view(narrative(), p, ["Aiden"])
    kept = "Aiden entered the front_yard. The grapefruit is in the green_bucket."
    assert f.endswith(f"{kept} Aiden exited the front_yard.")
    cp = parse_perception(CONV_PERCEPTION, split_context(CONVERSATION), CONVERSATION).perception
    cv = character_view(conversation(), cp, "Kobe")
    assert cv.count("[Kobe heard this]") == 3 and cv.count("[Kobe did not hear this]") == 2
    assert "Lina: No, I did not." not in character_view(conversation(), cp, "Kobe", filtered=True)
    with pytest.raises(ValueError):
        annotated_view(narrative(segments=("only one",)), p)


def test_principles() -> None:
    assert resolve_principle("expert") == EXPERT_PRINCIPLE
    assert resolve_principle(None) == "" and resolve_principle("none") == ""
    lib = format_rule_library([Rule("When A sleeps", "A misses the move"), ("B peeks", "B knows")])
    assert lib == "(1) When A sleeps: A misses the move\n(2) When B peeks: B knows"
    assert parse_rule_library(lib) == [
        Rule("A sleeps", "A misses the move"),
        Rule("B peeks", "B knows"),
    ]
    with pytest.raises(ValueError):
        parse_rule_library("(2) When x: y")


def test_bench_items_plug_in_with_their_native_labels() -> None:
    from cogrsi_lib.bench.schema import Item
    from cogrsi_lib.llm.parsing import parse_answer
    from cogrsi_lib.reader.items import from_bench_item

    b = Item(
        benchmark="bigtom",
        id="b1",
        story_id="s9",
        context="Noor fills the pitcher with oat milk. Noor leaves. Her friend swaps the milk.",
        question="What does Noor believe?",
        question_type="belief",
        gold="b",
        options=(("a", "almond milk"), ("b", "oat milk")),
    )
    r = from_bench_item(b)
    assert (r.item_id, r.story, r.kind, r.labels, r.gold_key()) == (
        "b1",
        "s9",
        "narrative",
        ("a", "b"),
        "b",
    )
    assert len(r.lines()) == 3
    assert parse_answer("Answer: B", r.options, r.labels).value == "b"
    fantom = Item("fantom", "f1", "c1", "A: hi\nB: hello", "Q?", "tom:belief", "x")
    assert (
        from_bench_item(fantom).kind == "conversation" and from_bench_item(fantom).options is None
    )
