"""The harness stage's notebook and parameters stay in step."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_params_section_fits_the_stage_schema() -> None:
    from cogrsi_lib.stage_params import load

    section = yaml.safe_load((ROOT / "params.yaml").read_text())["harness"]
    dumped = load("harness", section).model_dump().keys()
    assert dumped - section.keys() <= {"models", "runs"} and section.keys() <= dumped
    assert section["model"]["backend"] == "embedded"
    assert set(section["ablations"]) >= {"base", "skills", "memory", "retrieval", "full"}


def test_the_harness_runs_each_model_once():
    from cogrsi_lib.stage_params import load

    fake = {"backend": "fake", "reply": {"answer": "A"}}
    p = load("harness", {"models": [fake, {**fake, "model": "other"}]})
    assert len(p.model_list()) == 2
    with pytest.raises(ValueError, match="answers greedily"):
        load("harness", {"runs": 2})


@pytest.mark.e2e
def test_the_stage_sets_two_models_side_by_side(tmp_path):
    """The stage on two fake models: every table and log has each model's rows, Table 10
    one row per model and source."""
    import json

    import polars as pl

    from cogrsi_lib.harness.params import HarnessParams
    from cogrsi_lib.pipeline import find_repo_root, run_stage

    one = HarnessParams.model_fields["model"].default
    section = {"models": [one, {**one, "model": "second"}], "benchmarks": [], "n_oracle": 3,
               "dev": {"n_tombench": 0, "n_oracle": 2}, "agreement": {"n_worlds": 5}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"harness": section}))
    out = tmp_path / "out"
    run_stage("harness", params_path=tmp_path / "params.yaml", out_dir=out,
              repo_root=find_repo_root())
    models = set(pl.read_parquet(out / "records.parquet")["model"])
    assert len(models) == 2 and "second" in models
    table10 = pl.read_csv(out / "paper_table10.csv")
    assert set(table10["model"]) == models
    assert table10.filter(pl.col("source") == "oracle").height == 2  # a row per model
    assert set(pl.read_csv(out / "ablations.csv")["model"]) == models
    assert set(json.loads((out / "experience_store.json").read_text())) == models
    assert json.loads((out / "summary.json").read_text())["models"][1] == "second"
