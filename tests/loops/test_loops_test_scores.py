"""Table 1's Test Main and BigToM-U columns: the final principles scored on the main test
sample (S3) and on BigToM-U's pairs (cogrsi_lib/loops/devdata.py, evaluate.py, stage.py)."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl
import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench.manifest import SampleSpec, draw_samples, write_manifest
from cogrsi_lib.loops import report
from cogrsi_lib.loops.devdata import TEST_SPLIT, bigtom_u_items, manifest_items
from cogrsi_lib.loops.evaluate import bigtom_u_scores, score_test_main
from cogrsi_lib.loops.stage import run_stage, stage_data
from cogrsi_lib.stage_params import StageParamsError, load

from .test_loops_stage import TINY

pytestmark = pytest.mark.skipif(not (bench.available("tombench") and bench.available("bigtom")),
                                reason="the shipped ToMBench and BigToM samples are absent")


@pytest.fixture(scope="module")
def manifests(tmp_path_factory) -> tuple[object, object]:
    folder = tmp_path_factory.mktemp("manifests")
    drawn = []
    for name in ("tombench", "bigtom"):
        m = draw_samples(bench.load(name), [SampleSpec("S1", 20, 2), SampleSpec("S3", 20, 1)],
                         name)
        write_manifest(m, folder / f"{name}.json")
        drawn.append(m)
    return folder, drawn


class Answers:
    """A scorer whose answer to every item is the label ``pick(principle, item)``."""

    def __init__(self, pick):
        self.pick = pick

    def answer_many(self, principles, items):
        return [[SimpleNamespace(answer=(a := self.pick(p, it)), correct=a == it.gold)
                 for it in items] for p in principles]


def test_test_items_are_the_first_of_the_main_test_sample_only(manifests) -> None:
    folder, drawn = manifests
    items = manifest_items(["tombench", "bigtom"], folder, TEST_SPLIT, 3)
    tom, big = drawn
    assert [it.item_id for it in items] == [*tom.items["S3"][:3], *big.items["S3"][:3]]
    assert [it.meta["source"] for it in items] == ["tombench"] * 3 + ["bigtom"] * 3
    assert not {it.item_id for it in items} & (set(tom.items["S1"]) | set(big.items["S1"]))


def test_test_main_is_each_benchmark_s_own_score_per_principle(manifests) -> None:
    folder, _ = manifests
    items = manifest_items(["tombench", "bigtom"], folder, TEST_SPLIT, 4)
    first = items[0].item_id
    scores = score_test_main(
        Answers(lambda p, it: it.gold if p == "right" or it.item_id == first else "Z"),
        items, {"right": "right", "wrong": "wrong"})
    rows = {(r["label"], r["benchmark"]): r for r in scores.iter_rows(named=True)}
    assert rows[("right", "tombench")]["score"] == rows[("right", "bigtom")]["score"] == 100.0
    assert rows[("wrong", "tombench")]["score"] == 25.0  # its first question only
    assert rows[("wrong", "bigtom")]["score"] == 0.0
    assert {r["questions"] for r in rows.values()} == {4}


def test_bigtom_u_pairs_count_when_both_versions_are_right() -> None:
    items, pairs = bigtom_u_items(4)
    assert len(pairs) == 4 and len(items) == 8
    assert {it.item_id for it in items} == {v for _, _, a, b in pairs for v in (a, b)}
    assert bigtom_u_items(0) == ([], [])
    false_versions = {b for _, _, _, b in pairs}
    scores = bigtom_u_scores(
        Answers(lambda p, it: it.gold if p == "all" or it.item_id not in false_versions
                else "z"), items, pairs, {"all": "all", "true_only": "true_only"})
    rows = {r["label"]: r for r in scores.iter_rows(named=True)}
    assert rows["all"]["pair_validity"] == 100.0 and rows["all"]["valid_pairs"] == 4
    assert rows["true_only"]["valid_pairs"] == 0 and rows["true_only"]["item_accuracy"] == 50.0
    kinds = [k for _, k, _, _ in pairs]
    assert rows["all"]["n_pairs"] == 4 and kinds.count("flip") == kinds.count("same") == 2


def test_the_stage_fills_table_1_s_test_main_and_bigtom_u(manifests, tmp_path) -> None:
    folder, _ = manifests
    cfg = load("loops", {**TINY, "arms": ["gated_library"], "test_benchmarks": ["tombench"],
                         "test_main": 3, "bigtom_u_pairs": 2, "manifest_dir": str(folder)})
    data = stage_data(cfg)
    assert len(data.test_main) == 3 and len(data.bigtom_u) == 4
    run = run_stage(cfg, data, tmp_path)
    assert set(run.test_main["label"]) == {"none", "expert", "gated_library"}
    assert run.bigtom_u["n_pairs"].to_list() == [2, 2, 2]
    t1 = report.table1(run.final_scores, run.gate_pairs, run.eval_pairs, run.arms,
                       test_main=run.test_main, bigtom_u=run.bigtom_u)
    assert t1["test_main"].is_not_null().all() and t1["bigtom_u"].is_not_null().all()
    assert t1.schema["test_main"] == pl.Float64
    with pytest.raises(StageParamsError, match="name their test_benchmarks"):
        load("loops", {"test_main": 2})


def test_test_main_averages_main_benchmarks_only():
    with pytest.raises(StageParamsError, match=r"\['tomi'\] are not main benchmarks"):
        load("loops", {**TINY, "arms": ["gated_library"], "test_main": 2,
                       "test_benchmarks": ["tombench", "tomi"]})


def test_the_test_answers_are_records_beside_the_final_cohort(manifests, tmp_path) -> None:
    folder, _ = manifests
    cfg = load("loops", {**TINY, "arms": ["gated_library"], "test_benchmarks": ["bigtom"],
                         "test_main": 2, "bigtom_u_pairs": 1, "manifest_dir": str(folder)})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    counts = dict(run.records.group_by("cohort", maintain_order=True).len().iter_rows())
    assert counts["test_main"] == 3 * 2 and counts["bigtom_u"] == 3 * 2
    assert counts["final"] == 3 * TINY["final_size"]
    assert set(run.final_scores["item_id"]) == set(
        run.records.filter(pl.col("cohort") == "final")["item_id"])


def test_table14_is_every_loop_seed_before_the_mean_over_seeds() -> None:
    final = pl.DataFrame({
        "label": ["expert", "gated_library", "gated_library", "gated_library", "accuracy_loop"],
        "seed": [0, 0, 0, 1, 0], "correct": [True, True, False, True, False],
        "item_id": ["a", "a", "b", "a", "a"], "story_id": ["s"] * 5})
    candidates = pl.DataFrame({"arm": ["gated_library", "gated_library", "accuracy_loop"],
                               "seed": [0, 1, 0], "written": ["rule", "", "x"],
                               "admitted": [True, False, False]})
    test_main = pl.DataFrame({"label": ["gated_library"] * 3, "seed": [0, 0, 1],
                              "benchmark": ["tombench", "bigtom", "tombench"],
                              "questions": [2, 2, 2], "score": [50.0, 100.0, 0.0]})
    t14 = report.per_seed(final, candidates, test_main)
    rows = {(r["label"], r["seed"]): r for r in t14.iter_rows(named=True)}
    assert set(rows) == {("accuracy_loop", 0), ("gated_library", 0), ("gated_library", 1)}
    g0 = rows[("gated_library", 0)]
    assert (g0["dev"], g0["dev_n"], g0["proposed"], g0["admitted"], g0["test_main"]) == (
        50.0, 2, 1, 1, 75.0)
    assert rows[("gated_library", 1)]["proposed"] == 0
    assert rows[("accuracy_loop", 0)]["test_main"] is None
    assert t14["bigtom_u"].is_null().all()
