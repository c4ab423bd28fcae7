"""Failure classification and the report tables computed from the records (PDDL-Mind §4)."""

from __future__ import annotations

import polars as pl
import pytest
from pddl_helpers import acts, kitchen

from cogrsi_lib.oracle.sampler import SamplerConfig, sample_worlds
from cogrsi_lib.pddl import report
from cogrsi_lib.pddl.diagnosis import classify, compare_traces, project
from cogrsi_lib.pddl.examples import oracle_examples
from cogrsi_lib.pddl.executor import execute
from cogrsi_lib.pddl.ladder import VARIANTS, make_backend, run_ladder


def test_heard_facts_are_compared_by_what_the_utterance_says() -> None:
    a = project({("heard", "sally", "u1"), ("says", "u1", "marble", "box"), ("private", "u1")})
    b = project({("heard", "sally", "w7"), ("says", "w7", "marble", "box")})
    assert a == b == {("heard", "sally", "marble", "box")}


def test_compare_traces_finds_the_first_differing_state() -> None:
    gold = execute(kitchen(), acts("open sally basket kitchen",
                                   "grab sally marble basket kitchen",
                                   "drop sally marble tray kitchen"))
    same = execute(kitchen(), acts("move anne kitchen kitchen",  # rejected: no state change
                                   "open sally basket kitchen",
                                   "grab sally marble basket kitchen",
                                   "drop sally marble tray kitchen"))
    assert compare_traces(same, gold) == (True, "")
    wrong = execute(kitchen(), acts("drop sally marble tray kitchen"))
    ok, diff = compare_traces(wrong, gold)
    assert not ok and diff == "1 distinct states, gold has 3"  # opening shows nothing new
    other = execute(kitchen(), acts("open sally basket kitchen",
                                    "grab sally marble basket kitchen",
                                    "open sally box kitchen",
                                    "drop sally marble box kitchen"))
    ok, diff = compare_traces(other, gold)
    assert not ok and diff.startswith("state 2: missing (in marble tray)")


@pytest.mark.parametrize("args,expected", [
    ((True, True, False, True, 0), "none"),
    ((False, False, False, True, 0), "answer format"),
    ((False, True, True, False, 0), "parsing/state"),
    ((False, True, False, True, 0), "reasoning"),
    ((False, True, False, False, 0), "parsing/state"),
    ((False, True, False, None, 0), "unverified"),
    ((False, True, False, None, 2), "parsing/state"),
])
def test_classify(args, expected) -> None:
    assert classify(*args) == expected


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    exs = oracle_examples(10, seed=5, questions_per_story=2)
    return run_ladder(make_backend("scripted", exs), exs)


def test_the_ladder_table_is_computed_from_the_records(records) -> None:
    table = report.ladder_table(records)
    assert table["variant"].to_list() == list(VARIANTS)
    for row in table.iter_rows(named=True):
        mine = records.filter(pl.col("system") == row["variant"])
        assert row["n"] == mine.height
        assert row["accuracy"] == pytest.approx(mine["score"].mean())
        assert row["calls_per_example"] == 3.0
        assert row["trace_correct"] == pytest.approx(mine["trace_correct"].cast(float).mean())


def test_failure_shares_add_up_and_count_the_wrong_answers(records) -> None:
    table = report.failure_table(records)
    for (variant,), part in table.group_by(["variant"]):
        assert part["share"].sum() == pytest.approx(1.0)
        wrong = records.filter((pl.col("system") == variant) & ~pl.col("correct")).height
        assert part["n"].sum() == wrong
    assert set(table["failure"]) <= {"parsing/state", "reasoning", "answer format",
                                     "unverified"}


def test_category_table_covers_every_record(records) -> None:
    table = report.category_table(records)
    assert table["n"].sum() == records.height


def test_cross_check_table_is_all_zero_on_sampled_worlds() -> None:
    worlds = list(sample_worlds(15, 2, SamplerConfig(max_events=12, p_hidden_observer=0.0,
                                                     p_missed=0.0)))
    table = report.cross_check_table(worlds)
    assert table.height == 15 and table["mismatches"].sum() == 0


