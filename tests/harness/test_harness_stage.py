"""The harness stage's notebook and parameters stay in step."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_params_section_fits_the_stage_schema() -> None:
    from cogrsi_lib.stage_params import load

    section = yaml.safe_load((ROOT / "params.yaml").read_text())["harness"]
    assert load("harness", section).model_dump().keys() == section.keys()
    assert section["model"]["backend"] == "embedded"
    assert set(section["ablations"]) >= {"base", "skills", "memory", "retrieval", "full"}
