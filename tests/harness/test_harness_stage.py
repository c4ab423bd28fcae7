"""The harness stage's notebook and parameters stay in step."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _builder():
    spec = importlib.util.spec_from_file_location(
        "build_harness", ROOT / "notebooks" / "_build" / "build_harness.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_notebook_matches_its_build_script(tmp_path: Path) -> None:
    _builder().build(tmp_path / "harness.ipynb")
    assert (tmp_path / "harness.ipynb").read_bytes() == (
        ROOT / "notebooks" / "harness.ipynb"
    ).read_bytes()


def test_params_section_sets_exactly_the_notebook_parameters() -> None:
    names = {
        t.id
        for node in ast.parse(_builder().PARAMS).body
        if isinstance(node, ast.Assign)
        for t in node.targets
    }
    section = yaml.safe_load((ROOT / "params.yaml").read_text())["harness"]
    assert set(section) == names - {"out_dir"}
    assert section["llm"]["backend"] == "embedded"
    assert set(section["ablations"]) >= {"base", "skills", "memory", "retrieval", "full"}
