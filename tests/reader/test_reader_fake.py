"""The grounded reader on a scripted backend: views, vote, arbitration, fallbacks, records."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.reader import (
    EXPERT_PRINCIPLE,
    GroundedReader,
    ReaderConfig,
    format_rule_library,
    records_to_frame,
    write_records,
)
from cogrsi_lib.reader.report import accuracy_table, cost_table

from .helpers import CONV_PERCEPTION, Script, as_reply, conversation, narrative


def run(script: Script, item=None, principle="expert", config=None):
    backend = ScriptedBackend(script)
    reader = GroundedReader(backend, principle, config)
    return reader.answer(item or narrative()), backend


def jobs_of(script: Script, kind: str):
    return [j for k, j in script.seen if k == kind]


def test_unanimous_reading_makes_seven_calls_and_no_arbitration() -> None:
    s = Script(annotated="Aiden left before the move.\nAnswer: A", plain="Answer: A")
    rec, backend = run(s)
    assert rec.answer == "A" and rec.answer_text == "green_bucket" and rec.correct
    assert rec.ledger.total().calls == 7 == backend.calls
    assert rec.ledger.to_dict()["by_role"]["perception"]["calls"] == 1
    assert not rec.arbitration.ran and rec.arbitration.reason == "supermajority"
    assert [x.view for x in rec.samples] == ["annotated"] * 4 + ["plain"] * 2
    assert rec.perception.status == "ok"
    assert rec.perception.witnesses[3] == ("Aria", "Aiden")
    # the annotated prompt shows who saw each line and carries P; the plain one neither
    ann = prompt_text(jobs_of(s, "annotated")[0])
    assert "4. Aiden exited the front_yard. [witnessed by: Aria, Aiden]" in ann
    assert "5. Aria moved the grapefruit to the blue_container. [witnessed by: Aria]" in ann
    assert EXPERT_PRINCIPLE in ann
    plain = prompt_text(jobs_of(s, "plain")[0])
    assert "witnessed" not in plain and EXPERT_PRINCIPLE not in plain
    assert "1 Aria entered the front_yard." in plain
    # six samples at temperature 0.7, perception greedy
    assert {
        j.request.params.temperature for j in jobs_of(s, "annotated") + jobs_of(s, "plain")
    } == {0.7}
    assert jobs_of(s, "perception")[0].request.params.temperature == 0.0


def test_conflicting_readings_are_arbitrated_under_the_principle() -> None:
    s = Script(
        annotated="Answer: A",
        plain="Answer: B",
        arbitration="The plain reading ignores who left.\nAnswer: 2",
    )
    rec, backend = run(s)
    assert rec.arbitration.ran and rec.arbitration.reason == "conflict"
    assert rec.arbitration.candidates == ("A", "B")
    assert rec.answer == "B" and rec.arbitration.choice == "B"  # 4 of 6 can be overturned
    assert rec.ledger.total().calls == 8 == backend.calls
    arb = prompt_text(jobs_of(s, "arbitration")[0])
    assert "1. A. green_bucket" in arb and "2. B. blue_container" in arb
    assert EXPERT_PRINCIPLE in arb and "[witnessed by:" in arb
    assert rec.vote["annotated_majority"] == "A" and rec.vote["plain_majority"] == "B"


def test_close_split_is_arbitrated_between_the_two_leaders() -> None:
    s = Script(
        annotated=["Answer: A", "Answer: B", "Answer: A", "Answer: B"],
        plain=["Answer: B", "Answer: A"],
        arbitration="Answer: 2",
    )
    rec, _ = run(s)
    assert rec.arbitration.ran and rec.arbitration.reason == "close_split"
    assert rec.vote["counts"] == [["A", 3], ["B", 3]]
    assert rec.arbitration.candidates == ("A", "B") and rec.answer == "B"


@pytest.mark.parametrize(
    "plain", [["Answer: A", "Answer: B"], ["Answer: A", "Answer: A"], ["Answer: A", "no answer"]]
)
def test_five_or_six_samples_are_never_overturned(plain) -> None:
    s = Script(annotated="Answer: A", plain=plain, arbitration="Answer: 2")
    rec, backend = run(s)
    assert rec.answer == "A"
    assert s.count("arbitration") == 0 and not rec.arbitration.ran
    assert backend.calls == 7


def test_malformed_samples_are_recorded_and_counted_never_mapped() -> None:
    s = Script(
        annotated=["Answer: A", "I think the bucket.", "Answer: Z", "Answer: A"],
        plain=["Answer: A", "Answer: the garden"],
    )
    rec, _ = run(s)
    bad = [x for x in rec.samples if x.status == "unparsed"]
    assert [x.text for x in bad] == [
        "I think the bucket.",
        '{"reasoning": "", "answer": "Z"}',
        '{"reasoning": "", "answer": "the garden"}',
    ]
    assert all(x.answer is None for x in bad)
    assert bad[0].reason.startswith("not one JSON value")
    assert bad[1].reason == bad[2].reason == "answer: Input should be 'A' or 'B'"
    assert rec.vote["counts"] == [["A", 3]] and rec.vote["unparsed"] == 3
    assert rec.answer == "A" and rec.unparsed_samples == 3
    row = accuracy_table([rec]).row(0, named=True)
    assert row["unparsed_samples"] == 3 and row["unparsed_answers"] == 0


def test_all_samples_unparsed_gives_an_unparsed_answer() -> None:
    rec, _ = run(Script(annotated="dunno", plain="maybe A?"))
    assert rec.answer is None and rec.status == "unparsed" and rec.correct is False
    assert accuracy_table([rec]).row(0, named=True)["unparsed_answers"] == 1


@pytest.mark.parametrize(
    "reply,reason",
    [
        ("1: Aria\n2: Aria, Aiden\n3: Aria, Aiden\n4: Aria, Aiden", "5: Field required"),
        ("1: Aria\n2: Aria\n3: Aria\n4: Aria\n5: Aria\n6: Aria", "6: Extra inputs"),
        ("1: Aria\n1: Aria\n2: Aria\n3: Aria\n4: Aria\n5: Aria", "duplicate key(s) ['1']"),
        ("1: Aria\n2: Bob\n3: Aria\n4: Aria\n5: Aria", "2.0: Input should be 'Aria' or"),
        ("Everyone saw everything.", "not one JSON value"),
    ],
)
def test_malformed_perception_falls_back_to_plain_reading(reply, reason) -> None:
    s = Script(perception=reply, annotated="Answer: B", plain="Answer: A")
    rec, backend = run(s)
    assert rec.perception.status == "malformed" and reason in rec.perception.reason
    assert rec.perception.text == as_reply(s.seen[0][1], reply)  # the reply as returned
    assert [x.view for x in rec.samples] == ["plain"] * 6
    assert s.count("annotated") == 0 and backend.calls == 7 and rec.answer == "A"
    assert accuracy_table([rec]).row(0, named=True)["perception_fallbacks"] == 1


def test_unparsed_arbitration_keeps_the_vote_leader() -> None:
    s = Script(annotated="Answer: A", plain="Answer: B", arbitration="Both are plausible.")
    rec, _ = run(s)
    assert (
        rec.arbitration.ran
        and rec.arbitration.status == "unparsed"
        and rec.arbitration.choice is None
    )
    assert rec.answer == "A"


def test_without_arbitration_switch_no_call_is_made() -> None:
    s = Script(annotated="Answer: A", plain="Answer: B")
    rec, backend = run(s, config=ReaderConfig(arbitration=False))
    assert backend.calls == 7 and not rec.arbitration.ran and rec.answer == "A"


def test_conversation_reads_the_questioned_characters_view_and_skips_close_splits() -> None:
    s = Script(
        perception=CONV_PERCEPTION,
        annotated=["Answer: B", "Answer: A", "Answer: B", "Answer: A"],
        plain=["Answer: A", "Answer: B"],
    )
    rec, _ = run(s, conversation())
    ann = prompt_text(jobs_of(s, "annotated")[0])
    assert (
        "4. Richard: Lina, did you know Kobe adopted a dog there? [Kobe did not hear this]" in ann
    )
    assert "1. Kobe: I just got back from Spain. [Kobe heard this]" in ann
    assert rec.vote["counts"] == [["B", 3], ["A", 3]]
    assert not rec.arbitration.ran  # dialogue: close-split arbitration does not apply (G.2)
    assert rec.answer == "B" and rec.correct  # equal votes: the first annotated answer leads
    s2 = Script(
        perception=CONV_PERCEPTION,
        annotated="Answer: B",
        plain="Answer: A",
        arbitration="Answer: 1",
    )
    rec2, _ = run(s2, conversation())
    assert rec2.arbitration.ran and rec2.arbitration.reason == "conflict" and rec2.answer == "B"


def test_conversation_filtered_view_option() -> None:
    s = Script(perception=CONV_PERCEPTION)
    run(s, conversation(), config=ReaderConfig(conversation_view="filtered"))
    ann = prompt_text(jobs_of(s, "annotated")[0])
    assert "What Kobe heard of the conversation:" in ann and "adopted a dog" not in ann


def test_conversation_character_is_found_in_the_question_when_not_given() -> None:
    s = Script(perception=CONV_PERCEPTION)
    run(s, conversation(character=None))
    assert "[Kobe did not hear this]" in prompt_text(jobs_of(s, "annotated")[0])


def test_a_batch_runs_in_three_phases() -> None:
    s = Script(annotated="Answer: A", plain="Answer: B", arbitration="Answer: 1")
    backend = ScriptedBackend(s)
    items = [narrative(f"q{i}") for i in range(3)]
    recs = GroundedReader(backend, "expert").answer_batch(items)
    assert backend.batches == [3, 18, 3]  # perception, all samples, all arbitrations
    assert [r.item_id for r in recs] == ["q0", "q1", "q2"]
    s2 = Script()
    b2 = ScriptedBackend(s2)
    GroundedReader(b2, "none").answer_batch(items)
    assert b2.batches == [3, 18]


def test_rule_library_fills_both_principle_positions() -> None:
    lib = format_rule_library([("a character leaves before a move", "they keep their old belief")])
    assert lib == "(1) When a character leaves before a move: they keep their old belief"
    s = Script(annotated="Answer: A", plain="Answer: B")
    rec, _ = run(s, principle=lib)
    assert lib in prompt_text(jobs_of(s, "annotated")[0]) and lib in prompt_text(
        jobs_of(s, "arbitration")[0]
    )
    assert lib not in prompt_text(jobs_of(s, "plain")[0])
    assert rec.principle.startswith("sha256:")
    rec_none, _ = run(Script(annotated="Answer: A", plain="Answer: B"), principle="none")
    assert rec_none.principle == "none"


def test_token_accounting_matches_the_prompts_and_replies() -> None:
    s = Script(annotated="Answer: A", plain="Answer: A")
    rec, backend = run(s)
    expected_prompt = sum(len(prompt_text(j).split()) for j in backend.jobs)
    t = rec.ledger.total()
    assert t.prompt_tokens == expected_prompt
    replies = [as_reply(j, s(j)) for _, j in list(s.seen)]
    assert t.completion_tokens == sum(len(r.split()) for r in replies)
    assert t.completion_tokens == 6 * len(['{"reasoning":', '"",', '"answer":', '"A"}']) + len(
        replies[0].split())


def test_rerun_from_cache_is_identical_free_and_says_so(tmp_path) -> None:
    s = Script(
        annotated=["Answer: A", "Answer: B", "Answer: A", "Answer: B"],
        plain=["Answer: B", "Answer: A"],
        arbitration="Answer: 2",
    )
    inner = ScriptedBackend(s)
    reader = GroundedReader(CachedBackend(inner, tmp_path), "expert")
    first = reader.answer(narrative())
    n = inner.calls
    second = reader.answer(narrative())
    assert inner.calls == n  # nothing generated again
    assert second.answer == first.answer and second.vote == first.vote
    assert second.ledger.total().calls == first.ledger.total().calls == 8
    assert second.ledger.total().cached_calls == 8 and first.ledger.total().cached_calls == 0
    assert all(x.from_cache for x in second.samples) and second.perception.from_cache
    assert second.arbitration.from_cache


def test_records_round_trip_through_parquet(tmp_path) -> None:
    s = Script(annotated="Answer: A", plain="Answer: B", arbitration="Answer: 2")
    backend = ScriptedBackend(s)
    recs = GroundedReader(backend, "expert").answer_batch(
        [narrative("q1"), narrative("q2", gold="B")]
    )
    path = tmp_path / "r.parquet"
    write_records(recs, str(path))
    df = pl.read_parquet(path)
    assert df["item_id"].to_list() == ["q1", "q2"]
    assert df["correct"].to_list() == [False, True]
    assert df["calls"].to_list() == [8, 8] and df["arbitration_ran"].to_list() == [True, True]
    samples = json.loads(df["samples_json"][0])
    assert len(samples) == 6 and {"view", "text", "answer", "status", "from_cache"} <= set(
        samples[0]
    )
    assert json.loads(df["usage_json"][0])["by_role"]["arbitration"]["calls"] == 1
    assert records_to_frame(recs).shape[0] == 2
    cost = cost_table(recs).row(0, named=True)
    assert cost["calls_per_q"] == 8.0