def test_the_chart_is_built(tmp_path, records) -> None:
    from cogrsi_lib.reports import save_chart

    paths = save_chart(report.ladder_chart(report.ladder_table(records)), tmp_path / "ladder")
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths)


def test_a_focused_comparison_ignores_mistakes_about_others() -> None:
    """Gold: Sally takes the marble out and puts it in the tray while Anne is away. A trace that
    forgets Anne left is wrong for Anne's belief and right for Sally's."""
    from cogrsi_lib.pddl.diagnosis import Focus

    gold = execute(kitchen(), acts("move anne kitchen outside", "open sally basket kitchen",
                                   "grab sally marble basket kitchen",
                                   "drop sally marble tray kitchen"))
    anne_stays = execute(kitchen(), acts("open sally basket kitchen",
                                         "grab sally marble basket kitchen",
                                         "drop sally marble tray kitchen"))
    assert not compare_traces(anne_stays, gold)[0]
    assert not compare_traces(anne_stays, gold, Focus("marble", frozenset({"anne"})))[0]
    assert compare_traces(anne_stays, gold, Focus("marble", frozenset({"sally"}))) == (True, "")
    assert compare_traces(anne_stays, gold, Focus("marble")) == (True, "")  # where it is


def test_only_rejections_about_the_question_count() -> None:
    from cogrsi_lib.pddl.diagnosis import relevant_rejections

    tr = execute(kitchen(), acts("grab bob marble basket kitchen",       # bob is asleep
                                 "drop anne box_key box kitchen",         # not an object
                                 "move sally kitchen kitchen"))           # from = to
    assert len(tr.rejected) == 3
    about_bob = relevant_rejections(tr.rejected, "Where does Bob think the ring is?")
    assert [r.index for r in about_bob] == [0]
    about_key = relevant_rejections(tr.rejected, "Who knows where the key is? a) Anne b) nobody")
    assert [r.index for r in about_key] == [1]   # anne, and box_key split into box and key
    assert relevant_rejections(tr.rejected, "What colour is the ring?") == []
    assert classify(False, True, False, None, len(about_bob)) == "parsing/state"
    assert classify(False, True, False, None, 0) == "unverified"


def test_two_models_keep_their_rows_apart_in_every_table(records) -> None:
    """pddl_mind's ``models`` (cogrsi_lib/matrix.py): each table has a row per model."""
    exs = oracle_examples(10, seed=5, questions_per_story=2)
    other = run_ladder(make_backend({"backend": "fake", "model": "other",
                                     "reply": "Answer: A"}, exs), exs)
    both = pl.concat([records, other])
    assert set(both["model"]) == {"pddl-mind-script", "other"}
    for table in (report.ladder_table(both), report.category_table(both),
                  report.all_table(both, sources=("oracle",)), report.failure_table(both)):
        assert set(table["model"]) == {"pddl-mind-script", "other"}, table.columns
    ladder = report.ladder_table(both)
    mine = ladder.filter(pl.col("model") == "pddl-mind-script").drop("model")
    assert mine.equals(report.ladder_table(records).drop("model"))
    shares = report.failure_table(both).group_by("model", "source", "variant").agg(
        pl.col("share").sum())
    assert shares["share"].to_list() == pytest.approx([1.0] * shares.height)


def test_a_second_run_of_the_greedy_ladder_is_refused_and_models_are_a_list() -> None:
    from cogrsi_lib import stage_params
    from cogrsi_lib.stage_params import StageParamsError

    specs = [{"backend": "fake", "model": m} for m in ("a", "b")]
    p = stage_params.load("pddl_mind", {"models": specs})
    assert [m.model for m in p.model_list()] == ["a", "b"]
    assert stage_params.load("pddl_mind", {}).model_list()[0].backend == "scripted"
    with pytest.raises(StageParamsError, match="greedy"):
        stage_params.load("pddl_mind", {"models": specs, "runs": 2})
