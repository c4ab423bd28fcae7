"""Story lines to observations: templates, Hi-ToM grammar, witnesses, unparsed lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.harness.extract import (
    TEMPLATE_SETS,
    ExtractionError,
    extract,
    parse_line,
    parse_question,
    presence_witnesses,
)
from cogrsi_lib.oracle.render import render, render_question
from cogrsi_lib.oracle.sampler import SamplerConfig, all_questions, sample_worlds
from cogrsi_lib.oracle.world import Event as OracleEvent
from cogrsi_lib.oracle.world import World

HITOM = Path(__file__).resolve().parents[2] / "data" / "benchmarks" / "hi-tom"
KIND = {"whisper": "tell"}
CFG = SamplerConfig(max_agents=4, p_open_container=0.5, max_events=12)


def _check_event_line(text: str, e: OracleEvent, container: str) -> None:
    ev = parse_line(text)
    assert ev is not None, text
    assert ev.kind == KIND.get(e.type, e.type), text
    assert ev.agent == e.actor
    if e.type == "move":
        assert ev.location == e.to
    elif e.type == "whisper":
        assert (ev.listener, ev.location) == (e.listener, e.location)
    elif e.type == "change":
        assert (ev.property, ev.value, ev.visible) == (e.property, e.value, e.visible)
    elif e.type == "peek":
        assert ev.container == container


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), style=st.integers(0, len(TEMPLATE_SETS) - 1))
def test_every_template_line_parses_to_its_event(seed: int, style: int) -> None:
    templates = TEMPLATE_SETS[style]
    for world in sample_worlds(3, seed, CFG):
        story = render(world, templates)
        where = world.location
        for line in story.lines:
            if line.event is None:
                ev = parse_line(line.text)
                assert ev is not None and ev.kind in (
                    "present",
                    "located",
                    "open",
                    "has_property",
                    "asleep",
                    "known_liar",
                ), line.text
                continue
            e = world.events[line.event]
            _check_event_line(line.text, e, where)
            ev = parse_line(line.text)
            assert ev is not None
            assert (ev.hidden_observers, ev.missed_by) == (e.hidden_observers, e.missed_by)
            if e.type == "move":
                where = e.to


def test_opening_lines_of_every_style() -> None:
    world = World(
        agents=("Anne", "Bob"),
        containers=("basket", "box"),
        object="marble",
        location="box",
        present=frozenset({"Anne", "Bob"}),
        asleep=frozenset({"Bob"}),
        properties=(("color", "red"),),
        open_containers=frozenset({"basket"}),
        room="kitchen",
    )
    for templates in TEMPLATE_SETS:
        kinds = [parse_line(line.text) for line in render(world, templates).lines]
        assert [k.kind for k in kinds] == [
            "present",
            "present",
            "asleep",
            "located",
            "open",
            "has_property",
        ], templates.style
        assert kinds[3].container == "box" and kinds[4].container == "basket"
        assert (kinds[5].property, kinds[5].value, kinds[5].visible) == ("color", "red", True)
        assert kinds[2].agents == ("Bob",)


@pytest.mark.parametrize(
    ("line", "kind", "fields"),
    [
        (
            "1 Sophia, Owen, Aiden, Ella and Amelia entered the closet.",
            "enter",
            {"agents": ("Sophia", "Owen", "Aiden", "Ella", "Amelia"), "room": "closet"},
        ),
        (
            "15 Amelia, Aiden and Ella entered the waiting_room.",
            "enter",
            {"agents": ("Amelia", "Aiden", "Ella"), "room": "waiting_room"},
        ),
        (
            "2 The persimmon is in the blue_pantry.",
            "located",
            {"object": "persimmon", "container": "blue_pantry"},
        ),
        ("4 Sophia exited the closet.", "leave", {"agents": ("Sophia",), "room": "closet"}),
        (
            "7 Aiden moved the persimmon to the green_treasure_chest.",
            "move",
            {"agents": ("Aiden",), "location": "green_treasure_chest"},
        ),
        ("3 Sophia made no movements and stayed in the closet for 1 minute.", "noise", {}),
        ("13 Aiden saw a monkey.", "noise", {}),
        ("25 Sophia likes the red_drawer.", "noise", {}),
        ("5 Noah lost his gloves.", "noise", {}),
        (
            "26 Ella publicly claimed that persimmon is in the blue_bottle.",
            "public_tell",
            {"agents": ("Ella",), "object": "persimmon", "location": "blue_bottle"},
        ),
        (
            "27 Amelia privately told Ella that the persimmon is in the red_box.",
            "tell",
            {"agents": ("Amelia",), "listener": "Ella", "location": "red_box"},
        ),
        ("Jack is in the hall.", "present", {"agents": ("Jack",), "room": "hall"}),
    ],
)
def test_hitom_and_tomi_grammar(line: str, kind: str, fields: dict) -> None:
    ev = parse_line(line)
    assert ev is not None and ev.kind == kind
    for name, value in fields.items():
        assert getattr(ev, name) == value


@pytest.mark.skipif(not (HITOM / "Hi-ToM_data.json").is_file(), reason="no Hi-ToM sample")
def test_every_hitom_sample_line_parses() -> None:
    from cogrsi_lib.bench import hitom

    items = hitom.load(HITOM)
    stories = {it.story_id: it.context for it in items}
    for context in stories.values():
        ex = extract(context)
        assert ex.unparsed == (), [o.text for o in ex.unparsed]
    for it in items:
        parsed = parse_question(it.question)
        assert parsed is not None, it.question
        assert len(parsed[0]) == int(it.question_type.removeprefix("order_"))


@pytest.mark.parametrize(
    "line",
    [
        "Anne juggled the marble.",  # no such template
        "The marble is sparkly.",  # a value outside the property lexicon
        "Anne painted the marble hot.",  # painted names color, but hot is a temperature
        "moved the marble to the box.",  # no actor
        "",
    ],
)
def test_unknown_lines_are_not_guessed(line: str) -> None:
    assert parse_line(line) is None


def test_unparsed_lines_are_kept_and_counted() -> None:
    lines = [
        "Anne is in the kitchen.",
        "The marble is in the box.",
        "Anne juggled.",
        "Anne moved the marble to the basket.",
        "Something odd happened.",
    ]
    ex = extract(lines)
    assert [o.index for o in ex.unparsed] == [2, 4]
    assert [o.text for o in ex.unparsed] == [lines[2], lines[4]]
    counts = ex.counts()
    assert counts["lines"] == 5 and counts["unparsed"] == 2 and counts["move"] == 1


def test_given_witnesses_must_fit_the_story() -> None:
    with pytest.raises(ExtractionError, match="2 witness entries for 3 lines"):
        extract(["a.", "b.", "c."], [["Anne"], ["Bob"]])
    with pytest.raises(ExtractionError, match="witness entry 1"):
        extract(["a.", "b."], [["Anne"], [""]])
    with pytest.raises(ExtractionError, match="unknown witness source"):
        extract(["a."], "oracle")


def test_presence_excludes_asleep_agents_when_the_text_says_so() -> None:
    lines = [
        "Anne is in the kitchen.",
        "Bob is in the kitchen.",
        "Carl is in the kitchen.",
        "The marble is in the box.",
        "Anne fell asleep.",
        "Bob moved the marble to the tray.",
        "Carl exited the kitchen.",
        "Bob moved the marble to the box.",
        "Anne woke up.",
        "Dana entered the kitchen.",
    ]
    events = [parse_line(t) for t in lines]
    w = presence_witnesses(events)
    assert w[3] == {"Anne", "Bob", "Carl"}
    assert w[5] == {"Bob", "Carl"}  # Anne is asleep
    assert w[7] == {"Bob"}  # Carl has left
    assert w[8] == {"Anne", "Bob"}  # the waking agent perceives her waking
    assert w[9] == {"Anne", "Bob", "Dana"}
    assert presence_witnesses(events, respect_sleep=False)[5] == {"Anne", "Bob", "Carl"}


def test_presence_follows_hitom_rooms() -> None:
    lines = [
        "A, B and C entered the closet.",
        "The pear is in the box.",
        "A exited the closet.",
        "B moved the pear to the tray.",
        "A, B and C entered the waiting_room.",
        "B and C entered the closet.",
        "C moved the pear to the jar.",
        "A privately told B that the pear is in the box.",
    ]
    w = presence_witnesses([parse_line(t) for t in lines])
    assert w[1] == {"A", "B", "C"} and w[3] == {"B", "C"}
    assert w[6] == {"B", "C"}  # A waits in the waiting room
    assert {"A", "B"} <= w[7] and "C" not in w[7]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_parse_question_reads_the_oracle_questions(seed: int) -> None:
    for world in sample_worlds(2, seed, CFG):
        for q in all_questions(world, 4):
            parsed = parse_question(render_question(world, q))
            attr = "location" if q.kind == "location" else q.property
            assert parsed == (q.chain, world.object, attr)


def test_parse_question_refuses_other_questions() -> None:
    assert parse_question("Who moved the marble?") is None
    assert parse_question("Where does the cat think the marble is?") is None
    assert parse_question("Where does Anne really think the marble is?") == (
        ("Anne",),
        "marble",
        "location",
    )
