"""Rendered counterexamples, replayed to a reader with and without the rule."""

from __future__ import annotations

import pytest

from cogrsi_lib.audit import (
    RULES,
    Auditor,
    build_translators,
    question_item,
    reader_answerer,
    replay_counterexamples,
    replay_summary,
)
from cogrsi_lib.llm.fake import ScriptedBackend, json_reply
from cogrsi_lib.oracle.render import render
from cogrsi_lib.reader import GroundedReader, ReaderConfig

from .conftest import SCRIPTED


@pytest.fixture(scope="module")
def audits(sample):
    auditor = Auditor(sample, build_translators(SCRIPTED))
    return auditor.audit_many([(r.rule_id, r.text) for r in RULES])


def test_question_item_renders_the_story_with_oracle_gold(sample):
    for qid in (0, 5, 17, 123):
        row = sample.questions.row(qid, named=True)
        item = question_item(sample, qid)
        assert item is not None
        assert item.context == render(sample.worlds[row["world_id"]]).text
        assert item.question == row["question"]
        assert item.option_text(item.gold_key()) == row["gold"]
        assert item.story == f"audit-w{row['world_id']}"


def gold_unless_rule(items, principle):
    """A reader that is always right, except that any rule makes it pick another option."""
    out = []
    for it in items:
        gold = it.gold_key()
        out.append(gold if not principle else next(x for x in it.labels if x != gold))
    return out


def test_replay_counts_rules_that_turn_right_answers_wrong(audits, sample):
    records = replay_counterexamples(audits, sample, gold_unless_rule, max_per_rule=4,
                                     n_controls=3, seed=1)
    invalid = {a.rule_id for a in audits if a.verdict.verdict == "invalid"}
    assert set(records["rule_id"]) == invalid
    cx = records.filter(condition="counterexample")
    assert cx.height == 4 * len(invalid)
    assert records["turned_wrong"].all() and not records["turned_right"].any()
    by_rule = {a.rule_id: set(a.counterexamples.tolist()) for a in audits}
    for row in records.iter_rows(named=True):
        assert (row["question_id"] in by_rule[row["rule_id"]]) == (
            row["condition"] == "counterexample")
    summary = replay_summary(records)
    assert summary["condition"].to_list() == ["counterexample", "control"]
    assert summary["turned_wrong"].to_list() == [1.0, 1.0]
    assert summary["wrong_without_rule"].to_list() == [0.0, 0.0]


def test_replay_through_the_grounded_reader(audits, sample):
    """The real reader, on a scripted backend that answers A unless the prompt has a rule."""

    def respond(job):
        text = "\n".join(m.content for m in job.request.messages)
        return json_reply(job, {"reasoning": "", "answer": "B" if "Principle:" in text else "A"})

    reader = GroundedReader(ScriptedBackend(respond), None, ReaderConfig(use_perception=False))
    records = replay_counterexamples(audits, sample, reader_answerer(reader), max_per_rule=2,
                                     n_controls=2)
    assert records.height == 4 * sum(a.verdict.verdict == "invalid" for a in audits)
    assert set(records["without_rule"]) == {"A"}
    assert set(records["with_rule"]) <= {"A", "B"}
    right = records.filter(gold="A")
    assert right["turned_wrong"].all() == (set(right["with_rule"]) == {"B"})
