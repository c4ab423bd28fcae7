"""Baselines: calls, prompts, views, shared cache entries and the cost table."""

from __future__ import annotations

import pytest

from cogrsi_lib.baselines import SYSTEMS, make_system, make_systems, question_characters
from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader.report import cost_table

from .helpers import Script, as_reply, conversation, kind_of, narrative


def one(name: str, script: Script, item=None, backend=None):
    backend = backend or ScriptedBackend(script)
    rec = make_system(name, backend).answer_batch([item or narrative()])[0]
    return rec, backend


@pytest.mark.parametrize(
    "name,calls",
    [
        ("zero_shot", 1),
        ("cot", 1),
        ("sc6", 6),
        ("sc9", 9),
        ("simtom", 2),
        ("perceptom", 2),
        ("simtom_sc6", 7),
        ("perceptom_sc6", 7),
        ("cogrsi", 7),
    ],
)
def test_calls_per_question(name: str, calls: int) -> None:
    rec, backend = one(name, Script(other="Answer: A"))
    assert rec.system == name
    assert rec.ledger.total().calls == calls == backend.calls
    assert rec.answer == "A" and rec.correct


def test_zero_shot_and_cot_are_greedy_single_calls() -> None:
    cfg = ReaderConfig(direct_max_tokens=16, sample_max_tokens=300)
    for name, think, mt in (
        ("zero_shot", "Answer directly", 16),
        ("cot", "Think step by step", 300),
    ):
        b = ScriptedBackend(Script())
        make_system(name, b, cfg).answer_batch([narrative()])
        (job,) = b.jobs
        assert think in prompt_text(job)
        assert job.request.params.temperature == 0.0 and job.request.params.max_tokens == mt


def test_self_consistency_votes_and_sc6_is_free_after_sc9(tmp_path) -> None:
    replies = [
        "Answer: B",
        "Answer: A",
        "Answer: B",
        "Answer: A",
        "Answer: B",
        "junk",
        "Answer: A",
        "Answer: A",
        "Answer: A",
    ]
    inner = ScriptedBackend(lambda job: as_reply(job, replies[job.index]))
    b = CachedBackend(inner, tmp_path)
    sc9 = make_system("sc9", b).answer_batch([narrative()])[0]
    assert (
        sc9.vote["counts"] == [["A", 5], ["B", 3]]
        and sc9.answer == "A"
        and sc9.vote["unparsed"] == 1
    )
    sc6 = make_system("sc6", b).answer_batch([narrative()])[0]
    assert inner.calls == 9  # sample i of SC-6 is sample i of SC-9
    assert sc6.vote["counts"] == [["B", 3], ["A", 2]] and sc6.answer == "B"
    assert sc6.ledger.total().calls == 6 and sc6.ledger.total().cached_calls == 6
    assert {j.request.params.temperature for j in inner.jobs} == {0.7}


def test_simtom_takes_the_target_perspective_first() -> None:
    known = '{"events":["Aiden entered the front_yard.","Aiden exited the front_yard."]}'
    s = Script(other=known)
    rec, b = one("simtom", s)
    kinds = [kind_of(j) for j in b.jobs]
    assert kinds == ["perspective", "perspective_answer"]
    assert "events that Aiden knows about" in prompt_text(b.jobs[0])
    assert b.jobs[0].request.reply.family == "simtom.perspective"
    answer_prompt = prompt_text(b.jobs[1])
    assert "You are Aiden." in answer_prompt and (
        "Here is what Aiden knows:\nAiden entered the front_yard.\nAiden exited the front_yard."
        in answer_prompt
    )
    assert rec.extra["perspective"] == ["Aiden entered the front_yard.",
                                        "Aiden exited the front_yard."]
    assert rec.extra["perspective_status"] == "ok"
    assert rec.ledger.to_dict()["by_role"]["perspective"]["calls"] == 1


def test_simtom_keeps_a_malformed_perspective_as_it_came() -> None:
    rec, b = one("simtom", Script(other="Aiden saw it all."))
    assert rec.extra["perspective_status"] == "malformed" and rec.extra["perspective"] is None
    assert "Here is what Aiden knows:\nAiden saw it all." in prompt_text(b.jobs[1])


