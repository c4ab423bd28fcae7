"""Loaders on cuts of the releases' own files (tests/fixtures/bench_real, each with its
SOURCE.md and LICENSE): MMToM-QA and MuMA-ToM, whose data is otherwise only synthetic here.

The expected golds are read from the raw files by the release's own rule, not through the
loader: MMToM-QA's ``answer`` letter; MuMA-ToM's first character of the answer line
(``LIMP.py``), and its story from ``texts.json``, not the bytes-literal ``description``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cogrsi_lib import bench

from .conftest import perfect_reply

CUTS = Path(__file__).resolve().parents[1] / "fixtures" / "bench_real"


@pytest.fixture(scope="module")
def mmtom():
    folder = CUTS / "mmtom-qa"
    raw = [json.loads(line) for line in
           (folder / "Benchmark/questions.json").read_text(encoding="utf-8").splitlines()]
    return raw, bench.load("mmtom-qa", folder)


@pytest.fixture(scope="module")
def muma():
    folder = CUTS / "muma-tom"
    raw = json.loads((folder / "Files/questions.json").read_text(encoding="utf-8"))
    texts = json.loads((folder / "Files/texts.json").read_text(encoding="utf-8"))
    return raw, texts, bench.load("muma-tom", folder)


def test_mmtom_qa_release_lines_load_one_item_each_with_the_release_answer(mmtom):
    raw, items = mmtom
    assert len(items) == len(raw) == 42
    assert Counter(it.question_type for it in items) == {
        t: 6 for t in ("1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "2.4")}
    for rec, it in zip(raw, items, strict=True):
        assert it.gold == rec["answer"]
        assert [label for label, _ in it.options] == rec["answer_list"] == ["a", "b"]
        assert it.story_id == f"mmtom-qa/episode{rec['episode']}"
        # the one text input split in three: nothing of it is lost
        assert it.context.startswith("What's inside the apartment:")
        assert it.question in rec["question"] and "(a)" not in it.question
        assert all(text and text in rec["question"] for _, text in it.options)


def test_muma_tom_release_episodes_load_with_the_limp_gold_and_the_clean_text(muma):
    raw, texts, items = muma
    assert len(items) == 4 * len(raw) == 48
    assert len({it.story_id for it in items}) == 12
    by_id = {it.id: it for it in items}
    for episode, rec in raw.items():
        for number, answer in rec["answers"].items():
            it = by_id[f"muma-tom/{episode}/{number}"]
            assert it.gold == answer[0]  # LIMP.py: the answer line's first character
            assert it.question_type == rec["labels"][number]
            assert [label for label, _ in it.options] == ["A", "B", "C"]
            assert dict(it.options)[it.gold] == answer.strip()[3:]
            assert it.context == texts[episode]
    # the release's traps are in the cut: answers ending in a newline, and a description
    # that is no Python literal (its story comes from texts.json all the same)
    assert any(a.endswith("\n") for rec in raw.values() for a in rec["answers"].values())
    assert raw["640"]["description"].startswith("b'") and by_id["muma-tom/640/1"].context


@pytest.mark.parametrize("name", ["mmtom-qa", "muma-tom"])
def test_official_scoring_credits_the_gold_and_only_the_gold(name, mmtom, muma):
    items = mmtom[1] if name == "mmtom-qa" else muma[2]
    b = bench.get(name)
    assert all(b.judge(it, perfect_reply(it)).correct for it in items)
    wrong = [next(label for label, _ in it.options if label != it.gold) for it in items]
    assert not any(b.judge(it, perfect_reply(it).replace(it.gold, w, 1)).correct
                   for it, w in zip(items, wrong, strict=True))
