"""The gate and evaluation splits share no name, place, object, container or template
(CogRSI §3, App. C "Counterfactual pairs")."""

from __future__ import annotations

import re

import pytest

from cogrsi_lib.oracle import World
from cogrsi_lib.pairs import EVAL, GATE, build_splits
from cogrsi_lib.pairs.lexicon import words_in


@pytest.fixture(scope="module")
def full():
    return build_splits(gate_seed=11, eval_seed=23)


@pytest.mark.parametrize("field", ["names", "rooms", "chats", "places", "objects", "containers"])
def test_lists_are_disjoint(field):
    assert not set(getattr(GATE, field)) & set(getattr(EVAL, field))
    assert not {w.lower() for w in getattr(GATE, field)} & {w.lower() for w in getattr(EVAL, field)}


def test_words_and_templates_are_disjoint():
    assert not GATE.words() & EVAL.words()
    assert not GATE.template_strings() & EVAL.template_strings()
    # the templates of one split do not even use the other split's words
    for lex, other in ((GATE, EVAL), (EVAL, GATE)):
        for t in lex.template_strings():
            assert not words_in(t) & other.words(), t


@pytest.mark.parametrize("lex", [GATE, EVAL], ids=["gate", "eval"])
def test_each_entry_is_one_word_used_once(lex):
    entries = lex.names + lex.places + lex.objects + lex.containers
    assert all(re.fullmatch(r"[A-Za-z]+", w) for w in entries)
    assert len({w.lower() for w in entries}) == len(entries)
    assert len(lex.names) >= 3 and len(lex.containers) >= 3


def test_no_word_of_one_split_appears_in_the_other(full):
    for split, other in (("gate", EVAL), ("eval", GATE)):
        df = full[split]
        text = "\n".join(df["story"].to_list() + df["question"].to_list())
        leaked = words_in(text) & other.words()
        assert not leaked, f"{split} stories use {other.split} words {sorted(leaked)}"


def test_each_split_draws_from_its_own_lexicon(full):
    for split, lex in (("gate", GATE), ("eval", EVAL)):
        df = full[split]
        assert set(df["target"]) <= set(lex.names)
        for options in df["options"].to_list():
            assert set(options) <= set(lex.containers)
        for form, world_json in df.select(["form", "world_json"]).iter_rows():
            w = World.from_json(world_json)
            assert w.room in (lex.rooms if form == "narrative" else lex.chats)
            assert set(w.agents) <= set(lex.names) and w.object in lex.objects
