"""The audit under each testimony policy: same worlds, gold differences, verdicts."""

from __future__ import annotations

from cogrsi_lib.audit import gold_difference_table, policy_samples, policy_verdict_table
from cogrsi_lib.audit.audit import AuditConfig
from cogrsi_lib.audit.handwritten import IN_ROOM, NOTHING_REACHED
from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.world import Question


def test_policy_samples_share_worlds_and_questions(sample) -> None:
    samples = policy_samples(sample)
    assert samples["latest"] is sample
    other = samples["fresher_access"]
    assert [w.testimony for w in other.worlds] == ["fresher_access"] * len(sample.worlds)
    assert [w.events for w in other.worlds] == [w.events for w in sample.worlds]
    assert other.questions.select("world_id", "kind", "chain").equals(
        sample.questions.select("world_id", "kind", "chain"))


def test_gold_differences_are_counted_question_by_question(sample) -> None:
    samples = policy_samples(sample)
    table = gold_difference_table(samples)
    assert table["questions"].sum() == sample.n_questions
    # recount one world by hand through the oracle
    a, b = samples["latest"], samples["fresher_access"]
    differ = sum(x != y for x, y in zip(a.gold, b.gold, strict=True))
    assert table["gold_differs"].sum() == differ > 0
    assert table.filter(table["depth"] == 0)["gold_differs"].sum() == 0  # reality is reality
    assert table.filter(table["kind"] == "property")["gold_differs"].sum() == 0
    row = next(r for r in a.questions.iter_rows(named=True)
               if r["gold"] != b.questions.row(r["question_id"], named=True)["gold"])
    world = b.worlds[row["world_id"]]
    q = Question(row["kind"], tuple(row["chain"]), row["property"])
    assert answer_all(world, (q,))[0].value == b.questions.row(row["question_id"],
                                                                named=True)["gold"]


def test_verdicts_under_each_policy(tiny_sample) -> None:
    table = policy_verdict_table(policy_samples(tiny_sample), AuditConfig(),
                                 [IN_ROOM, NOTHING_REACHED])
    assert table.columns == ["rule_id", "expected", "verdict_latest",
                             "shared_counterexamples_latest", "verdict_fresher_access",
                             "shared_counterexamples_fresher_access"]
    rows = {r["rule_id"]: r for r in table.iter_rows(named=True)}
    assert rows["nothing_reached"]["shared_counterexamples_latest"] == 0
    assert rows["nothing_reached"]["shared_counterexamples_fresher_access"] == 0
