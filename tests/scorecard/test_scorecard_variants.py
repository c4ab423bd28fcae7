"""Reader variants on the same frozen items: bare, recursive perspective (§10), epistemic
store (§11), their ablations, strict parsing and routing."""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.llm import ScriptedBackend
from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.nested import score
from cogrsi_lib.reader.items import ReaderItem, from_nested_item
from cogrsi_lib.scorecard.answers import (
    ABSTAINED,
    as_reply,
    cost_per_100,
    parse_number_reply,
    record_confidence,
    run_nested,
)
from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.perspective import (
    MARKER,
    MAX_SLOT_CHARS,
    PerspectiveSystem,
    parse_perspective,
    slot_chars,
    slot_names,
)
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill, source_line
from cogrsi_lib.scorecard.store_system import StoreSystem, needed_chains, store_prompt
from cogrsi_lib.scorecard.variants import (
    INTERVENTIONS,
    VARIANTS,
    make_variant,
    needed_variants,
    reply_caps,
)

from .helpers import nested_items

ITEM = ReaderItem(
    item_id="q", context="1 Anne is in the room.\n2 The marble is in the basket.\n"
    "3 Anne moved the marble to the box.", question="Where does Anne think that Bob thinks "
    "the marble is?", options=("basket", "box"), gold="basket",
    meta={"chain": ["Anne", "Bob"], "object": "marble"},
)


def test_slot_names_follow_the_chain() -> None:
    assert slot_names(["Anne"]) == ["WORLD", "ANNE_OBSERVED", "ANSWER", "CONFIDENCE"]
    assert slot_names(["Anne", "Bob", "Anne"]) == [
        "WORLD", "ANNE_OBSERVED", "BOB_OBSERVED", "ANNE_MODEL_OF_BOB",
        "ANNE_MODEL_OF_BOB_MODEL_OF_ANNE", "ANSWER", "CONFIDENCE"]
    assert slot_names(["Anne"], state=False) == ["ANSWER", "CONFIDENCE"]


GOOD = ("WORLD: box\nANNE_OBSERVED: saw the move to the box\nBOB_OBSERVED: nothing\n"
        "ANNE_MODEL_OF_BOB: basket\nANSWER: basket\nCONFIDENCE: 0.7")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (GOOD + "\nBecause Bob was away.", "lines, expected"),  # free text after the slots
        (GOOD.replace("BOB_OBSERVED: nothing\nANNE_MODEL_OF_BOB: basket",
                      "ANNE_MODEL_OF_BOB: basket\nBOB_OBSERVED: nothing"), "expected a line"),
        (GOOD.replace("nothing", "nothing " + "really " * 30), "longer than"),
        (GOOD.replace("ANSWER: basket", "ANSWER: cupboard"), "not one of the options"),
        (GOOD.replace("ANSWER: basket", "ANSWER: Basket"), "not one of the options"),
        (GOOD.replace("ANSWER: basket", "answer: basket"), "expected a line 'ANSWER: ...'"),
        (GOOD.replace("0.7", "high"), "not a number from 0 to 1"),
        (GOOD.replace("0.7", "1.7"), "not a number from 0 to 1"),
        (GOOD.replace("BOB_OBSERVED: nothing", "BOB_OBSERVED:"), "empty"),
        (GOOD.replace("nothing", "nothing" + " a" * 30), "longer than 25 words"),
    ],
)
def test_perspective_parser_is_strict(text: str, error: str) -> None:
    reply, _ = parse_perspective(text, ITEM, ["Anne", "Bob"], max_tokens=400)
    assert not reply.parsed and error in reply.error


def test_perspective_slots_share_what_the_cap_leaves() -> None:
    wide = slot_chars(ITEM, ["Anne", "Bob"], max_tokens=400)
    narrow = slot_chars(ITEM, ["Anne", "Bob"], max_tokens=160)
    assert wide == MAX_SLOT_CHARS and 8 <= narrow < wide
    assert slot_chars(ITEM, ["Anne", "Bob"], max_tokens=60) == 8  # the floor
    long_slot = GOOD.replace("nothing", "x" * (narrow + 1))
    assert parse_perspective(long_slot, ITEM, ["Anne", "Bob"], max_tokens=400)[0].parsed
    reply, _ = parse_perspective(long_slot, ITEM, ["Anne", "Bob"], max_tokens=160)
    assert reply.error == f"slot BOB_OBSERVED is empty or longer than {narrow} characters"


