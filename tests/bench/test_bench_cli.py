"""The `cogrsi bench` commands (typer app in cogrsi_lib.bench.cli)."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from cogrsi_lib.bench.cli import app

runner = CliRunner()


def test_list_shows_every_benchmark_and_where_it_is():
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines()}
    assert "available" in lines["tombench"] and "sample=real" in lines["tombench"]
    assert "sample=synthetic" in lines["fantom"]


def test_fetch_needs_a_name():
    result = runner.invoke(app, ["fetch"])
    assert result.exit_code == 2
    assert "give NAME" in result.output


def test_fetch_without_source_is_an_error(tmp_path):
    result = runner.invoke(app, ["fetch", "cogtom", "--dest", str(tmp_path)])
    assert result.exit_code == 1
    assert "no download source" in result.output


def test_counts_prints_types():
    result = runner.invoke(app, ["counts", "hi-tom"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "order_4" in line)
    assert [c.strip() for c in row.strip("|").split("|")] == ["Hi-ToM", "order_4", "120", "120"]


def test_manifest_writes_disjoint_files(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"benchmarks": {
        "benchmarks": ["hi-tom", "bigtom"],
        "sample_sizes": {"S0": 10, "S2": 50, "S3": 100, "S4": 50},
        "seeds": {"S0": 0, "S2": 0, "S3": 1, "S4": 3}}}), encoding="utf-8")
    result = runner.invoke(app, ["manifest", "--out", str(tmp_path / "m"), "--params",
                                 str(params)])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "m" / "bigtom.json").read_text(encoding="utf-8"))
    assert set(data["splits"]) == {"S0", "S2", "S3", "S4"}
    units = [u for s in data["splits"].values() for u in s["units"]]
    assert len(units) == len(set(units))
    assert data["splits"]["S3"]["n_questions"] == 100  # 25 conditions per BigToM template
