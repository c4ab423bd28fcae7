"""The snapshot and the read-only views translated code sees agree with the oracle."""

from __future__ import annotations

import json
import re
import sys
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.audit.api import EventView, QuestionView, WorldView, answer_string, build_views
from cogrsi_lib.audit.snapshot import build_sample
from cogrsi_lib.oracle import OracleState, World


def _views(sample):
    return build_views(json.loads(sample.payload))


def test_views_replay_the_oracle_state_step_by_step(sample):
    worlds, _ = _views(sample)
    for world, view in zip(sample.worlds[:150], worlds, strict=False):
        state = OracleState.initial(world, 1)
        assert view.initial_location == world.location
        assert dict(view.initial_properties) == dict(world.properties)
        for i, e in enumerate(world.events):
            assert view.present_at(i) == frozenset(state.present)
            assert view.asleep_at(i) == frozenset(state.asleep)
            assert view.location_at(i) == state.location
            for p, v in state.properties.items():
                assert view.value_at(p, i) == v
            ev = view.events[i]
            assert (ev.index, ev.type, ev.actor) == (i, e.type, e.actor)
            before = state.location
            who = state.apply(e, i)
            assert ev.perceivers == who
            if e.type == "move":
                assert (ev.origin, ev.to) == (before, e.to)
            if e.type == "whisper":
                assert ev.truthful == (e.location == before)
                assert (ev.listener, ev.location) == (e.listener, e.location)
            if e.type == "peek":
                assert ev.container == before
            if e.type in ("enter", "wake"):
                assert ev.late_view == ((i, "view") in state.observation_log[e.actor])
        n = len(world.events)
        assert view.present_at(n) == view.present_at(-1) == frozenset(state.present)
        assert view.location_at(n) == state.location


def test_every_event_type_and_late_view_occur_in_the_sample(sample):
    worlds, _ = _views(sample)
    events = [e for w in worlds for e in w.events]
    assert {e.type for e in events} == {
        "leave", "enter", "sleep", "wake", "move", "whisper", "peek", "change"}
    assert any(e.late_view for e in events)
    assert any(e.truthful is False for e in events) and any(e.truthful for e in events)


def test_questions_follow_the_gold_table_and_carry_no_answer(sample):
    snapshot = json.loads(sample.payload)
    assert len(snapshot["questions"]) == sample.n_questions
    _, questions = build_views(snapshot)
    for (wid, q), row in zip(questions[:3000], sample.questions.iter_rows(named=True),
                             strict=False):
        assert wid == row["world_id"]
        assert (q.kind, list(q.chain), q.depth, q.text) == (
            row["kind"], row["chain"], row["depth"], row["question"])
        assert q.property == row["property"]
        assert row["gold"] in [str(c) for c in q.candidates]
    text = sample.payload.decode()
    for leak in ('"gold"', '"answer"', '"belief', '"reality"', '"via"', '"false_belief"'):
        assert leak not in text


def test_views_are_read_only(tiny_sample):
    worlds, questions = _views(tiny_sample)
    w, (_, q) = worlds[0], questions[0]
    with pytest.raises(AttributeError):
        w.agents = ()
    with pytest.raises(AttributeError):
        q.chain = ("x",)
    with pytest.raises(AttributeError):
        w.events[0].perceivers = frozenset()
    with pytest.raises(TypeError):
        w.initial_properties["x"] = 1  # a mapping proxy
    assert isinstance(w.present_at(0), frozenset)


def test_steps_are_checked(tiny_sample):
    w = _views(tiny_sample)[0][0]
    n = len(w.events)
    assert w.location_at(-n - 1) == w.location_at(0)
    with pytest.raises(IndexError):
        w.present_at(n + 1)
    with pytest.raises(IndexError):
        w.present_at(-n - 2)
    with pytest.raises(TypeError):
        w.present_at(True)


def test_world_without_events_and_asleep_start():
    world = World(agents=("Anne", "Bob"), containers=("box", "tray"), object="ring",
                  location="box", present=frozenset({"Anne", "Bob"}),
                  asleep=frozenset({"Bob"}), properties=(("color", "red"),))
    sample = build_sample([world], max_depth=2)
    (w,), questions = _views(sample)
    assert w.events == () and w.asleep_at(0) == frozenset({"Bob"})
    assert w.location_at(-1) == "box"
    kinds = {(q.kind, q.depth) for _, q in questions}
    assert ("property", 2) in kinds and ("location", 0) in kinds
    prop_q = next(q for _, q in questions if q.kind == "property")
    assert prop_q.candidates == ("red",)


def test_api_md_documents_every_public_name():
    doc = resources.files("cogrsi_lib.audit").joinpath("API.md").read_text(encoding="utf-8")
    world_names = [n for n in WorldView.__slots__ if not n.startswith("_")]
    world_names += [n for n in vars(WorldView) if not n.startswith("_")
                    and callable(getattr(WorldView, n))]
    for name in world_names:
        assert re.search(rf"`world\.{name}\b", doc), name
    for name in EventView.__slots__:
        assert re.search(rf"`e\.{name}\b", doc), name
    for name in QuestionView.__slots__:
        assert re.search(rf"`q\.{name}\b", doc), name


def _decimal(n: int) -> str:
    """``str(n)`` without the interpreter's cap on digits."""
    cap = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(n)
    finally:
        sys.set_int_max_str_digits(cap)


_NEAR_CAP = st.integers(10 ** 4290, 10 ** 4310)


@settings(max_examples=200)
@given(st.integers() | _NEAR_CAP | _NEAR_CAP.map(lambda n: -n) | st.booleans() | st.floats()
       | st.text())
def test_answer_string_gives_the_scalars_text_or_none_and_never_raises(value):
    text = answer_string(value)
    if isinstance(value, int) and not isinstance(value, bool):
        digits = _decimal(value)
        too_long = len(digits.lstrip("-")) > sys.get_int_max_str_digits()
        assert text == (None if too_long else digits)
    else:
        assert text == str(value) and type(text) is str


def test_answer_string_refuses_ints_too_long_to_print():
    assert answer_string(10 ** 5000) is None
    assert answer_string(-(10 ** 5000)) is None
    assert answer_string(10 ** 4000) == str(10 ** 4000)


def test_answer_string_ignores_what_a_subclass_overrides():
    class Loud(str):
        def __str__(self):
            raise RuntimeError("no")

    class Big(int):
        def __repr__(self):
            raise RuntimeError("no")

        __str__ = __repr__

    assert type(answer_string(Loud("box"))) is str and answer_string(Loud("box")) == "box"
    assert answer_string(Big(7)) == "7"
    assert answer_string(True) == "True" and answer_string(None) is None
