"""The epistemic store (plan §11): UNKNOWN, provenance, supersession, bounded depth."""

from __future__ import annotations

import pytest

from cogrsi_lib.scorecard.store import UNKNOWN, Entry, EpistemicStore, StoreError, attitude

TOPIC = "location(marble)"


def entry(chain, value="box", source=3, confidence=0.8, depends_on=()):
    return Entry(tuple(chain), TOPIC, value, confidence, source, tuple(depends_on))


def test_absence_is_unknown_never_a_fallback() -> None:
    store = EpistemicStore(n_sources=10)
    store.add(entry(["Anne"], "box"))
    assert store.lookup(["Anne"], TOPIC).value == "box"
    # nothing about Bob, about Anne's model of Bob, or another topic: UNKNOWN, not Anne's
    # belief, not a shallower chain
    assert store.lookup(["Bob"], TOPIC) is UNKNOWN
    assert store.lookup(["Anne", "Bob"], TOPIC) is UNKNOWN
    assert store.lookup(["Anne"], "colour(marble)") is UNKNOWN
    assert not UNKNOWN and repr(UNKNOWN) == "UNKNOWN"


def test_the_schema_fields() -> None:
    e = entry(["Anne", "Bob", "Carla"])
    assert (e.subject, e.about, e.depth) == ("Anne", ("Bob", "Carla"), 3)
    assert e.attitude == attitude(3) == "believes_that_believes_that_believes"
    assert e.proposition == "location(marble) = box"
    assert EpistemicStore().rows() == []
    store = EpistemicStore(n_sources=5, max_depth=3)
    store.add(e)
    (r,) = store.rows()
    assert {"subject", "about", "proposition", "attitude", "confidence", "source",
            "depth"} <= set(r)
    assert r["transient"] and store.table().height == 1


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (entry(["Anne"], source=None), "no source"),
        (entry(["Anne"], source=0), "does not exist"),
        (entry(["Anne"], source=11), "does not exist"),
        (entry(["Anne"], confidence=1.5), "outside"),
        (entry([]), "non-empty"),
        (entry(["Anne", "Anne"]), "twice in a row"),
        (entry(["A", "B", "C", "D", "E"]), "exceeds"),
        (entry(["Anne"], depends_on=[7]), "unknown dependencies"),
    ],
)
def test_refused_entries(bad: Entry, why: str) -> None:
    store = EpistemicStore(n_sources=10)
    with pytest.raises(StoreError, match=why):
        store.add(bad)
    assert len(store) == 0


def test_later_evidence_supersedes_and_invalidates_dependents() -> None:
    store = EpistemicStore(n_sources=10)
    old = store.add(entry(["Anne"], "box", source=2))
    dep = store.add(entry(["Bob", "Anne"], "box", source=4, depends_on=[old]))
    dep2 = store.add(entry(["Carla", "Bob"], "box", source=4, depends_on=[dep]))
    new = store.add(entry(["Anne"], "drawer", source=6))
    assert store.lookup(["Anne"], TOPIC).value == "drawer"
    assert store.status(old) == "superseded" and store.rows()[old]["superseded_by"] == new
    # the chain of dependents is invalidated, not kept as a stale belief
    assert store.status(dep) == store.status(dep2) == "invalidated"
    assert store.lookup(["Bob", "Anne"], TOPIC) is UNKNOWN
    assert store.lookup(["Carla", "Bob"], TOPIC) is UNKNOWN
    # older evidence written later does not win
    late = store.add(entry(["Anne"], "basket", source=1))
    assert store.status(late) == "superseded" and store.lookup(["Anne"], TOPIC).value == "drawer"
    # an entry that depends on a dead entry is dead on arrival
    doa = store.add(entry(["Bob", "Anne"], "box", source=7, depends_on=[old]))
    assert store.status(doa) == "invalidated"


def test_deep_entries_are_transient() -> None:
    store = EpistemicStore(n_sources=10, max_persistent_depth=2, max_depth=4)
    store.add(entry(["Anne"]))
    store.add(entry(["Anne", "Bob"]))
    deep = store.add(entry(["Anne", "Bob", "Carla"]))
    assert store.rows()[deep]["transient"]
    assert store.end_task() == 1
    assert store.lookup(["Anne", "Bob", "Carla"], TOPIC) is UNKNOWN
    assert store.lookup(["Anne", "Bob"], TOPIC).value == "box"
    with pytest.raises(ValueError):
        EpistemicStore(max_persistent_depth=5, max_depth=4)