def test_perspective_parser_reads_the_state() -> None:
    reply, state = parse_perspective(GOOD, ITEM, ["Anne", "Bob"])
    assert reply.answer == "basket" and reply.confidence == 0.7
    assert state == {"WORLD": "box", "ANNE_OBSERVED": "saw the move to the box",
                     "BOB_OBSERVED": "nothing", "ANNE_MODEL_OF_BOB": "basket"}


def test_perspective_system_prompts_and_records() -> None:
    backend = ScriptedBackend(GOOD)
    rec, = PerspectiveSystem(backend).answer_batch([ITEM])
    text = prompt_text(backend.jobs[0])
    assert MARKER in text and "ANNE_MODEL_OF_BOB: <where Anne thinks Bob thinks the marble is>" \
        in text and "Target query: " + ITEM.question in text
    assert rec.answer_text == "basket" and rec.correct and rec.extra["confidence"] == 0.7
    assert rec.extra["state"]["ANNE_MODEL_OF_BOB"] == "basket"
    # without a chain the item is not a belief question: the bare prompt answers it
    plain = ReaderItem("p", "A game.", "Pick one.", options=("a", "b"))
    backend = ScriptedBackend('{"answer": "b", "confidence": 0.5}')
    rec, = PerspectiveSystem(backend).answer_batch([plain])
    assert rec.answer_text == "b" and rec.extra["route"] == "bare"
    assert MARKER not in prompt_text(backend.jobs[0])


def test_store_prompt_asks_for_sourced_entries_of_the_needed_chains() -> None:
    text = store_prompt(ITEM, ["Anne", "Bob"])
    assert '["Anne"], ["Anne", "Bob"]' in text and "line number" in text
    assert "1 Anne is in the room." in text
    assert needed_chains(["A", "B", "C"]) == [["A"], ["A", "B"], ["A", "B", "C"]]


def _store_reply(entries, answer="box", confidence=0.6) -> str:
    return json.dumps({"entries": entries, "answer": answer, "confidence": confidence})


def test_store_system_answers_from_the_store() -> None:
    entries = [{"subject": ["Anne"], "location": "box", "confidence": 0.9, "source": 3},
               {"subject": ["Anne", "Bob"], "location": "basket", "confidence": 0.8,
                "source": 2}]
    backend = ScriptedBackend(_store_reply(entries, answer="box"))
    rec, = StoreSystem(backend).answer_batch([ITEM])
    assert rec.answer_text == "basket" and rec.extra["confidence"] == 0.8
    assert rec.extra["model_answer"] == "box" and rec.extra["store_answer"] == "basket"
    # the ablation reads the same reply but answers with the model's own field
    rec, = StoreSystem(backend, read_store=False).answer_batch([ITEM])
    assert rec.answer_text == "box" and len(rec.extra["store"]) == 2


def test_store_system_abstains_on_unknown_even_when_the_model_guesses_right() -> None:
    # nothing written for [Anne, Bob]: the store answers UNKNOWN whatever the model says
    entries = [{"subject": ["Anne"], "location": "box", "confidence": 0.9, "source": 3}]
    rec, = StoreSystem(ScriptedBackend(_store_reply(entries, answer="basket"))
                       ).answer_batch([ITEM])
    assert rec.status == ABSTAINED and rec.answer is None
    assert rec.extra["store_answer"] == "UNKNOWN" and rec.extra["refused"] == []
    assert rec.extra["model_answer"] == "basket"
    assert as_reply(rec) == "<abstained>"


