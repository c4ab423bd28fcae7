"""ExploreToM's situation set: membership of hand-made worlds, and a sampler that stays inside."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.oracle import situations
from cogrsi_lib.oracle.sampler import SamplerConfig, sample_world, sample_worlds

from .helpers import fast, make_world
from .strategies import sampler_configs


def test_hand_made_worlds_inside_and_outside():
    inside = make_world(["Sally leave", "Anne move box", "Sally enter",
                         "Anne change color blue visible"], properties={"color": "red"})
    assert situations.inside(inside) and situations.outside_reasons(inside) == ()
    cases = {
        ("sleep", "wake"): ["Sally sleep", "Anne move box", "Sally wake"],
        ("whisper",): ["Anne whisper Sally box"],  # private telling (a lie: it is in basket)
        ("peek",): ["Sally peek"],
    }
    for reasons, events in cases.items():
        w = make_world(events)
        assert situations.outside_reasons(w) == reasons and not situations.inside(w)


def test_one_asymmetric_event_is_inside_two_are_not():
    w = make_world(["Anne move box", "Anne move drawer"], agents=("Anne", "Sally", "Bob"))
    once = replace(w, events=(replace(w.events[0], missed_by=("Sally",)), w.events[1]))
    assert situations.inside(once)
    twice = replace(once, events=(once.events[0],
                                  replace(w.events[1], missed_by=("Bob",))))
    assert situations.outside_reasons(twice) == ("asymmetric>1",)


@fast(60)
@given(cfg=sampler_configs(), seed=st.integers(0, 2**32 - 1))
def test_exploretom_sampler_stays_inside(cfg, seed):
    cfg = replace(cfg, p_hidden_observer=0.5, p_missed=0.5)
    w = sample_world(random.Random(seed), situations.exploretom_config(cfg))
    assert situations.inside(w), situations.outside_reasons(w)
    assert {e.type for e in w.events} <= set(situations.INSIDE_EVENTS)


def test_default_sampler_leaves_the_set_and_exploretom_keeps_asymmetric_events():
    oracle = list(sample_worlds(200, 5))
    assert sum(not situations.inside(w) for w in oracle) > 100
    cfg = situations.exploretom_config(replace(SamplerConfig(), p_hidden_observer=0.5,
                                               p_missed=0.5))
    ex = list(sample_worlds(200, 5, cfg))
    n_asym = [sum(situations.asymmetric(e) for e in w.events) for w in ex]
    assert max(n_asym) == 1 and sum(n_asym) > 20  # capped at one, not switched off


def test_no_cap_samples_the_same_worlds_as_before():
    a = list(sample_worlds(30, 9))
    b = list(sample_worlds(30, 9, replace(SamplerConfig(), max_asymmetric=None)))
    assert a == b


def test_unknown_situation_set_and_bad_cap_are_errors():
    with pytest.raises(ValueError, match="unknown situation set"):
        situations.sampler_config("tomi")
    with pytest.raises(ValueError, match="max_asymmetric"):
        SamplerConfig(max_asymmetric=-1)
    assert situations.sampler_config("oracle") == SamplerConfig()


@fast(60)
@given(cfg=sampler_configs(), seed=st.integers(0, 2**32 - 1))
def test_tomi_sampler_keeps_to_enter_leave_and_move_seen_by_exactly_who_is_there(cfg, seed):
    cfg = replace(cfg, p_hidden_observer=0.5, p_missed=0.5, p_open_container=0.5)
    w = sample_world(random.Random(seed), situations.tomi_config(cfg))
    assert {e.type for e in w.events} <= set(situations.TOMI_EVENTS)
    assert not any(situations.asymmetric(e) for e in w.events)
    assert not w.open_containers and situations.inside(w)


def test_tomi_worlds_still_hold_false_beliefs():
    from cogrsi_lib.oracle.answer import answer_all
    from cogrsi_lib.oracle.sampler import all_questions

    fb = 0
    for w in sample_worlds(100, 3, situations.tomi_config()):
        qs = tuple(q for q in all_questions(w, 1) if q.kind == "location" and q.depth == 1)
        fb += any(a.known and a.false_belief for a in answer_all(w, qs))
    assert fb > 20
