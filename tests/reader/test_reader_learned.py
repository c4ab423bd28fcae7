"""CogRSI-L: the reader with a loop's final principle, one run per loop seed
(cogrsi_lib/baselines/learned.py), and reader_eval's rows for it."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib import stage_params
from cogrsi_lib.baselines.learned import (
    LEARNED,
    LearnedPrincipleError,
    cell_learned,
    learned_name,
    learned_reader,
    learned_runs,
)
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader import evaluate as ev
from cogrsi_lib.reader.principles import principle_id

#: a loops run's principles: the reference rows, the gated arm's two seeds written out of
#: order (seed 4 admitted nothing), another arm's one
LIBRARY = "(1) When a character leaves: they miss what happens after."
PRINCIPLES = pl.DataFrame({
    "seed": [0, 0, 4, 0, 1, 1],
    "label": ["none", "expert", "gated_library", "gated_library", "accuracy_library",
              "gated_library"],
    "principle": ["", "A character knows only what they saw.", "", LIBRARY, "other", "x"],
    "words": [0, 7, 0, 10, 1, 1],
})


def _write(tmp_path, frame=PRINCIPLES):
    path = tmp_path / "principles.parquet"
    frame.write_parquet(path)
    return path


def test_an_arm_s_principles_come_one_per_seed_in_seed_order(tmp_path):
    runs = learned_runs(_write(tmp_path), "gated_library")
    assert [(r.run, r.seed, r.principle) for r in runs] == [(0, 0, LIBRARY), (1, 1, "x"),
                                                            (2, 4, "")]
    assert learned_runs(tmp_path, "accuracy_library")[0].principle == "other"  # the folder


@pytest.mark.parametrize("arm", ["gepa", "expert", "none"])
def test_an_arm_the_loops_did_not_run_is_refused_with_the_arms_they_ran(tmp_path, arm):
    with pytest.raises(LearnedPrincipleError, match="its arms: accuracy_library, gated_library"):
        learned_runs(_write(tmp_path), arm)


def test_a_missing_file_says_to_run_the_loops_first(tmp_path):
    with pytest.raises(LearnedPrincipleError, match="run the loops stage first"):
        learned_runs(tmp_path / "nowhere.parquet", "gated_library")


def test_a_seed_given_twice_or_a_missing_column_is_refused(tmp_path):
    twice = pl.concat([PRINCIPLES, PRINCIPLES.tail(1)])
    with pytest.raises(LearnedPrincipleError, match="seed"):
        learned_runs(_write(tmp_path, twice), "gated_library")
    with pytest.raises(LearnedPrincipleError, match="lacks column"):
        learned_runs(_write(tmp_path, PRINCIPLES.drop("principle")), "gated_library")


def test_the_learned_reader_reads_its_principle_and_an_empty_one_as_none():
    from cogrsi_lib.pairs import generate_split, to_frame

    backend = stage_params.load("reader_eval", {}).model.build()  # fake
    config = ReaderConfig(sample_max_tokens=32, perception_max_tokens=64)
    pairs = ev.select_pairs(to_frame(generate_split("eval", 23, 8, 4)), 1)
    items = ev.evaluate([learned_reader(backend, config, LIBRARY)], pairs).items
    assert set(items["system"]) == {LEARNED}
    assert set(items["principle"]) == {principle_id(LIBRARY)}
    empty = ev.evaluate([learned_reader(backend, config, "")], pairs).items
    assert set(empty["principle"]) == {"none"}


def test_the_stage_s_params_read_the_file_from_the_repository_root(tmp_path):
    _write(tmp_path)
    p = stage_params.load("reader_eval", {"learned": {"principles_file": "principles.parquet",
                                                      "arm": "gated_library"}})
    assert [r.seed for r in p.learned.runs(tmp_path)] == [0, 1, 4]
    assert stage_params.load("reader_eval", {}).learned.runs(tmp_path) == []


def test_other_arms_are_read_alike_each_as_its_own_system(tmp_path):
    _write(tmp_path)
    given = {"principles_file": "principles.parquet", "arm": "gated_library"}
    p = stage_params.load("reader_eval", {"learned": {
        **given, "compare_arms": ["accuracy_library", "gated_library"]}})
    systems = p.learned.systems(tmp_path)
    assert list(systems) == [LEARNED, learned_name("accuracy_library")]
    assert [r.seed for r in systems[LEARNED]] == [0, 1, 4]
    assert [(r.run, r.principle) for r in systems["cogrsi_l_accuracy_library"]] == [(0, "other")]
    # each run's systems: the accuracy arm has one seed, so only run 0 reads it
    assert list(cell_learned(systems, 0)) == [LEARNED, "cogrsi_l_accuracy_library"]
    assert list(cell_learned(systems, 2)) == [LEARNED]
    with pytest.raises(LearnedPrincipleError, match="no loop arm 'gepa'"):
        stage_params.load("reader_eval", {"learned": {
            **given, "compare_arms": ["gepa"]}}).learned.systems(tmp_path)
    with pytest.raises(stage_params.StageParamsError, match="named twice"):
        stage_params.load("reader_eval", {"learned": {
            **given, "compare_arms": ["accuracy_library", "accuracy_library"]}})
    assert stage_params.load("reader_eval", {}).learned.systems(tmp_path) == {}


@pytest.mark.e2e
def test_reader_eval_runs_cogrsi_l_once_per_loop_seed_beside_the_other_systems(tmp_path):
    """The stage (fake backend) with two runs and an arm of three seeds: CogRSI-L runs three
    times, each with its seed's principle, every other system twice; Tables 2 and 27 and
    the summary carry its rows."""
    import yaml

    from cogrsi_lib.pipeline import find_repo_root, run_stage

    _write(tmp_path)
    section = {"runs": 2, "systems": ["sc6", "cogrsi", "cogrsi_noprinciple"],
               "reference": "sc6", "n_pairs": 1, "benchmarks": ["tomi"], "n_per_benchmark": 1,
               "official": False,
               "pairs": {"eval_seed": 23, "n_eval_narrative": 6, "n_eval_dialogue": 2},
               "gold_perceivers": {"n_questions": 2, "systems": ["cogrsi"]},
               "learned": {"principles_file": str(tmp_path / "principles.parquet"),
                           "arm": "gated_library", "compare_arms": ["accuracy_library"]}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"reader_eval": section}))
    out = tmp_path / "out"
    run_stage("reader_eval", params_path=tmp_path / "params.yaml", out_dir=out,
              repo_root=find_repo_root())
    records = pl.read_parquet(out / "records.parquet")
    runs = records.group_by("system", maintain_order=True).agg(pl.col("run").unique().sort())
    assert dict(runs.iter_rows()) == {"sc6": [0, 1], "cogrsi": [0, 1],
                                      "cogrsi_noprinciple": [0, 1], LEARNED: [0, 1, 2],
                                      "cogrsi_l_accuracy_library": [0]}
    other = records.filter(pl.col("system") == "cogrsi_l_accuracy_library")
    assert set(other["principle"]) == {principle_id("other")}
    learned = records.filter(pl.col("system") == LEARNED)
    by_run = dict(learned.select("run", "principle").unique().iter_rows())
    assert by_run == {0: principle_id(LIBRARY), 1: principle_id("x"), 2: "none"}
    questions = records.filter(pl.col("system") == "sc6", pl.col("run") == 0).height
    assert learned.height == 3 * questions
    table2 = pl.read_csv(out / "paper_table2.csv")
    assert LEARNED in table2["system"].to_list()
    table27 = pl.read_csv(out / "paper_table27.csv")
    rows = set(table27.select("system", "perceivers").iter_rows())
    assert {(LEARNED, "model"), (LEARNED, "gold"), ("cogrsi", "gold")} <= rows
    gold = pl.read_parquet(out / "gold_perceivers" / "records.parquet")
    assert set(gold.filter(pl.col("system") == LEARNED + "+gold")["run"]) == {0, 1, 2}
    metrics = json.loads((out / "summary.json").read_text())
    assert {LEARNED, "cogrsi_l_accuracy_library"} <= set(metrics["systems"])
    assert metrics["learned"] == {LEARNED: [{"run": 0, "seed": 0}, {"run": 1, "seed": 1},
                                            {"run": 2, "seed": 4}],
                                  "cogrsi_l_accuracy_library": [{"run": 0, "seed": 1}]}
    assert metrics["questions"] == questions
