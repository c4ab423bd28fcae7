"""The builder's strict replies: JSON, operations, entries, word limits, story names (App. C.2)."""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.loops.builder import (
    Builder,
    BuilderLimits,
    Failure,
    FailureGroup,
    builder_messages,
    judge_reply,
)
from cogrsi_lib.loops.library import PrincipleText, RuleLibrary
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import Rule
from cogrsi_lib.reader.records import PerceptionRecord, new_record

STORY = ("1 Aria entered the front_yard.\n2 Aiden entered the front_yard.\n"
         "3 The grapefruit is in the green_bucket.\n4 Aiden exited the front_yard.\n"
         "5 Aria moved the grapefruit to the blue_container.")
ITEM = ReaderItem("q1", STORY, "Where will Aiden look for the grapefruit?",
                  ("green_bucket", "blue_container"), "A", story_id="s1",
                  meta={"names": ["Aria", "Aiden"], "places": ["front_yard"]})


def group(item: ReaderItem = ITEM, witnesses: tuple = ()) -> FailureGroup:
    rec = new_record("r", item)
    rec.answer, rec.answer_text = "B", "blue_container"
    if witnesses:
        rec.perception = PerceptionRecord("ok", witnesses=witnesses)
    return FailureGroup("g", (Failure.of(item, rec),), 1, (rec,))


def reply(**kw) -> str:
    base = {"diagnosis": "The reader ignored who left.", "operation": "add", "entry": None,
            "condition": "a character leaves before a move", "rule": "they keep the old belief."}
    base.update(kw)
    return json.dumps(base)


LIB2 = RuleLibrary((Rule("a", "b"), Rule("c", "d")))
EMPTY = RuleLibrary()


def judge(text: str, artifact=EMPTY, g: FailureGroup | None = None, **limits):
    return judge_reply(text, artifact, g or group(), BuilderLimits(**limits))


def test_a_well_formed_add_is_accepted():
    r = judge(reply())
    assert r.ok and r.edit is not None and r.edit.operation == "add"
    assert r.edit.written() == "When a character leaves before a move: they keep the old belief."
    assert r.diagnosis == "The reader ignored who left."


def test_one_fenced_json_block_is_the_whole_reply():
    assert judge("```json\n" + reply() + "\n```").ok
    assert judge("```\n" + reply() + "\n```").ok


@pytest.mark.parametrize("text", [
    "Sure! Here is my change: " + reply(),      # prose around the object
    reply() + "\nI hope this helps.",
    reply()[:-1],                                # truncated
    json.dumps([json.loads(reply())]),           # an array
    "```json\n" + reply() + "\n```\nand more",
    "",
])
def test_malformed_replies_are_rejected_not_repaired(text):
    r = judge(text)
    assert not r.ok and r.reason == "malformed_json" and r.edit is None


@pytest.mark.parametrize("kw,reason", [
    ({"diagnosis": None}, "malformed_json"),  # the declared format says how
    ({"rule": ""}, "missing_field"),
    ({"condition": "   "}, "missing_field"),
    ({"rule": 5}, "malformed_json"),
    ({"operation": "delete"}, "malformed_json"),
    ({"operation": None}, "malformed_json"),
    ({"operation": "revise", "entry": None}, "bad_entry"),
    ({"operation": "revise", "entry": 3}, "bad_entry"),
    ({"operation": "retire", "entry": 0}, "malformed_json"),
    ({"operation": "revise", "entry": "2"}, "malformed_json"),
    ({"operation": "revise", "entry": True}, "malformed_json"),
])
def test_field_errors_have_their_reason(kw, reason):
    r = judge(reply(**kw), LIB2)
    assert not r.ok and r.reason == reason, (r.reason, r.detail)


def test_a_missing_key_breaks_the_declared_format():
    obj = json.loads(reply())
    del obj["condition"]
    r = judge(json.dumps(obj))
    assert r.reason == "malformed_json" and r.detail == "condition: Field required"


def test_revise_and_retire_address_existing_entries():
    r = judge(reply(operation="revise", entry=2), LIB2)
    assert r.ok and LIB2.apply(r.edit).rules[1].condition == "a character leaves before a move"
    r = judge(json.dumps({"diagnosis": "x", "operation": "retire", "entry": 1,
                          "condition": "", "rule": ""}), LIB2)
    assert r.ok and [x.condition for x in LIB2.apply(r.edit).rules] == ["c"]
    assert judge(reply(operation="retire", entry=1), RuleLibrary()).reason == "bad_entry"