@pytest.mark.parametrize(
    "text", ["not json", json.dumps({"entries": []}), json.dumps({"entries": {}, "answer": "box",
                                                                  "confidence": 1}),
             _store_reply([{"subject": ["Anne"], "location": "box", "confidence": 0.9}]),
             _store_reply([{"subject": ["Carla"], "location": "box", "confidence": 1,
                            "source": 1}]),
             _store_reply([{"subject": ["Anne"], "location": "cupboard", "confidence": 1,
                            "source": 1}]),
             _store_reply([{"subject": ["Anne"], "location": "box", "confidence": 1,
                            "source": 9}]),
             _store_reply([{"subject": ["Anne"], "location": "box", "confidence": 1,
                            "source": 1}] * 3)])
def test_store_system_refuses_malformed_replies(text: str) -> None:
    rec, = StoreSystem(ScriptedBackend(text)).answer_batch([ITEM])
    assert rec.status == "unparsed" and rec.extra["store"] == []


def test_store_entries_are_validated_one_by_one() -> None:
    # the format admits this entry; the store refuses it alone and keeps the other
    entries = [{"subject": ["Bob", "Bob"], "location": "box", "confidence": 1, "source": 3},
               {"subject": ["Anne", "Bob"], "location": "basket", "confidence": 1,
                "source": 2}]
    rec, = StoreSystem(ScriptedBackend(_store_reply(entries))).answer_batch([ITEM])
    reasons = [r["reason"] for r in rec.extra["refused"]]
    assert len(reasons) == 1 and "twice in a row" in reasons[0]
    assert rec.answer_text == "basket"


def test_number_replies_are_strict() -> None:
    assert parse_number_reply('{"answer": 22, "confidence": 0.4}').answer == "22"
    assert parse_number_reply('{"answer": 0.25}').answer == "0.25"
    for bad in ('{"answer": "22"}', '{"answer": true}', '{"answer": NaN}', "22",
                '{"answer": 1, "extra": 2}', '{"answer": 1, "confidence": 2}',
                '{"answer": 1, "answer": 2}', '{"confidence": 0.5}'):
        assert not parse_number_reply(bad).parsed
    assert parse_number_reply('{"answer": 1, "answer": 2}').error.startswith("duplicate key")


def test_direct_system_and_suite_a_replies() -> None:
    items = nested_items()[:12]
    replies = iter([json.dumps({"answer": it.gold, "confidence": 0.9}) for it in items[:-2]]
                   + ["Answer: box", '{"answer": "nowhere"}'])
    backend = ScriptedBackend(lambda job: next(replies))
    run = run_nested(DirectSystem(backend), items)
    assert run.score.n_unparsed == 2 and run.score.accuracy == pytest.approx(10 / 12)
    rec = run.records[0]
    assert record_confidence(rec) == 0.9 and json.loads(as_reply(rec))["answer"] == items[0].gold
    # the replies reach the strict scorer unchanged in meaning
    again = score(items, [as_reply(r) for r in run.records])
    assert again.accuracy == run.score.accuracy and again.n_unparsed == 2
    cost = cost_per_100(run.records)
    assert cost["calls"] == 100.0
    assert cost["total_tokens"] == pytest.approx(
        100 * sum(r.ledger.total().total_tokens for r in run.records) / len(items))


def test_the_scripted_model_gives_the_skills_it_was_given() -> None:
    items = nested_items()
    model = ScriptedModel(skills={"bare": Skill(depth_limit=2), "perspective": Skill(3),
                                  "store": Skill(4)}).add_nested(items)
    b = model.backend()
    acc = {name: run_nested(make_variant(name, b), items).score for name in VARIANTS}
    # depth collapse: the bare prompt and both ablations fail where the chain is longer
    for name in ("bare", "perspective_no_state", "store_ablated"):
        d = acc[name].by_depth
        assert d.filter(d["depth"] <= 2)["accuracy"].min() == 1.0
        assert d.filter(d["depth"] == 3)["adversarial_accuracy"][0] == 0.0
    d = acc["perspective"].by_depth
    assert d.filter(d["depth"] <= 3)["accuracy"].min() == 1.0
    assert d.filter(d["depth"] == 4)["adversarial_accuracy"][0] == 0.0
    assert acc["store"].accuracy == 1.0


