"""Cohorts by story: one question per unused story, new passes, exact state (App. C.2)."""

from __future__ import annotations

import pytest

from cogrsi_lib.loops.cohorts import CohortSampler, PoolExhausted, schedule

from .helpers import pool


def test_one_question_per_story_and_no_question_twice():
    items = pool(n_stories=30, per_story=3)
    s = CohortSampler(items, seed=4)
    seen: set[str] = set()
    for _ in range(10):  # 10 x 9 = 90 = every question
        c = s.draw(9)
        assert len({it.story for it in c}) == 9
        ids = {it.item_id for it in c}
        assert not ids & seen
        seen |= ids
    assert len(seen) == 90
    with pytest.raises(PoolExhausted):
        s.draw(1)


def test_a_pass_uses_every_story_before_any_story_repeats():
    items = pool(n_stories=20, per_story=2)
    s = CohortSampler(items, seed=0)
    first = [it.story for _ in range(4) for it in s.draw(5)]
    assert sorted(first) == sorted({it.story for it in items})  # pass 1: each story once
    second = [it.story for _ in range(4) for it in s.draw(5)]
    assert sorted(second) == sorted(first) and second != first  # pass 2: reshuffled
    assert s.pass_no == 1


def test_cohort_straddling_passes_never_repeats_a_story():
    items = pool(n_stories=7, per_story=3)
    s = CohortSampler(items, seed=1)
    for _ in range(4):
        c = s.draw(5)
        assert len({it.story for it in c}) == 5


def test_a_cohort_larger_than_the_stories_left_is_refused():
    s = CohortSampler(pool(n_stories=4, per_story=5), seed=0)
    with pytest.raises(PoolExhausted):
        s.draw(5)


def test_restored_state_continues_exactly():
    items = pool(n_stories=25, per_story=3)
    a = CohortSampler(items, seed=9)
    for _ in range(5):
        a.draw(7)
    state = a.state()
    b = CohortSampler(items, seed=9)
    b.restore(state)
    for _ in range(5):
        assert [i.item_id for i in a.draw(7)] == [i.item_id for i in b.draw(7)]
    with pytest.raises(ValueError):
        CohortSampler(items, seed=8).restore(state)


def test_seeds_differ_and_schedule_is_deterministic():
    items = pool(n_stories=60, per_story=2)
    s0 = schedule(items, 0, rounds=2, discovery=6, trial=6, n_trials=3, final=20)
    s0b = schedule(items, 0, rounds=2, discovery=6, trial=6, n_trials=3, final=20)
    s1 = schedule(items, 1, rounds=2, discovery=6, trial=6, n_trials=3, final=20)
    ids = [i.item_id for i in s0["final"]]
    assert ids == [i.item_id for i in s0b["final"]]
    assert ids != [i.item_id for i in s1["final"]]
    used = {i.item_id for r in s0["rounds"] for c in [r["discovery"], *r["trials"]] for i in c}
    assert len(used) == 2 * 4 * 6 and not used & set(ids)  # the final cohort is unseen
