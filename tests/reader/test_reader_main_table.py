"""CogRSI Table 3: the main benchmarks and Main per block, model and system
(cogrsi_lib/baselines/main_table.py), from the benchmarks stage's samples
(cogrsi_lib/bench/manifest.py sample_items)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib import bench
from cogrsi_lib.baselines.main_table import main_table
from cogrsi_lib.bench.manifest import (
    CONFIRMATORY,
    DEVELOPMENT_SET,
    MAIN_TEST,
    ManifestError,
    SampleSpec,
    draw_samples,
    sample_items,
    write_manifest,
)
from cogrsi_lib.bench.registry import MAIN_BENCHMARKS

SHIPPED = ("tombench", "bigtom")
needs_data = pytest.mark.skipif(not all(bench.available(n) for n in SHIPPED),
                                reason="the shipped ToMBench and BigToM samples are absent")


def _scores(block_rows):
    return pl.DataFrame(block_rows, orient="row", schema={
        "model": pl.Utf8, "system": pl.Utf8, "benchmark": pl.Utf8, "protocol": pl.Utf8,
        "questions": pl.Int64, "runs": pl.Int64, "score": pl.Float64})


def test_main_is_the_mean_of_the_main_benchmarks_that_ran_and_says_how_many():
    a = _scores([("m", "cogrsi", "tombench", "uniform", 4, 2, 0.5),
                 ("m", "cogrsi", "bigtom", "uniform", 4, 2, 1.0),
                 ("m", "cogrsi", "tomi", "uniform", 4, 2, 0.0),  # test-only: Table 17
                 ("m", "cogrsi", "bigtom", "official", 4, 1, 0.0),  # another protocol
                 ("m", "sc6", "tombench", "uniform", 4, 2, 0.25)])
    b = _scores([("m", "cogrsi", "bigtom", "uniform", 2, 2, 0.0)])
    table = main_table({"A": a, "B": b})
    assert list(table.columns[5:-2]) == list(MAIN_BENCHMARKS)  # the paper's eight, in order
    rows = {(r["block"], r["system"]): r for r in table.iter_rows(named=True)}
    assert set(rows) == {("A", "cogrsi"), ("A", "sc6"), ("B", "cogrsi")}
    cogrsi = rows[("A", "cogrsi")]
    assert (cogrsi["main"], cogrsi["benchmarks"], cogrsi["runs"]) == (0.75, 2, 2)
    assert cogrsi["fantom"] is None and cogrsi["bigtom"] == 1.0
    assert rows[("A", "sc6")]["main"] == 0.25 and rows[("A", "sc6")]["benchmarks"] == 1
    assert rows[("B", "cogrsi")]["sample"].startswith("confirmatory")
    assert main_table({"A": a, "B": pl.DataFrame()}).filter(pl.col("block") == "B").height == 0


@pytest.fixture(scope="module")
def manifests(tmp_path_factory):
    folder = tmp_path_factory.mktemp("manifests")
    drawn = {}
    for name in SHIPPED:
        drawn[name] = draw_samples(bench.load(name), [
            SampleSpec("S1", 10, 2), SampleSpec(DEVELOPMENT_SET, 10, 0),
            SampleSpec(MAIN_TEST, 10, 1),
            SampleSpec(CONFIRMATORY, 10, 3)], name)
        write_manifest(drawn[name], folder / f"{name}.json")
    return folder, drawn


@needs_data
def test_a_sample_is_the_first_items_of_its_split_and_a_missing_part_stops_it(manifests,
                                                                             tmp_path):
    folder, drawn = manifests
    main = sample_items(SHIPPED, folder, MAIN_TEST, 3)
    confirm = sample_items(SHIPPED, folder, CONFIRMATORY)
    for name in SHIPPED:
        assert [it.id for it in main[name]] == list(drawn[name].items[MAIN_TEST][:3])
        assert [it.id for it in confirm[name]] == list(drawn[name].items[CONFIRMATORY])
        assert not {it.id for it in main[name]} & {it.id for it in confirm[name]}
    with pytest.raises(FileNotFoundError, match="run the benchmarks stage first"):
        sample_items(["tombench"], tmp_path, MAIN_TEST)
    if not bench.available("fantom"):  # registered, not shipped
        with pytest.raises(ManifestError, match="'fantom' has no data"):
            sample_items(["fantom"], folder, MAIN_TEST)


def test_confirmatory_needs_the_manifests():
    from cogrsi_lib.stage_params import StageParamsError, load

    with pytest.raises(StageParamsError, match="manifest_dir"):
        load("reader_eval", {"confirmatory": 2})
    with pytest.raises(StageParamsError, match="manifest_dir"):
        load("reader_eval", {"development": 2})
    with pytest.raises(StageParamsError, match="not_a_system"):
        load("reader_eval", {"development_systems": ["not_a_system"]})


@needs_data
@pytest.mark.e2e
def test_reader_eval_gives_table3_from_both_samples(manifests, tmp_path):
    """The stage (fake backend) on the drawn samples: block A from S3, block B from S4, every
    record of B kept beside A's."""
    import yaml

    from cogrsi_lib.pipeline import find_repo_root, run_stage

    folder, drawn = manifests
    section = {"systems": ["sc6", "cogrsi"], "reference": "sc6", "n_pairs": 1,
               "benchmarks": list(SHIPPED), "n_per_benchmark": 2, "official": False,
               "manifest_dir": str(folder), "confirmatory": 3, "development": 2,
               "pairs": {"eval_seed": 23, "n_eval_narrative": 4, "n_eval_dialogue": 2},
               "gold_perceivers": {"n_questions": 0}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"reader_eval": section}))
    out = tmp_path / "out"
    run_stage("reader_eval", params_path=tmp_path / "params.yaml", out_dir=out,
              repo_root=find_repo_root())
    table3 = pl.read_csv(out / "paper_table3.csv")
    assert set(table3.select("block", "system").iter_rows()) == {
        (b, s) for b in "AB" for s in ("sc6", "cogrsi")}
    assert set(table3["benchmarks"]) == {2}
    main = pl.read_parquet(out / "records.parquet").filter(pl.col("source").is_in(SHIPPED))
    confirm = pl.read_parquet(out / "confirmatory" / "records.parquet")
    for name in SHIPPED:
        assert set(main.filter(pl.col("source") == name)["item_id"]) == set(
            drawn[name].items[MAIN_TEST][:2])
        assert set(confirm.filter(pl.col("source") == name)["item_id"]) == set(
            drawn[name].items[CONFIRMATORY][:3])
    development = pl.read_parquet(out / "development" / "records.parquet")
    assert set(development["system"]) == {"cogrsi"}
    for name in SHIPPED:
        assert set(development.filter(pl.col("source") == name)["item_id"]) == set(
            drawn[name].items[DEVELOPMENT_SET][:2])
    table7 = pl.read_csv(out / "paper_table7.csv")
    assert set(table7["benchmark"]) <= {*SHIPPED, "all"} and "all" in set(table7["benchmark"])
    assert pl.read_csv(out / "paper_table19.csv").height == len(SHIPPED)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["confirmatory"] == {name: 3 for name in SHIPPED}
