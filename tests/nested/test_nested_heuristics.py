"""Shortcut heuristics (plan §1.4, §7) on hand-made worlds, and last-mentioned against the
rendered text."""

from __future__ import annotations

import random
import re

from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.nested import HEURISTICS, baseline_table, baseline_wide, is_shortcut
from cogrsi_lib.nested.baselines import as_replies, best_shortcut
from cogrsi_lib.nested.heuristics import mentioned_locations
from cogrsi_lib.nested.items import NestedConfig
from cogrsi_lib.nested.score import score
from cogrsi_lib.oracle.render import render
from cogrsi_lib.oracle.sampler import sample_world

from .helpers import CLASSIC, fast, item, small_generation, world


def _last_named(text: str, containers: tuple[str, ...]) -> str:
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, containers)) + r")\b")
    return pattern.findall(text)[-1]


@fast(60)
@given(st.integers(0, 10**6), st.floats(0.0, 1.0))
def test_last_mentioned_matches_the_rendered_story(seed: int, p_open: float) -> None:
    cfg = NestedConfig(p_open_container=p_open).sampler()
    w = sample_world(random.Random(seed), cfg)
    text = render(w).text
    named = [m for line in text.splitlines()
             for m in re.findall(r"\b(" + "|".join(w.containers) + r")\b", line)]
    assert list(mentioned_locations(w)) == named
    assert mentioned_locations(w)[-1] == _last_named(text, w.containers)


def test_heuristics_on_the_classic_story() -> None:
    # Anne thinks Sally thinks Carla thinks: box; everyone else: drawer; Carla herself: box.
    w = world(*CLASSIC, "Bob whisper Sally tray")
    it = item(w, "Anne", "Sally", "Carla")
    assert it.gold == "box" and it.partition == "adversarial"
    got = {name: fn(it) for name, fn in HEURISTICS.items()}
    assert got == {
        "reality": "drawer", "last_mentioned": "tray", "first_order": "drawer",
        "prefix": "drawer", "most_recent_message": "tray", "initial_location": "basket",
        "exclusion": "basket",
    }


def test_most_recent_message_falls_back_to_reality_and_ignores_who_told() -> None:
    assert HEURISTICS["most_recent_message"](item(world(*CLASSIC), "Carla")) == "drawer"
    w = world("Anne whisper Sally tray", "Bob whisper Anne box", "Anne move drawer")
    assert HEURISTICS["most_recent_message"](item(w, "Sally")) == "box"
    assert HEURISTICS["last_mentioned"](item(w, "Sally")) == "drawer"


def test_last_mentioned_counts_peeks_and_the_opening() -> None:
    assert mentioned_locations(world(location="tray")) == ("tray",)
    w = world("Anne move box", "Sally peek", "Anne whisper Bob basket", "Carla peek")
    assert mentioned_locations(w) == ("basket", "box", "box", "basket", "box")


def test_prefix_and_first_order_by_depth() -> None:
    w = world(*CLASSIC)
    r0, r1 = item(w), item(w, "Carla")
    assert HEURISTICS["prefix"](r0) == HEURISTICS["first_order"](r0) == "drawer"
    assert HEURISTICS["prefix"](r1) == "drawer" and HEURISTICS["first_order"](r1) == "box"
    deep = item(w, "Anne", "Sally", "Carla")
    assert HEURISTICS["prefix"](deep) == "drawer"  # Anne thinks Sally thinks


def test_shortcut_flags() -> None:
    assert not is_shortcut("reality", 0) and is_shortcut("reality", 1)
    assert not is_shortcut("first_order", 1) and is_shortcut("first_order", 2)
    assert not is_shortcut("prefix", 0) and is_shortcut("prefix", 1)
    assert all(is_shortcut(h, 0) for h in ("last_mentioned", "most_recent_message"))


def test_tables_agree_with_scoring_the_heuristics_as_replies() -> None:
    items = small_generation(3, 4).items
    long = baseline_table(items)
    for name, fn in HEURISTICS.items():
        by_depth = score(items, as_replies(items, fn), baselines=long).by_depth
        for row in by_depth.iter_rows(named=True):
            cell = long.filter((long["heuristic"] == name) & (long["depth"] == row["depth"]))
            acc = dict(zip(cell["subset"], cell["accuracy"], strict=True))
            assert acc["all"] == row["accuracy"]
            if row["depth"] > 0:
                assert acc["adversarial"] == row["adversarial_accuracy"]
    wide = baseline_wide(long)
    assert wide.columns == ["heuristic", "R1", "R2", "R3", "R4"]
    assert wide.filter(wide["heuristic"] == "first_order")["R1"][0] is None
    best = best_shortcut(long, "adversarial")
    assert "exclusion" not in best["best_heuristic"].to_list()
    assert best["best_heuristic_accuracy"].max() < 0.5
