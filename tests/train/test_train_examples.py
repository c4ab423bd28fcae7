"""Training examples: the train lexicon is disjoint from every evaluation split, and every
target is a reply the request's declared format allows."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from cogrsi_lib.oracle import sampler
from cogrsi_lib.oracle.render import CHAT, NARRATIVE
from cogrsi_lib.pairs.lexicon import EVAL, GATE, TRAIN, words_in
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.stage_params import StageParamsError, load
from cogrsi_lib.train.examples import (
    FAMILIES,
    answer_example,
    arbitration_example,
    build_examples,
    forbidden_words,
    leaked_words,
    open_item,
    oracle_items,
    pair_examples,
    perception_example,
    shares,
)
from cogrsi_lib.train.stage import training_set


@pytest.fixture(scope="module")
def items():
    return oracle_items(80, 3)


def test_train_lexicon_shares_nothing_with_the_other_splits_or_the_oracle_defaults():
    defaults = {w.lower() for w in sampler.AGENT_NAMES + sampler.CONTAINER_NAMES
                + sampler.OBJECT_NAMES + sampler.ROOM_NAMES}
    for other in (GATE, EVAL):
        assert not TRAIN.words() & other.words()
        assert not TRAIN.template_strings() & other.template_strings()
        for t in TRAIN.template_strings():
            assert not words_in(t) & other.words(), t
    assert not TRAIN.words() & defaults
    oracle_templates = {v for t in (NARRATIVE, CHAT) for v in vars(t).values()
                        if isinstance(v, str)}
    assert not TRAIN.template_strings() & oracle_templates


def test_train_lexicon_shares_no_word_with_the_tomi_and_hitom_samples():
    from cogrsi_lib import bench

    for name in ("tomi", "hi-tom"):
        if not bench.available(name):
            pytest.skip(f"{name} sample absent")
        text = " ".join(it.context + " " + it.question for it in bench.load(name))
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", text.replace("_", " "))}
        assert not TRAIN.words() & words, sorted(TRAIN.words() & words)


def test_items_use_only_train_words_and_their_gold_is_an_option(items):
    assert not leaked_words(it.item for it in items)
    for it in items:
        assert it.item.gold in it.item.options
        assert set(it.item.meta["chain"]) <= set(TRAIN.names)
    bad = ReaderItem("x", "1 Sally entered the kitchen.", "Where is it?", ("box", "urn"), "urn")
    assert leaked_words([bad]) == {"sally", "kitchen", "box"}
    assert "anne" in forbidden_words() and "aiden" in forbidden_words()


def test_items_cover_every_depth_with_false_and_true_beliefs(items):
    cells = Counter((it.depth, it.false_belief) for it in items)
    assert {d for d, _ in cells} == {0, 1, 2, 3, 4}
    for d in (1, 2):
        assert cells[(d, True)] > 0 and cells[(d, False)] > 0
    # the same seed draws the same items; another seed other worlds
    again = oracle_items(80, 3)
    assert [it.item for it in again] == [it.item for it in items]
    assert oracle_items(5, 4)[0].item.context != items[0].item.context


@pytest.mark.parametrize("share", [0.0, 0.3, 0.5, 1.0])
def test_false_beliefs_make_their_quota_at_every_depth_from_r1(share):
    drawn = oracle_items(150, 7, per_world=2, false_belief_share=share)
    for d in (1, 2, 3, 4):
        kinds = [it.false_belief for it in drawn if it.depth == d]
        assert kinds, f"no R{d} question drawn"
        # the quota holds after every draw, so to within one question per depth
        assert abs(sum(kinds) - share * len(kinds)) <= 1
    assert not any(it.false_belief for it in drawn if it.depth == 0)
    with pytest.raises(ValueError, match="false_belief_share"):
        oracle_items(2, 7, false_belief_share=1.5)


def test_perceivers_follow_the_story(items):
    for it in items:
        assert len(it.perceivers) == len(it.item.lines())
        named = {a for a in TRAIN.names if a in it.item.context}
        assert all(set(w) <= named for w in it.perceivers)
        # the opening (common ground) is perceived by every character the story names
        assert set(it.perceivers[0]) == named


def test_every_target_is_a_reply_its_format_accepts(items):
    import random

    rng = random.Random(0)
    built = []
    for it in items[:20]:
        built += [answer_example(it), answer_example(it, "annotated"), perception_example(it),
                  arbitration_example(it, rng)]
    built += pair_examples(2, 2, 0)
    for e in built:
        # compact JSON, exactly the keys the format declares
        value = json.loads(e.completion)
        assert e.completion == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    answers = [e for e in built if e.family.startswith("answer")]
    assert all(json.loads(e.completion)["answer"] == e.gold for e in answers)
    assert all(e.gold in e.labels for e in answers)
    annotated = [e for e in built if e.family == "answer.annotated"]
    assert all("[witnessed by:" in e.messages[-1].content for e in annotated)


def test_targets_are_accepted_token_by_token_by_the_decoders_grammar(items, embedded_model):
    """The reply the model is trained on is one the constrained decoder can produce."""
    import random
    from dataclasses import replace

    import xgrammar as xgr

    from cogrsi_lib.llm.types import (
        Message,  # noqa: F401 - the messages' type
        SamplingParams,
    )
    from cogrsi_lib.reader import prompts
    from cogrsi_lib.reader.perception import perception_request
    from cogrsi_lib.reader.views import plain_view

    rng = random.Random(1)
    embedded_model.load()
    tok = embedded_model._tok
    for it in items[:6]:
        pairs = [
            (prompts.answer_request(it.item, plain_view(it.item), SamplingParams(max_tokens=32),
                                    think=prompts.THINK_NONE), answer_example(it)),
            (perception_request(it.item), perception_example(it)),
        ]
        e = arbitration_example(it, rng)
        pairs.append((prompts.arbitration_request(it.item, plain_view(it.item), ("A", "B"), "",
                                                  SamplingParams(max_tokens=96)), e))
        opened = replace(it, item=open_item(it.item))
        pairs.append((prompts.answer_request(opened.item, plain_view(opened.item),
                                             SamplingParams(max_tokens=32),
                                             think=prompts.THINK_NONE),
                       answer_example(opened, family="answer.open")))
        for request, example in pairs:
            matcher = xgr.GrammarMatcher(embedded_model.grammar(request.constraint))
            for t in tok(example.completion, add_special_tokens=False)["input_ids"]:
                assert matcher.accept_token(t), (example.family, example.completion)
            assert matcher.is_terminated() or matcher.is_completed() or matcher.accept_token(
                tok.eos_token_id)


def test_build_examples_follows_the_mix_and_refuses_unknown_families(items):
    mix = {"answer.plain": 0.5, "reader.perception": 0.25, "reader.arbitration": 0.25}
    ex = build_examples(items, mix, 0, 40)
    assert Counter(e.family for e in ex) == {"answer.plain": 20, "reader.perception": 10,
                                             "reader.arbitration": 10}
    assert len({e.item_id for e in ex}) == 40  # each oracle item serves one family
    with pytest.raises(ValueError, match="unknown example families"):
        build_examples(items, {"answer.plain": 1, "chat": 1}, 0, 4)
    with pytest.raises(ValueError, match="pair examples"):
        build_examples(items, {"pairs": 1}, 0, 4)
    with pytest.raises(ValueError, match="items drawn"):
        build_examples(items, {"answer.plain": 1}, 0, 10_000)
    assert set(FAMILIES) >= set(mix)


def test_training_set_keeps_heldout_and_grpo_stories_out_of_training():
    p = load("train", {"n_worlds": 20, "n_examples": 30, "n_heldout": 6, "n_grpo": 6,
                       "n_pairs": 4})
    data = training_set(p)
    # the held-out items are asked twice: by option label, then open
    assert len(data.examples) == 30 and len(data.heldout) == 12 and len(data.grpo) == 6
    train_stories = {e.messages[-1].content.split("Question:")[0] for e in data.examples
                     if e.family == "answer.plain"}
    for e in data.heldout + data.grpo:
        assert e.messages[-1].content.split("Question:")[0] not in train_stories
    assert all(e.family == "answer.plain" and e.labels for e in data.grpo)
    lettered, named = data.heldout[:6], data.heldout[6:]
    for by_label, opened in zip(lettered, named, strict=True):
        assert by_label.family == "answer.plain" and by_label.labels
        assert opened.family == "answer.open" and not opened.labels
        assert opened.item_id == by_label.item_id
        options = opened.meta["options"]
        assert opened.gold in options
        assert opened.gold == options["ABCDEFGH".index(by_label.gold)]
    table = data.table()
    assert set(table["set"]) == {"sft", "heldout", "grpo"}
    assert table.height == 48


def test_worlds_are_split_over_the_situation_sets_by_their_shares():
    from cogrsi_lib.train.stage import _items

    assert shares(10, [3, 1]) == [8, 2] and shares(7, [1, 1, 1]) == [3, 2, 2]
    assert sum(shares(1000, [0.55, 0.25, 0.04, 0.04, 0.04, 0.08])) == 1000
    p = load("train", {"situations": {"tomi": 3, "exploretom": 1}, "per_world": 1,
                       "false_belief_share": 0.0})
    items = _items(p, "train", 40)
    # a story's id names its situation set's seed: exploretom 0, oracle 1, tomi 2
    worlds = Counter(it.item.story_id.split("-")[1] for it in items)
    assert set(worlds) == {"0", "2"} and 20 <= worlds["2"] <= 30 and 5 <= worlds["0"] <= 10
    assert worlds["2"] > 2 * worlds["0"]
    with pytest.raises(StageParamsError):
        load("train", {"situations": {"tomi": 0}})
    with pytest.raises(StageParamsError):
        load("train", {"situations": {"bigtom": 1}})


def test_stories_are_told_in_every_phrasing_and_asked_in_the_same_one(items):
    used = Counter()
    for it in items:
        for t in (TRAIN.narrative, *TRAIN.variants):
            mover = t.move.split("{agent} ")[1].split(" the")[0]  # "transferred", ...
            if f" {mover} the " in it.item.context and it.depth > 0:
                used[t.think] += 1
                assert f" {t.think} " in it.item.question, (t.think, it.item.question)
    assert len(TRAIN.variants) == 2 and len(used) == 3, used


def test_no_train_word_is_a_prefix_of_another():
    # places and names are found in stories by substring: "cask" would be found in "casket"
    words = [w.lower() for w in TRAIN.names + TRAIN.rooms + TRAIN.objects + TRAIN.containers]
    assert len(set(words)) == len(words)
    clashes = [(a, b) for a in words for b in words if a != b and b.startswith(a)]
    assert not clashes


def test_no_option_position_predicts_the_answer(items):
    three = [it.item for it in items if len(it.item.options) == 3]
    labels = Counter(it.gold_key() for it in three)
    assert len(three) > 60
    assert max(labels.values()) / len(three) < 0.5, labels
    # the ToMi-like answer sets (the room among the places) are used too
    assert any(it.item.options and any(o in TRAIN.rooms for o in it.item.options)
               for it in items)


def test_an_open_question_is_answered_by_naming_the_gold_option(items):
    from dataclasses import replace

    for it in items[:20]:
        opened = open_item(it.item)
        assert opened.options is None and opened.labels is None
        assert opened.gold == it.item.option_text(it.item.gold_key())
        e = answer_example(replace(it, item=opened), family="answer.open")
        assert json.loads(e.completion) == {"answer": opened.gold_key()} and not e.labels
        assert "Options:" not in e.messages[-1].content
        assert e.depth == it.depth
    with pytest.raises(ValueError, match="already an open question"):
        open_item(opened)
    ex = build_examples(items, {"answer.open": 1, "answer.plain": 1}, 0, 20)
    assert Counter(e.family for e in ex) == {"answer.open": 10, "answer.plain": 10}


def _world(events):
    """Anne and Sally in a room, the marble in the basket; events in a short notation:
    "Sally leave", "Anne move box", "Anne whisper Sally drawer", "Sally peek"."""
    from cogrsi_lib.oracle.world import World

    def ev(text):
        agent, kind, *rest = text.split()
        if kind == "move":
            return {"type": "move", "agent": agent, "to": rest[0]}
        if kind == "whisper":
            return {"type": "whisper", "speaker": agent, "listener": rest[0],
                    "location": rest[1]}
        return {"type": kind, "agent": agent}

    return World.from_dict({
        "agents": ["Anne", "Sally"], "containers": ["basket", "box", "drawer"],
        "object": "marble", "initial": {"location": "basket", "present": ["Anne", "Sally"],
                                        "asleep": [], "properties": {}},
        "events": [ev(t) for t in events]})


def _trace(events, chain):
    from cogrsi_lib.oracle.answer import answer_all
    from cogrsi_lib.oracle.render import render
    from cogrsi_lib.oracle.world import Question
    from cogrsi_lib.train.examples import trace

    w = _world(events)
    q = Question("location", tuple(chain))
    gold = str(answer_all(w, (q,))[0].value)
    return trace(w, render(w, NARRATIVE), q, gold), gold


def test_a_trace_follows_what_the_agent_perceived_to_the_oracles_answer():
    # Sally leaves, Anne moves the marble twice: Sally last saw it in the basket
    got, gold = _trace(["Sally leave", "Anne move box", "Anne move drawer"], ["Sally"])
    assert gold == "basket"
    assert got == "3 basket seen; 4 Sally out; 5 box unseen; 6 drawer unseen"
    # she comes back and sees the next move; reality is the last place
    got, gold = _trace(["Sally leave", "Anne move box", "Sally enter", "Anne move drawer"],
                       ["Sally"])
    assert gold == "drawer" and got.endswith("6 Sally in; 7 drawer seen")
    got, gold = _trace(["Sally leave", "Anne move box"], [])
    assert (got, gold) == ("3 basket; 5 box", "box")
    # told by a whisper, and finding out by looking
    got, gold = _trace(["Sally leave", "Anne move box", "Sally enter",
                        "Anne whisper Sally drawer"], ["Sally"])
    assert gold == "drawer" and got.endswith("6 Sally in; 7 told drawer")
    got, gold = _trace(["Sally leave", "Anne move box", "Sally enter", "Sally peek"], ["Sally"])
    assert gold == "box" and got.endswith("7 looks: box")


def test_no_trace_for_deeper_questions_or_where_it_would_miss_the_gold():
    from cogrsi_lib.oracle.render import render
    from cogrsi_lib.oracle.world import Question
    from cogrsi_lib.train.examples import trace

    got, _ = _trace(["Sally leave", "Anne move box"], ["Anne", "Sally"])
    assert got is None
    w = _world(["Sally leave", "Anne move box"])
    assert trace(w, render(w, NARRATIVE), Question("location", ("Sally",)), "box") is None


def test_traced_examples_reply_the_trace_then_the_gold_within_their_cap(items):
    from cogrsi_lib.train.examples import traceable, traced_example

    traced = [it for it in items if traceable(it)]
    assert traced and all(it.depth <= 1 for it in traced)
    for it in traced[:20]:
        e = traced_example(it)
        reply = json.loads(e.completion)
        assert list(reply) == ["reasoning", "answer"] and reply["reasoning"] == it.trace
        assert reply["answer"] == e.gold == it.item.option_text(it.item.gold_key())
        assert "Think step by step" in e.messages[-1].content and "Options" not in \
            e.messages[-1].content
    untraced = next(it for it in items if it.trace is None)
    with pytest.raises(ValueError, match="no trace"):
        traced_example(untraced)
    made = build_examples(items, {"answer.traced": 1, "answer.plain": 1}, 0, 20)
    assert Counter(e.family for e in made) == {"answer.traced": 10, "answer.plain": 10}