def test_library_full_and_no_change_are_rejected():
    full = RuleLibrary(tuple(Rule(f"c{i}", "r") for i in range(5)))
    assert judge(reply(), full).reason == "library_full"
    same = RuleLibrary((Rule("a character leaves before a move", "they keep the old belief."),))
    assert judge(reply(operation="revise", entry=1), same).reason == "no_change"


def test_word_limit_counts_the_whole_entry():
    # "When" + 3 condition words + rule words: 60 in total passes, 61 fails
    cond = "a character leaves"
    ok = " ".join(["word"] * (60 - 4))
    assert Rule(cond, ok).words() == 60
    assert judge(reply(condition=cond, rule=ok)).ok
    r = judge(reply(condition=cond, rule=ok + " more"))
    assert r.reason == "too_long" and "61 words" in r.detail
    assert judge(reply(condition=cond, rule=ok), max_rule_words=59).reason == "too_long"


@pytest.mark.parametrize("rule", [
    "assume Aiden still believes the old place.",      # a character
    "assume aiden still believes the old place.",      # case ignored
    "anyone in the front yard sees the move.",          # a place, underscore as a space
    "look in the green_bucket first.",                 # an entity token of the story
])
def test_rules_naming_the_shown_stories_are_rejected(rule):
    r = judge(reply(rule=rule))
    assert not r.ok and r.reason == "names_story", r.detail


def test_names_from_perception_and_capitalised_words_count():
    item = ReaderItem("q2", "Zed went out. Later Quill moved the ring.", "Where is the ring?",
                      ("bag", "box"), "A")
    g = group(item, witnesses=(("Zed",), ("Quill", "Yusuf")))
    assert judge(reply(rule="ask Yusuf."), g=g).reason == "names_story"   # witness only
    assert judge(reply(rule="Quill knows."), g=g).reason == "names_story"  # capitalised word
    assert judge(reply(rule="later, the character knows."), g=g).ok        # an opener


def test_generic_words_of_the_story_are_not_names():
    r = judge(reply(condition="the object is moved", rule="The character who left keeps "
                    "their belief about the container."))
    assert r.ok, r.detail


def test_single_principle_replies():
    p = PrincipleText("old text")
    ok = judge(json.dumps({"diagnosis": "d", "principle": "New text for the reader."}), p)
    assert ok.ok and ok.edit.operation == "rewrite"
    long = " ".join(["w"] * 121)
    assert judge(json.dumps({"diagnosis": "d", "principle": long}), p).reason == "too_long"
    assert judge(json.dumps({"diagnosis": "d", "principle": " ".join(["w"] * 120)}), p).ok
    assert judge(json.dumps({"diagnosis": "d", "principle": "Aria is wrong."}), p
                 ).reason == "names_story"
    assert judge(json.dumps({"diagnosis": "d", "principle": "old  text"}), p).reason == "no_change"
    assert judge(reply(), p).reason == "malformed_json"  # a library reply has no principle


def test_prompt_shows_library_failures_and_limits_but_not_validity():
    lib = RuleLibrary((Rule("a character sleeps", "they miss events."),))
    text = "\n".join(m.content for m in builder_messages(lib, group()))
    assert "(1) When a character sleeps: they miss events." in text
    assert "The reader answered: blue_container" in text
    assert "The correct answer: green_bucket" in text
    assert "at most 60 words" in text and "add a rule, revise an entry, or retire" in text
    assert "valid" not in text.lower()
    single = "\n".join(m.content for m in builder_messages(PrincipleText(""), group()))
    assert "at most 80 words" in single and "(none yet)" in single


def test_builder_makes_one_call_per_group_at_temperature_07():
    seen = []

    def respond(job):
        seen.append(job)
        return reply() if "front_yard" in prompt_text(job) else "no"

    b = Builder(ScriptedBackend(respond), seed=3)
    other = ReaderItem("q9", "Bo left.", "Where?", ("x", "y"), "A")
    out = b.propose(RuleLibrary(), [group(), group(other)])
    assert [r.status for r in out] == ["ok", "rejected"]
    assert out[1].reason == "malformed_json" and out[1].text == "no"
    assert len(seen) == 2 and all(j.request.params.temperature == 0.7 for j in seen)
    assert {j.request.params.seed for j in seen} == {3}
    assert out[0].usage["completion_tokens"] > 0
