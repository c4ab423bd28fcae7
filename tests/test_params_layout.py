"""The params files are in the layout DVC writes: `dvc exp run -S` changes one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from dvc.utils.serialize import modify_yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = ("params.yaml", "params.gpu.yaml", "params.train-long.yaml")


@pytest.mark.parametrize("name", FILES)
def test_dvcs_writer_leaves_the_file_as_it_is(name, tmp_path) -> None:
    copy = tmp_path / name
    shutil.copy(ROOT / name, copy)
    with modify_yaml(copy):
        pass
    assert copy.read_text() == (ROOT / name).read_text(), (
        f"run: python scripts/format-params.py {name}")


def test_a_knob_set_by_dvc_changes_one_line(tmp_path) -> None:
    copy = tmp_path / "params.yaml"
    shutil.copy(ROOT / "params.yaml", copy)
    before = copy.read_text().splitlines()
    with modify_yaml(copy) as params:
        params["pairs"]["n_eval_narrative"] = 80
        params["audit"]["replay"]["n_controls"] = 7
    after = copy.read_text().splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(before) == len(after) and len(changed) == 2, changed
    assert yaml.safe_load(copy.read_text())["pairs"]["n_eval_narrative"] == 80
