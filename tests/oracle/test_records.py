"""The oracle's records (cogrsi_lib/oracle/records.py): frozen dataclasses whose direct
``__init__`` must behave exactly as the dataclass's own."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from cogrsi_lib.oracle.records import record
from cogrsi_lib.oracle.world import Event, World


@record
class _Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()


@record(slots=False)
class _Checked:
    n: int
    label: str = "n"

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("negative")


def test_a_record_is_built_compared_hashed_and_shown_as_its_dataclass_would_be():
    reference = dataclasses.make_dataclass(
        "_Point", [("x", int), ("y", int, dataclasses.field(default=0)),
                   ("tags", tuple, dataclasses.field(default=()))], frozen=True, slots=True)
    for args, kwargs in [((1,), {}), ((1, 2), {}), ((), {"x": 3, "tags": ("a",)}),
                         ((1,), {"y": 5})]:
        mine, theirs = _Point(*args, **kwargs), reference(*args, **kwargs)
        assert dataclasses.astuple(mine) == dataclasses.astuple(theirs)
        assert repr(mine).split("(", 1)[1] == repr(theirs).split("(", 1)[1]
        assert mine == _Point(*args, **kwargs) and hash(mine) == hash(_Point(*args, **kwargs))
    with pytest.raises(TypeError):
        _Point()  # x has no default
    with pytest.raises(TypeError):
        _Point(1, z=2)


def test_a_record_refuses_assignment_and_survives_replace_and_pickle():
    p = _Point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5  # type: ignore[misc]
    assert dataclasses.replace(p, y=7) == _Point(1, 7)
    assert pickle.loads(pickle.dumps(p)) == p
    assert not hasattr(p, "__dict__")


def test_a_record_without_slots_runs_its_post_init():
    assert _Checked(2).label == "n" and hasattr(_Checked(2), "__dict__")
    with pytest.raises(ValueError, match="negative"):
        _Checked(-1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Checked(1).n = 2  # type: ignore[misc]


def test_a_default_factory_is_refused():
    with pytest.raises(TypeError, match="default_factory"):
        @record
        class _Bad:
            items: list = dataclasses.field(default_factory=list)


def test_the_oracle_s_own_records_keep_their_defaults_and_checks():
    e = Event("move", "Ann", to="box")
    assert (e.listener, e.hidden_observers, e.missed_by) == (None, (), ())
    assert dataclasses.replace(e, hidden_observers=("Bo",)).hidden_observers == ("Bo",)
    w = World(agents=("Ann", "Bo"), containers=("box", "bag"), object="ball",
              location="box", present=frozenset({"Ann"}), events=(e,))
    assert w.agents_set == frozenset({"Ann", "Bo"})
    assert dataclasses.replace(w, location="bag").location == "bag"
    with pytest.raises(ValueError, match="not a container"):
        World(agents=("Ann",), containers=("box",), object="ball", location="bag",
              present=frozenset())
