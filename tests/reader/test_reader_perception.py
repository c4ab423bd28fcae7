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
from cogrsi_lib.reader.perception import (
    parse_perception,
    perception_budget,
    perception_format,
    perception_request,
)
from cogrsi_lib.reader.views import annotated_view, character_view, filtered_view, plain_view

from .helpers import (
    CONV_PERCEPTION_JSON,
    PERCEPTION_OK_JSON,
    STORY,
    conversation,
    narrative,
)


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


def test_with_meta_merges_into_a_copy() -> None:
    item = narrative(options=("yes", "no"), labels=("a", "b"), gold="b").with_meta(src="x")
    tagged = item.with_meta(src="y", group="g")
    assert tagged.meta == {**item.meta, "src": "y", "group": "g"} and item.meta["src"] == "x"
    assert (tagged.labels, tagged.gold_key(), tagged.context) == (("a", "b"), "b", item.context)


def test_perception_request_is_indexed_greedy_budgeted_and_declares_its_format() -> None:
    r = perception_request(narrative(), max_tokens=1024)
    text = r.messages[0].content
    assert "1. Aria entered the front_yard.\n2. Aiden entered the front_yard." in text
    assert "Characters: Aria, Aiden." in text and '{"1": [...], "2": [...], ...}' in text
    assert "actor of an action always perceives" in text
    assert r.params.temperature == 0.0 and r.params.max_tokens == perception_budget(narrative())
    assert perception_request(narrative(), max_tokens=30).params.max_tokens == 30
    schema = r.reply.schema()
    assert r.reply.family == "reader.perception" and r.structured
    assert list(schema["properties"]) == ["1", "2", "3", "4", "5"]
    assert schema["properties"]["3"]["items"]["enum"] == ["Aria", "Aiden"]
    assert not perception_request(narrative(), structured=False).constraint
    conv = perception_request(conversation()).messages[0].content
    assert "numbered utterance" in conv and "Conversation:" in conv
    assert "Characters: Kobe, Spain, Richard, Lina." in conv  # candidates, not all characters


def test_perception_parser_reads_the_indexed_json() -> None:
    r = parse_perception(
        '```json\n{"1":["Aria"],"2":["Aria","Aiden"],"3":["Aiden","Aiden"],'
        '"4":["Aria","Aiden"],"5":[]}\n```', narrative())
    assert r.status == "ok"
    assert r.perception.witnesses == (
        ("Aria",),
        ("Aria", "Aiden"),
        ("Aiden",),
        ("Aria", "Aiden"),
        (),
    )
    assert r.perception.names() == ("Aria", "Aiden")
    assert r.perception.perceived_by("aiden") == [1, 2, 3]
    assert r.perception.perceived_by("aria") == [0, 1, 3]
    assert r.perception.has_asymmetry()


def test_perception_without_known_names_checks_them_against_the_context() -> None:
    item = narrative(context="1 the cook entered.\n2 the maid left.")
    r = perception_request(item)
    assert "enum" not in r.reply.schema()["properties"]["1"]["items"]
    ok = parse_perception('{"1":["cook"],"2":["the maid"]}', item)
    assert ok.status == "ok" and ok.perception.witnesses == (("cook",), ("the maid",))
    bad = parse_perception('{"1":["cook"],"2":["butler"]}', item)
    assert bad.status == "malformed" and "not in the context" in bad.reason


@pytest.mark.parametrize(
    "reply,reason",
    [
        ('{"1":["Aria"],"2":["Aria"]}', "3: field required"),
        ('{"1":["Aria"],"2":[],"3":[],"4":[],"5":["The whole class of fifth graders"]}',
         "input should be"),
        ('{"1":["Aria"],"2":[],"3":[42],"4":[],"5":[]}', "input should be"),
        ('{"1":["Aria"],"2":[],"3":[],"4":[],"5":[],"6":[]}', "extra inputs"),
        ('{"1":["Aria"],"1":[],"2":[],"3":[],"4":[],"5":[]}', "duplicate key"),
        ("1: Aria\n2: Aria", "not one json value"),
    ],
)
def test_perception_parser_rejects(reply, reason) -> None:
    r = parse_perception(reply, narrative())
    assert r.status == "malformed" and reason in r.reason.lower() and r.perception is None


def test_views() -> None:
    p = parse_perception(PERCEPTION_OK_JSON, narrative()).perception
    ann = annotated_view(narrative(), p)
    assert ann.splitlines()[0] == "Story (each line shows who witnessed it):"
    assert ann.splitlines()[1] == "1. Aria entered the front_yard. [witnessed by: Aria]"
    assert plain_view(narrative()) == "Story:\n" + STORY
    f = filtered_view(narrative(), p, ["Aiden"])
    kept = "Aiden entered the front_yard. The grapefruit is in the green_bucket."
    assert f.endswith(f"{kept} Aiden exited the front_yard.")
    cp = parse_perception(CONV_PERCEPTION_JSON, conversation()).perception
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
    from cogrsi_lib.reader.items import from_bench_item
    from cogrsi_lib.reader.prompts import THINK_NONE, answer_format, read_answer

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
    fmt = answer_format(r, THINK_NONE, 16)  # the native labels are the answer's values
    assert fmt.schema()["properties"]["answer"]["enum"] == ["a", "b"]
    assert read_answer(r, fmt, '{"answer": "b"}').value == "b"
    assert read_answer(r, fmt, '{"answer": "B"}').status == "unparsed"
    fantom = Item("fantom", "f1", "c1", "A: hi\nB: hello", "Q?", "tom:belief", "x")
    assert (
        from_bench_item(fantom).kind == "conversation" and from_bench_item(fantom).options is None
    )


SIX = ("Alexandria", "Bartholomew", "Christopher", "Dominique", "Evangeline", "Fitzgerald")


def six_party_conversation(lines: int = 12) -> ReaderItem:
    said = [f"{SIX[i % 6]}: I think we should talk about trip {i}." for i in range(lines)]
    return ReaderItem("six", "\n".join(said), "Does Fitzgerald know about trip 3?",
                      kind="conversation", segments=tuple(said))


def test_perception_budget_covers_a_six_party_conversation_where_everyone_hears_everything():
    item = six_party_conversation()
    budget = perception_budget(item)
    fmt = perception_format(item)
    longest = "{" + ", ".join(f'"{i}": [' + ", ".join(f'"{n}"' for n in SIX) + "]"
                              for i in range(1, len(item.lines()) + 1)) + "}"
    assert fmt.ok(longest)  # the reply the budget must cover is one the format allows
    assert budget >= len(longest.encode("utf-8"))  # a token covers at least one byte
    assert perception_request(item, max_tokens=10_000).params.max_tokens == budget
    # the former budget of 12 tokens a line (plus 24) cut this reply
    assert 12 * len(item.lines()) + 24 < len(longest) // 4


@pytest.mark.model
def test_perception_budget_against_the_embedded_tokenizer() -> None:
    from cogrsi_lib.llm.embedded import EmbeddedBackend, embedded_available

    ok, why = embedded_available()
    if not ok:
        pytest.skip(why)
    item = six_party_conversation()
    longest = "{" + ", ".join(f'"{i}": [' + ", ".join(f'"{n}"' for n in SIX) + "]"
                              for i in range(1, len(item.lines()) + 1)) + "}"
    tokens = EmbeddedBackend().count_tokens(longest)
    assert tokens <= perception_budget(item)
    assert tokens > 12 * len(item.lines()) + 24
