"""ATOMS constructs of every benchmark's question types (CogRSI App. E.3, Table 25)."""

from __future__ import annotations

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench.constructs import CONSTRUCTS, UNMAPPED, construct_of

from .conftest import FIXTURES, real

SHIPPED = ("tomi", "bigtom", "hi-tom", "opentom", "tombench", "mmtom-qa", "muma-tom")
FIXTURE_ONLY = ("fantom", "simpletom", "exploretom")


def _unmapped(name: str, items: list) -> dict[str, str]:
    got = {t: construct_of(name, t) for t in {it.question_type for it in items}}
    return {t: c for t, c in got.items() if c not in CONSTRUCTS}


@pytest.mark.parametrize("name", SHIPPED)
def test_every_question_type_of_a_shipped_sample_has_a_construct(name: str) -> None:
    assert not _unmapped(name, real(name))


@pytest.mark.parametrize("name", FIXTURE_ONLY)
def test_every_question_type_of_a_format_fixture_has_a_construct(name: str) -> None:
    assert not _unmapped(name, bench.load(name, FIXTURES / name))


@pytest.mark.parametrize(("name", "qtype", "construct"), [
    ("tomi", "second_order_1_tom", "belief"),
    ("tomi", "reality", "other"),
    ("tomi", "memory", "other"),
    ("bigtom", "forward_action:false_belief", "belief"),
    ("bigtom", "percept_to_belief:true_belief", "perception"),
    ("hi-tom", "order_0", "other"),
    ("hi-tom", "order_4", "belief"),
    ("opentom", "attitude", "emotion"),
    ("opentom", "multihop-fullness-so", "belief"),
    ("tombench", "Non-literal communication: White lies", "non-literal"),
    ("tombench", "Non-Literal Communication: Faux pas", "non-literal"),
    ("tombench", "Knowledge: Percepts-knowledge links", "knowledge"),
    ("tombench", "Desire: Discrepant desires", "desire"),
    ("tombench", "Pretence: made up", UNMAPPED),
    ("fantom", "tom:belief:inaccessible:multiple-choice", "belief"),
    ("fantom", "tom:answerability:list", "knowledge"),
    ("fantom", "tom:info_accessibility:binary", "knowledge"),
    ("fantom", "fact", "other"),
    ("simpletom", "judgment", "mixed"),
    ("exploretom", "order-1:memory", "other"),
    ("exploretom", "order2:container_location", "belief"),
    ("mmtom-qa", "2.3", "desire"),
    ("muma-tom", "belief_of_goal", "mixed"),
    ("cogtom", "False belief (unexpected contents)", "belief"),
    ("cogtom", "Strange stories", UNMAPPED),
])
def test_the_fixed_table(name: str, qtype: str, construct: str) -> None:
    assert construct_of(name, qtype) == construct


def test_an_unknown_benchmark_or_type_is_unmapped_not_guessed() -> None:
    assert construct_of("sombench", "belief") == UNMAPPED
    assert construct_of("tomi", None) == UNMAPPED


def test_tables_sort_constructs_in_atoms_order() -> None:
    import polars as pl

    from cogrsi_lib.bench.constructs import sort_constructs

    t = pl.DataFrame({"model": ["m", "m", "m", "m", "a"],
                      "construct": ["all", "other", "unmapped", "belief", "emotion"]})
    assert sort_constructs(t, "model").rows() == [
        ("a", "emotion"), ("m", "belief"), ("m", "other"), ("m", "unmapped"), ("m", "all")]
