"""Development data: oracle stories, the S1 split of a benchmark, never the test samples."""

from __future__ import annotations

import pytest

from cogrsi_lib.loops.devdata import DEV_SPLIT, bench_dev_items, oracle_dev_items, question_group
from cogrsi_lib.oracle.sampler import SamplerConfig


def test_oracle_items_have_oracle_gold_among_their_options():
    items = oracle_dev_items(20, seed=3)
    assert items and all(it.gold in it.options for it in items)
    assert all(it.meta["depth"] >= 1 for it in items)
    assert {it.meta["group"].split("/")[1] for it in items} == {"first-order", "second-order"}
    assert all(it.story.startswith("odev3-") for it in items)
    assert all(len(it.meta["perceivers"]) == len(it.lines()) for it in items)
    again = oracle_dev_items(20, seed=3)
    assert [i.item_id for i in again] == [i.item_id for i in items]
    assert [i.question for i in oracle_dev_items(20, seed=4)] != [i.question for i in items]
    assert question_group("location", 1, True) == "location/first-order/false-belief"


def test_bench_items_come_from_the_development_split_only(tmp_path):
    from cogrsi_lib import bench
    from cogrsi_lib.bench.manifest import SampleSpec, draw_samples, write_manifest

    try:
        items = bench.load("tombench")
    except Exception as err:  # noqa: BLE001 - data may be absent in a bare checkout
        pytest.skip(f"tombench data not available: {err}")
    m = draw_samples(items, [SampleSpec("S1", 30, 2), SampleSpec("S3", 30, 1)], "tombench")
    write_manifest(m, tmp_path / "tombench.json")
    dev = bench_dev_items(["tombench"], tmp_path)
    ids = {it.item_id for it in dev}
    assert DEV_SPLIT == "S1"
    assert ids == set(m.items["S1"]) and not ids & set(m.items["S3"])
    assert all(it.meta["group"].startswith("tombench/") for it in dev)
    with pytest.raises(FileNotFoundError, match="cogrsi bench manifest"):
        bench_dev_items(["hi-tom"], tmp_path)


def test_dev_items_never_ask_a_chain_without_a_belief() -> None:
    """With the oracle's ``opening: unknown``, chains through an agent absent at the start
    hold no belief: no item asks them."""
    cfg = SamplerConfig(opening="unknown", min_agents=3, max_agents=3)
    items = oracle_dev_items(30, 4, max_depth=2, config=cfg)
    assert items and all(it.gold in it.options for it in items)
    worlds = {it.meta["world_json"] for it in items}
    assert all('"opening":"unknown"' in w for w in worlds)
