"""The hand-audited golden set (plan §5.8, Gate A): the oracle must reproduce every item:
the plan's 100 (20 per group R0-R3 and mixed), 20 more for the rules of semantics v2 and 10
for the order of sightings within one event (``testimony: fresher_access``).

Each item of ``golden/golden.jsonl`` holds a world, one question, the expected answer
and a one-line justification, all derived by hand (see ``golden/build_golden.py``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.world import Question, World

from . import reference as ref

GOLDEN = Path(__file__).with_name("golden") / "golden.jsonl"
GROUPS = ("R0", "R1", "R2", "R3", "mixed", "v2", "sightings")
SIZES = dict.fromkeys(GROUPS[:-1], 20) | {"sightings": 10}


def load() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line]


ITEMS = load()


def test_golden_group_sizes() -> None:
    """20 per group of the plan and of v2; 10 sightings items."""
    assert len(ITEMS) == 130
    assert Counter(item["group"] for item in ITEMS) == SIZES
    assert len({item["id"] for item in ITEMS}) == 130


def test_golden_depths_match_groups() -> None:
    """R0-R3 items ask at their depth; the mixed group includes R4 chains."""
    for item in ITEMS:
        depth = len(item["question"]["chain"])
        if item["group"] not in ("mixed", "v2", "sightings"):
            assert depth == int(item["group"][1]), item["id"]
    assert any(len(i["question"]["chain"]) == 4 for i in ITEMS if i["group"] == "mixed")


def test_every_item_has_a_justification() -> None:
    for item in ITEMS:
        why = item["justification"]
        assert isinstance(why, str) and why.strip(), item["id"]
        assert "\n" not in why


@pytest.mark.parametrize("item", ITEMS, ids=[i["id"] for i in ITEMS])
def test_oracle_reproduces_golden_item(item: dict) -> None:
    world = World.from_dict(item["world"])
    (a,) = answer_all(world, (Question.from_dict(item["question"], 0),))
    expected = item["expected"]
    assert type(a.value) is type(expected) and a.value == expected, item["justification"]
    assert a.known == (expected is not None)


@pytest.mark.parametrize("item", ITEMS, ids=[i["id"] for i in ITEMS])
def test_reference_reproduces_golden_item(item: dict) -> None:
    world = World.from_dict(item["world"])
    r = ref.ref_answer(world, Question.from_dict(item["question"], 0))
    assert ref.same_value(r.value, item["expected"]), item["justification"]


def test_golden_worlds_through_the_cli_shape() -> None:
    """Each item, as ``cogrsi oracle answer`` input (world + questions), parses and answers."""
    for item in ITEMS:
        raw = dict(item["world"], questions=[item["question"]])
        assert [a.value for a in answer_all(World.from_dict(raw))] == [item["expected"]]
