"""Lie conditions (plan §5.4): which whispers are lies, the condition a world is told under,
how the story tells it, and how the sampler assigns it."""

from __future__ import annotations

import random
from dataclasses import replace

from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.lies import KNOWN_LIAR, NO_LIE, REVEALED, UNLABELLED, lie_condition, lies
from cogrsi_lib.oracle.render import CHAT, NARRATIVE, render
from cogrsi_lib.oracle.sampler import SamplerConfig, sample_world, world_table
from cogrsi_lib.oracle.world import Question, World

from .helpers import make_world

# Anne saw the move to the box; she tells Sally "drawer" (a lie), then Sally tells Anne
# "drawer" (what Sally now believes: not a lie, though false).
STORY = ["Anne move box", "Anne whisper Sally drawer", "Sally whisper Anne drawer"]


def test_a_lie_is_a_claim_against_the_speakers_own_belief() -> None:
    w = make_world(STORY)
    assert lies(w) == [1]
    assert lie_condition(w) == UNLABELLED
    assert lie_condition(make_world(["Anne move box", "Anne whisper Sally box"])) == NO_LIE


def test_known_liar_changes_beliefs_and_revealed_changes_only_the_text() -> None:
    w = make_world(STORY)
    known = replace(w, known_liars=frozenset({"Anne"}))
    revealed = replace(w, reveal_lies=True)
    assert (lie_condition(known), lie_condition(revealed)) == (KNOWN_LIAR, REVEALED)
    q = (Question("location", ("Sally",)),)
    assert [a.value for a in answer_all(w, q)] == ["drawer"]
    assert [a.value for a in answer_all(known, q)] == ["box"]  # nobody takes Anne's word
    assert [a.value for a in answer_all(revealed, q)] == ["drawer"]  # no agent hears the reader
    for templates in (NARRATIVE, CHAT):
        text = render(revealed, templates).text
        lines = text.splitlines()
        assert "lying" in lines[-2] and "lying" not in lines[-1]  # only the lie is marked
        assert "lies" in render(known, templates).text
        assert "lying" not in render(w, templates).text


def test_the_sampler_assigns_every_lie_condition_and_records_it() -> None:
    rng = random.Random(3)
    worlds = [sample_world(rng, SamplerConfig()) for _ in range(300)]
    seen = {lie_condition(w) for w in worlds}
    assert seen == {NO_LIE, UNLABELLED, KNOWN_LIAR, REVEALED}
    table = world_table(worlds)
    assert table["lie_condition"].to_list() == [lie_condition(w) for w in worlds]
    assert set(table["testimony"]) == {"latest"} and set(table["opening"]) == {"common_ground"}
    for w in worlds:
        assert not w.known_liars or set(w.known_liars) <= {w.events[i].actor for i in lies(
            replace(w, known_liars=frozenset()))}


def test_zero_probabilities_sample_no_watched_event_and_no_condition() -> None:
    cfg = SamplerConfig(p_hidden_observer=0.0, p_missed=0.0, lie_conditions=())
    rng = random.Random(5)
    for _ in range(200):
        w = sample_world(rng, cfg)
        assert not any(e.hidden_observers or e.missed_by for e in w.events)
        assert not w.known_liars and not w.reveal_lies


def test_policies_round_trip_through_json() -> None:
    w = replace(make_world(STORY), testimony="fresher_access", opening="unknown",
                known_liars=frozenset({"Sally"}), reveal_lies=True)
    back = World.from_json(w.to_json())
    assert back == w and back.to_json() == w.to_json()

