"""The loops' development data and pair items (CogRSI App. C.2, E.1).

The loops only ever see development data: oracle-generated stories (:func:`oracle_dev_items`,
drawn with their own seed, apart from the audit's worlds, by default restricted to
ExploreToM's situations: :mod:`cogrsi_lib.oracle.situations`) and the S1 (development) split of
any benchmark whose manifest is present (:func:`bench_dev_items`). Only the final principles
are scored on test data, for Table 1: the main test sample S3 (:func:`manifest_items`) and
BigToM-U's pairs (:func:`bigtom_u_items`); no loop sees them. :func:`pair_items` turns
counterfactual pair records (the gate split) into reader items.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import polars as pl

from cogrsi_lib.bench.manifest import MAIN_TEST
from cogrsi_lib.oracle.render import render
from cogrsi_lib.oracle.sampler import PROPERTIES, SamplerConfig, question_records, sample_worlds
from cogrsi_lib.oracle.world import Question
from cogrsi_lib.reader.evaluate import pair_items as reader_pair_items
from cogrsi_lib.reader.items import ReaderItem, from_bench_item

#: the only benchmark split the loops may read (App. E.2: S1 is the development data)
DEV_SPLIT = "S1"
#: the main test sample (App. E.2), read only to score the final principles (Table 1)
TEST_SPLIT = MAIN_TEST


def question_group(kind: str, depth: int, false_belief: bool) -> str:
    """Failure-group key of an oracle question, e.g. ``location/first-order/false-belief``."""
    order = {1: "first-order", 2: "second-order"}.get(depth, f"order-{depth}")
    return f"{kind}/{order}/{'false' if false_belief else 'true'}-belief"


def oracle_dev_items(n_stories: int, seed: int, *, max_depth: int = 2, min_depth: int = 1,
                     config: SamplerConfig | None = None) -> list[ReaderItem]:
    """Every belief question (depth ``min_depth``..``max_depth``) of ``n_stories`` sampled
    worlds, as multiple-choice items whose gold comes from the oracle. The meta keeps the
    oracle world and the question as JSON (``world_json``, ``question_json``), as pair items
    do, so a symbolic reader can answer from the world itself."""
    cfg = config or SamplerConfig()
    out: list[ReaderItem] = []
    for i, world in enumerate(sample_worlds(n_stories, seed, cfg)):
        story = render(world)
        world_json = world.to_json()
        perceivers = [sorted(line.perceivers) for line in story.lines]
        sid = f"odev{seed}-{i:05d}"
        # a chain with no belief (oracle ``opening: unknown``) has no forced-choice answer
        rows = [r for r in question_records(world, i, max_depth)
                if r["depth"] >= min_depth and r["answer"] is not None]
        for j, r in enumerate(rows):
            if r["kind"] == "location":
                options = tuple(world.containers)
            else:
                options = tuple(PROPERTIES[r["property"]][1])
            out.append(ReaderItem(
                item_id=f"{sid}-q{j:02d}",
                context=story.text,
                question=r["question"],
                options=options,
                gold=r["answer"],
                story_id=sid,
                meta={"source": "oracle", "group": question_group(r["kind"], r["depth"],
                                                                  r["false_belief"]),
                      "depth": r["depth"], "kind": r["kind"], "names": list(world.agents),
                      "places": [world.room], "perceivers": perceivers,
                      "world_json": world_json,
                      "question_json": json.dumps(
                          Question(r["kind"], tuple(r["chain"]), r["property"]).to_dict(),
                          sort_keys=True, separators=(",", ":"))},
            ))
    return out


def bench_dev_items(benchmarks: Sequence[str], manifest_dir: str | Path) -> list[ReaderItem]:
    """The S1 (development) items of each benchmark, from ``<manifest_dir>/<name>.json``."""
    return [item.with_meta(group=f"{item.meta['source']}/{item.meta.get('question_type') or 'all'}")
            for item in manifest_items(benchmarks, manifest_dir, DEV_SPLIT)]


def manifest_items(benchmarks: Sequence[str], manifest_dir: str | Path, split: str,
                   n: int | None = None) -> list[ReaderItem]:
    """The first ``n`` (all: None) items of sample ``split`` of each benchmark, from its
    manifest ``<manifest_dir>/<name>.json`` (drawn by the ``benchmarks`` stage;
    :func:`cogrsi_lib.bench.manifest.sample_items`), whose source is the benchmark's name."""
    from cogrsi_lib.bench.manifest import sample_items

    return [from_bench_item(it).with_meta(source=name)
            for name, items in sample_items(benchmarks, manifest_dir, split, n).items()
            for it in items]


def bigtom_u_items(n_pairs: int) -> tuple[list[ReaderItem], list[tuple[str, str, str, str]]]:
    """The first ``n_pairs`` BigToM-U pairs (CogRSI App. G,
    :func:`cogrsi_lib.bench.bigtom.bigtom_u_pairs`: pair id, kind, the ids of its two
    versions) and the reader items of their versions, whose source is ``bigtom``."""
    from cogrsi_lib import bench
    from cogrsi_lib.bench.bigtom import bigtom_u_pairs

    if n_pairs <= 0:
        return [], []
    loaded = bench.load("bigtom")
    pairs = bigtom_u_pairs(loaded)[:n_pairs]
    wanted = {v for _, _, a, b in pairs for v in (a, b)}
    items = [from_bench_item(it).with_meta(source="bigtom") for it in loaded
             if str(it.id) in wanted]
    return items, pairs


def pair_items(records: pl.DataFrame) -> list[ReaderItem]:
    """The reader's pair items (:func:`cogrsi_lib.reader.evaluate.pair_items`) with what the
    builder needs besides: a failure group per variant and the story's names and places."""
    out = []
    for item, r in zip(reader_pair_items(records), records.iter_rows(named=True), strict=True):
        world = json.loads(r["world_json"])
        meta = {**item.meta, "source": "pairs", "group": f"pairs/{r['variant']}",
                "names": list(world.get("agents", [])), "places": [world.get("room", "")]}
        out.append(replace(item, meta=meta))
    return out