def test_simtom_without_a_character_reads_the_plain_story() -> None:
    item = narrative(question="Where is the grapefruit really?")
    rec, b = one("simtom", Script(), item)
    assert b.calls == 1 and rec.extra["perspective"] is None and rec.samples[0].view == "plain"


def test_perceptom_filters_the_story_to_what_the_target_perceived() -> None:
    s = Script(other="Answer: A")
    rec, b = one("perceptom", s)
    filtered = prompt_text(b.jobs[1])
    kept = "Aiden entered the front_yard. The grapefruit is in the green_bucket."
    assert f"{kept} Aiden exited the front_yard." in filtered
    assert "moved the grapefruit" not in filtered
    assert rec.samples[0].view == "filtered" and rec.extra["characters"] == ["Aiden"]


def test_perceptom_second_order_keeps_lines_both_perceived() -> None:
    item = narrative(question="Where does Aria think that Aiden searches for the grapefruit?")
    rec, b = one("perceptom", Script(), item)
    assert rec.extra["characters"] == ["Aria", "Aiden"]
    filtered = prompt_text(b.jobs[1])
    assert "that Aria and Aiden both perceived" in filtered
    assert (
        "Aria entered the front_yard" not in filtered and "Aiden exited the front_yard" in filtered
    )


def test_perceptom_falls_back_to_plain_on_malformed_perception() -> None:
    rec, b = one("perceptom", Script(perception="no idea"))
    assert rec.perception.status == "malformed" and rec.samples[0].view == "plain"
    assert "past scenes" not in prompt_text(b.jobs[1])


def test_perceptom_shares_the_readers_perception_call(tmp_path) -> None:
    inner = ScriptedBackend(Script())
    b = CachedBackend(inner, tmp_path)
    make_system("cogrsi", b).answer_batch([narrative()])
    rec = make_system("perceptom_sc6", b).answer_batch([narrative()])[0]
    assert rec.perception.from_cache
    usage = rec.ledger.to_dict()["by_role"]["perception"]
    assert (usage["calls"], usage["cached_calls"]) == (1, 1)
    assert inner.calls == 7 + 6  # the reader's seven, then PercepToM's six answers only


def test_simtom_sc_on_a_conversation() -> None:
    rec, b = one("simtom_sc6", Script(other="Answer: B"), conversation())
    assert "utterances that Kobe heard" in prompt_text(b.jobs[0])
    assert rec.ledger.total().calls == 7 and rec.answer == "B"


def test_question_characters() -> None:
    assert question_characters(narrative()) == ["Aiden"]
    assert question_characters(narrative(question="From Aria's perspective, where is it?")) == [
        "Aria"
    ]
    assert question_characters(narrative(question="Where is the grapefruit?")) == []
    assert question_characters(conversation(character=None), ["Kobe", "Richard", "Lina"]) == [
        "Kobe",
        "Richard",
    ]


def test_cost_table_reports_the_token_ratio_against_sc6() -> None:
    b = ScriptedBackend(Script(other="Answer: A"))
    systems = make_systems(b, SYSTEMS)
    recs = [r for s in systems.values() for r in s.answer_batch([narrative("q1"), narrative("q2")])]
    t = {row["system"]: row for row in cost_table(recs).iter_rows(named=True)}
    assert set(t) == set(SYSTEMS)
    assert t["sc6"]["token_ratio_vs_sc6"] == pytest.approx(1.0)
    assert t["cogrsi"]["calls_per_q"] == 7.0 and t["sc9"]["calls_per_q"] == 9.0
    assert t["cogrsi"]["token_ratio_vs_sc6"] == pytest.approx(
        t["cogrsi"]["tokens_per_q"] / t["sc6"]["tokens_per_q"]
    )
    assert t["sc9"]["token_ratio_vs_sc6"] == pytest.approx(1.5)


def test_unknown_system() -> None:
    with pytest.raises(ValueError, match="unknown system"):
        make_system("gepa", ScriptedBackend())