def test_store_sources_cite_the_line_that_fixed_the_belief() -> None:
    it = next(i for i in nested_items() if i.depth == 1 and i.via == "move")
    model = ScriptedModel().add_nested([it])
    rec, = StoreSystem(model.backend()).answer_batch([from_nested_item(it)])
    (entry,) = rec.extra["store"]
    line = it.story.splitlines()[entry["source"] - 1]
    assert entry["source"] == source_line(it.world, it.source)
    assert "moved" in line and it.gold in line


def test_variant_registry() -> None:
    assert needed_variants(["perspective", "store"]) == [
        "bare", "perspective", "perspective_no_state", "store", "store_ablated"]
    assert INTERVENTIONS["store"].baseline == "perspective"
    assert make_variant("zero_shot", ScriptedBackend("x")).name == "zero_shot"
    with pytest.raises(ValueError, match="unknown variant"):
        make_variant("telepathy", ScriptedBackend("x"))


def _mixed_depths() -> list[ReaderItem]:
    """Two Suite A items of each depth R0-R2."""
    return [from_nested_item(i) for d in range(3)
            for i in [i for i in nested_items() if i.depth == d][:2]]


def test_reply_caps_reach_every_request_and_are_checked() -> None:
    items = _mixed_depths() + [
        ReaderItem(item_id="n", context="Pick a number.", question="Which?", gold="3")]
    caps = {"bare": 11, "perspective": 22, "store": 33}
    for name, cap in (("bare", 11), ("perspective", 22), ("perspective_no_state", 22),
                      ("store", 33), ("store_ablated", 33)):
        b = ScriptedBackend("not json")
        make_variant(name, b, caps).answer_batch(items)
        belief = [j for j in b.jobs if "Pick a number" not in prompt_text(j)]
        other = [j for j in b.jobs if "Pick a number" in prompt_text(j)]
        # R0 items carry an empty chain: the store answers them with the bare prompt
        assert {j.request.params.max_tokens for j in belief} <= {cap, 11}
        assert cap in {j.request.params.max_tokens for j in belief}
        assert [j.request.params.max_tokens for j in other] == [11]
    assert reply_caps({"store": 200}) == {"bare": 64, "perspective": 160, "store": 200}
    with pytest.raises(ValueError, match="unknown reply caps"):
        reply_caps({"cot": 10})
    with pytest.raises(ValueError, match="whole numbers"):
        reply_caps({"bare": 0})
    with pytest.raises(ValueError, match="whole numbers"):
        make_variant("bare", ScriptedBackend("x"), {"bare": 1.5})


def test_fallbacks_reuse_the_bare_requests_through_the_cache(tmp_path) -> None:
    """Questions that are not belief questions get the bare variant's own requests, so under
    the completion cache every variant answers them with the same replies, at no new cost;
    the store's ablation repeats the store's requests."""
    from cogrsi_lib.llm import CachedBackend

    items = _mixed_depths() + [
        ReaderItem(item_id=f"n{k}", context=f"Task {k}: pick a number.", question="Which?",
                   gold="3") for k in range(3)]
    inner = ScriptedBackend(lambda job: f"reply {len(prompt_text(job))}")
    b = CachedBackend(inner, tmp_path / "cache")
    caps = {"bare": 40}
    bare = make_variant("bare", b, caps).answer_batch(items)
    assert inner.calls == len(items)
    for name in ("perspective", "store"):
        before = inner.calls
        recs = make_variant(name, b, caps).answer_batch(items)
        # new calls only for the belief questions that this prompt family asks differently
        fresh = [r for r in recs if not all(s.from_cache for s in r.samples)]
        assert inner.calls - before == len(fresh) < len(items)
        for r, rb in zip(recs[-3:], bare[-3:], strict=True):
            assert r.samples[0].text == rb.samples[0].text and r.extra["route"] == "bare"
    before = inner.calls
    make_variant("store_ablated", b, caps).answer_batch(items)
    assert inner.calls == before
