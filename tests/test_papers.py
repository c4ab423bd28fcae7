"""The papers' tables manifest (cogrsi_lib/papers.yaml) and ``cogrsi papers``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from cogrsi_lib.cli import app
from cogrsi_lib.papers import KINDS, PaperRow, committed_outputs, manifest, summary

ROOT = Path(__file__).resolve().parents[1]


def test_every_paper_is_listed_and_rows_are_unique():
    rows = manifest()
    assert len(rows) >= 40
    assert {r.paper for r in rows} == {"CogRSI", "PDDL-Mind", "Recursive reasoning plan", "Zing"}
    total = summary(rows)[-1]
    assert total["paper"] == "all" and total["rows"] == len(rows)
    assert sum(total[k] for k in KINDS) == len(rows)


def test_every_stage_named_is_a_pipeline_stage():
    stages = set(yaml.safe_load((ROOT / "dvc.yaml").read_text("utf-8"))["stages"])
    named = {s for r in manifest() for s in r.stage}
    assert named <= stages, named - stages


def test_every_listed_output_is_in_the_committed_run_of_its_stage():
    """The committed pipeline run (dvc.lock and the DVC store in the repository) holds every
    output a produced or partial row names, in the output folder of one of its stages (or a
    tracked run such as reports/train-long)."""
    committed = committed_outputs(ROOT)
    assert all(committed.values()), [k for k, v in committed.items() if not v]
    stage_dirs = {f"reports/{s}" for s in yaml.safe_load((ROOT / "dvc.yaml").read_text("utf-8"))
                  ["stages"]}
    tracked = set(committed) - stage_dirs  # runs kept with `dvc add`, e.g. reports/train-long
    missing = []
    for row in manifest():
        for out in row.outputs:
            homes = [d for d in {f"reports/{s}" for s in row.stage} | tracked
                     if out.startswith(d + "/")]
            if not any(out.removeprefix(d + "/") in committed.get(d, ()) for d in homes):
                missing.append(f"{row.paper} {row.id}: {out}")
    assert not missing, missing


def test_a_row_must_fit_its_status():
    base = {"paper": "CogRSI", "id": "Table 99", "title": "t"}
    with pytest.raises(ValidationError, match="needs its stage and outputs"):
        PaperRow(**base, status="produced")
    with pytest.raises(ValidationError, match="not reproducible, yet lists outputs"):
        PaperRow(**base, stage=["loops"], outputs=["reports/loops/x.md"],
                 status="not reproducible here: no data")
    with pytest.raises(ValidationError, match="status"):
        PaperRow(**base, status="done")
    with pytest.raises(ValidationError, match="under reports/"):
        PaperRow(**base, stage=["loops"], outputs=["loops/x.md"], status="partial: one arm")


def test_the_command_prints_json_rows_and_refuses_unknown_filters():
    runner = CliRunner()
    result = runner.invoke(app, ["papers", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == len(manifest())
    assert all(set(r) == {"paper", "id", "title", "stage", "outputs", "status"} for r in rows)
    partial = json.loads(runner.invoke(app, ["papers", "--json", "--status", "partial"]).output)
    assert partial and all(r["status"].startswith("partial: ") for r in partial)
    text = runner.invoke(app, ["papers", "--paper", "PDDL-Mind"]).output
    assert "| PDDL-Mind" in text and "| CogRSI" not in text
    bad = runner.invoke(app, ["papers", "--status", "done"])
    assert bad.exit_code == 2 and "no status 'done'" in bad.output


def test_readme_shows_the_manifest_as_it_is():
    text = (ROOT / "README.md").read_text("utf-8").split("## The papers' tables", 1)[1]
    shown = [[c.strip() for c in line.strip("|").split("|")]
             for line in text.splitlines() if line.startswith("| ") and "paper" not in line]
    expected = [[str(r["paper"]), *(str(r[k]) for k in KINDS), str(r["rows"])]
                for r in summary(manifest())]
    assert shown[:len(expected)] == expected
