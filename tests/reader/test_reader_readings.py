"""Replaying the reader's steps from its own records (Figures 8, 13b, 13c, 14), on records the
reader wrote for scripted samples, and accuracy by ATOMS construct (Table 25, Figure 13a)."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.baselines import make_system
from cogrsi_lib.baselines.by_construct import (
    MIN_QUESTIONS,
    construct_accuracy,
    construct_chart,
    construct_table,
)
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.reader import ReaderConfig, readings
from cogrsi_lib.reader import evaluate as ev

from .helpers import PERCEPTION_OK, as_reply, kind_of

CONFIG = ReaderConfig(sample_max_tokens=32, perception_max_tokens=64)
STORY = ("1 Aria entered the front_yard.\n2 Aiden entered the front_yard.\n"
         "3 The grapefruit is in the green_bucket.\n4 Aiden exited the front_yard.\n"
         "5 Aria moved the grapefruit to the blue_container.")
# question -> (ATOMS type, gold, annotated samples, plain samples, arbiter's pick (1 or 2))
CASES = {
    # readings conflict (A by 3 annotated, B by both plain); the rule picks the plain B: right
    "q-conflict": ("Belief: Location false beliefs", "B", "AAAB", "BB", 2),
    # five of six: never overturned; every step right
    "q-super": ("Belief: Content false beliefs", "A", "AAAA", "AC", 1),
    # close split A 3 : C 3, the arbiter picks C: fixed
    "q-fixed": ("Emotion: Hidden emotions", "C", "AACC", "AC", 2),
    # close split A 3 : C 2, the arbiter picks C: broken
    "q-broken": ("Emotion: Moral emotions", "A", "AACD", "AC", 2),
}


def _item(q: str) -> Item:
    qtype, gold, *_ = CASES[q]
    return Item(benchmark="tombench", id=q, story_id=f"s-{q}", context=STORY,
                question=f"{q}: where is the grapefruit?", question_type=qtype, gold=gold,
                options=(("A", "green_bucket"), ("B", "blue_container"), ("C", "yard"),
                         ("D", "bin")))


def _reply(job: Job) -> str:
    kind = kind_of(job)
    if kind == "perception":  # the story alone: the same for every question
        return as_reply(job, PERCEPTION_OK)
    text = prompt_text(job)
    q = next(k for k in CASES if f"{k}:" in text)
    _, _, ann, plain, pick = CASES[q]
    if kind == "arbitration":  # a neutral arbiter (no principle) always picks the first
        return as_reply(job, f"Answer: {pick if 'Principle:' in text else 1}")
    answers = ann if kind == "annotated" else plain + ann  # sc6 reads plain six times
    return as_reply(job, f"Answer: {answers[job.index]}")


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    backend = ScriptedBackend(_reply)
    systems = [make_system(n, backend, CONFIG)
               for n in ("cogrsi", "cogrsi_noarb", "sc6", "cogrsi_neutralarb")]
    return ev.evaluate(systems, None, {"tombench": [_item(q) for q in CASES]}).items


def _by_item(df: pl.DataFrame) -> dict[str, dict]:
    return {r["item_id"]: r for r in df.iter_rows(named=True)}


def test_each_step_is_replayed_from_the_records(records: pl.DataFrame) -> None:
    s = _by_item(readings.steps(records))
    assert set(s) == set(CASES)
    got = {q: tuple(s[q][k] for k in readings.STEPS) for q in CASES}
    assert got == {"q-conflict": ("A", "B", "A", "B", "B"),
                   "q-super": ("A", "A", "A", "A", "A"),
                   "q-fixed": ("A", "A", "A", "A", "C"),
                   "q-broken": ("A", "A", "A", "A", "C")}
    final = _by_item(records.filter(pl.col("system") == "cogrsi"))
    assert all(s[q]["final"] == final[q]["answer"] for q in CASES)
    assert [q for q in CASES if s[q]["conflict"]] == ["q-conflict"]
    assert {s[q]["construct"] for q in CASES} == {"belief", "emotion"}


def test_step_accuracy_and_gains(records: pl.DataFrame) -> None:
    t = readings.step_accuracy(readings.steps(records))
    acc = {(r["construct"], r["step"]): (r["accuracy"], r["gain"]) for r in t.iter_rows(named=True)}
    assert acc[("belief", "annotated")] == (50.0, None)
    assert acc[("belief", "plain")] == (100.0, None)
    assert acc[("belief", "vote")] == (50.0, -50.0)  # against the better reading
    assert acc[("belief", "conflict_rule")] == (100.0, 50.0)
    assert acc[("emotion", "final")] == (50.0, 0.0)  # one fixed, one broken
    assert acc[("all", "final")][0] == 75.0
    assert t.filter(pl.col("construct") == "all")["questions"].to_list() == [4] * 5


def test_conflicts_and_close_splits_are_counted(records: pl.DataFrame) -> None:
    t = readings.conflict_table(readings.steps(records))
    row = t.filter(pl.col("construct") == "all").row(0, named=True)
    assert (row["conflicts"], row["annotated_right"], row["plain_right"], row["vote_right"],
            row["rule_right"]) == (1, 0, 1, 0, 1)
    assert (row["close_splits"], row["fixed"], row["broken"]) == (2, 1, 1)
    emotion = t.filter(pl.col("construct") == "emotion").row(0, named=True)
    assert (emotion["conflicts"], emotion["close_splits"]) == (0, 2)
    chart = readings.conflict_chart(t).to_dict()
    assert chart["mark"]["type"] == "bar"


def test_sample_mix_ends_at_the_vote_only_design(records: pl.DataFrame) -> None:
    mix = readings.sample_mix(records)
    assert mix.height == 5 * 3 - 1 and set(mix["questions"]) == {4}
    cell = {(r["annotated"], r["plain"]): r["accuracy"] for r in mix.iter_rows(named=True)}
    noarb = records.filter(pl.col("system") == "cogrsi_noarb")["correct"].mean() * 100
    assert cell[(4, 2)] == pytest.approx(noarb)
    assert cell[(0, 2)] == 75.0  # the plain samples alone: B, A, A, A (a tie: the first)
    assert cell[(1, 0)] == 50.0  # the first annotated sample: A everywhere


def test_stricter_thresholds_keep_only_the_arbitrations_a_stricter_rule_calls(
        records: pl.DataFrame) -> None:
    t = readings.stricter_thresholds(records, supermajorities=(5, 4), close_margins=(1, 0))
    cell = {(r["supermajority"], r["close_margin"]): r for r in t.iter_rows(named=True)}
    reader = records.filter(pl.col("system") == "cogrsi")["correct"].mean() * 100
    assert cell[(5, 1)]["accuracy"] == pytest.approx(reader)
    assert cell[(5, 1)]["arbitrations"] == 3
    # a margin of 0 drops the broken split (3:2): its vote leader, right, stands
    assert (cell[(5, 0)]["arbitrations"], cell[(5, 0)]["accuracy"]) == (2, 100.0)
    # four of six never overturned: the conflict (3:3) and the fixed split (3:3) remain
    assert cell[(4, 1)]["arbitrations"] == 3


def _scored(diffs: dict[tuple[str, str], list[float]]) -> pl.DataFrame:
    """cogrsi scoring 1 and sc6 1 - d on each (benchmark, question type) item, two runs."""
    rows = []
    for (bench, qtype), ds in diffs.items():
        for run in (0, 1):
            for i, d in enumerate(ds):
                base = {"model": "m", "run": run, "benchmark": bench, "source": bench,
                        "item_id": f"{bench}/{qtype}/{i}", "story_id": f"s{i // 2}",
                        "question_type": qtype}
                rows += [base | {"system": "cogrsi", "score": 1.0},
                         base | {"system": "sc6", "score": 1.0 - d}]
    return pl.DataFrame(rows)


def test_construct_table_pools_and_centres_within_benchmarks() -> None:
    # hi-tom: belief questions all gained; tombench: belief and emotion gained nothing
    items = _scored({("hi-tom", "order_2"): [1.0] * 20,
                     ("tombench", "Belief: Location false beliefs"): [0.0] * 10,
                     ("tombench", "Emotion: Hidden emotions"): [0.0] * 10})
    t = construct_table(items, n_resamples=300)
    row = {r["construct"]: r for r in t.iter_rows(named=True)}
    assert list(row) == ["belief", "emotion"]  # ATOMS order
    assert row["belief"]["n"] == 60 and row["belief"]["benchmarks"] == 2
    assert row["belief"]["diff"] == pytest.approx(100 * 40 / 60)
    # within benchmark: hi-tom's gain is its own level, so nothing is left
    assert row["belief"]["within"] == pytest.approx(0.0)
    assert row["emotion"]["diff"] == pytest.approx(0.0)
    assert row["belief"]["reported"] and not row["emotion"]["reported"]
    assert row["emotion"]["n"] < MIN_QUESTIONS


def test_construct_accuracy_leaves_out_pair_records_and_charts_every_system() -> None:
    items = _scored({("tomi", "reality"): [1.0, 0.0]})
    pairs = items.head(2).with_columns(benchmark=pl.lit(None, pl.Utf8), source=pl.lit("pairs"))
    acc = construct_accuracy(pl.concat([items, pairs]))
    assert acc["construct"].to_list() == ["other", "other"]
    assert dict(zip(acc["system"], acc["score"], strict=True)) == {"cogrsi": 100.0, "sc6": 50.0}
    assert acc["questions"].to_list() == [4, 4]
    assert construct_chart(acc).to_dict()["mark"]["type"] == "bar"


def test_table7_is_the_reader_without_and_with_close_split_arbitration(
        records: pl.DataFrame) -> None:
    t = readings.close_split_table(readings.steps(records))
    row = {r["benchmark"]: r for r in t.iter_rows(named=True)}
    assert list(row) == ["tombench", "all"]
    assert (row["all"]["without"], row["all"]["with"], row["all"]["difference"]) == (
        75.0, 75.0, 0.0)  # one split fixed (wrong before), one broken (right before)
    assert (row["all"]["close_splits"], row["all"]["fixed"], row["all"]["broken"]) == (2, 1, 1)
    assert readings.close_split_table(pl.DataFrame()).height == 0


def test_construct_rows_come_in_atoms_order_with_all_last(records: pl.DataFrame) -> None:
    s = readings.steps(records)
    assert readings.conflict_table(s)["construct"].to_list() == ["belief", "emotion", "all"]
    steps = readings.step_accuracy(s)["construct"].unique(maintain_order=True).to_list()
    assert steps == ["belief", "emotion", "all"]


def test_table12_sets_the_rule_against_the_readings_and_a_neutral_arbiter(
        records: pl.DataFrame) -> None:
    neutral = _by_item(records.filter(pl.col("system") == "cogrsi_neutralarb"))
    reader = _by_item(records.filter(pl.col("system") == "cogrsi"))
    # the same samples (the reader's requests), another arbiter: on the conflict it sides
    # with the annotated A, where the rule chose the plain B
    assert all(neutral[q]["samples_json"] == reader[q]["samples_json"] for q in CASES)
    assert (neutral["q-conflict"]["answer"], reader["q-conflict"]["answer"]) == ("A", "B")
    t = readings.arbiter_table(records)
    row = t.filter(pl.col("benchmark") == "all").row(0, named=True)
    assert (row["conflicts"], row["rule_right"], row["plain_right"], row["annotated_right"],
            row["neutral_right"], row["unshared"]) == (1, 1, 1, 0, 0, 0)


def test_table12_leaves_out_conflicts_whose_samples_differ(records: pl.DataFrame) -> None:
    other = records.with_columns(
        samples_json=pl.when((pl.col("system") == "cogrsi_neutralarb")
                             & (pl.col("item_id") == "q-conflict"))
        .then(pl.lit("[]")).otherwise(pl.col("samples_json")))
    row = readings.arbiter_table(other).filter(pl.col("benchmark") == "all").row(0, named=True)
    assert (row["conflicts"], row["unshared"]) == (0, 1)


def test_table8_replays_the_designs_per_block(records: pl.DataFrame) -> None:
    t = readings.design_table({"A": records, "B": None, "C": records.head(0)})
    assert t["block"].unique().to_list() == ["A"]
    row = t.filter(pl.col("benchmark") == "all").row(0, named=True)
    # vote alone: A, A, A, A against golds B, A, C, A
    assert (row["vote_only"], row["without"], row["with"]) == (50.0, 75.0, 75.0)
    assert readings.design_table({"A": None}).height == 0
