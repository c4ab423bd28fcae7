"""Each stage notebook is a jupytext pair: notebooks/<stage>.py (percent format, the source that
ruff lints) and notebooks/<stage>.ipynb (what papermill and nbval execute). They must agree."""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("*.py"))


def cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
    return [(c.cell_type, c.source.strip(), sorted(c.metadata.get("tags", [])))
            for c in nb.cells]


def test_every_notebook_has_its_source_and_back():
    assert SOURCES, "no notebook sources"
    assert {p.stem for p in SOURCES} == {p.stem for p in NOTEBOOKS.glob("*.ipynb")}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_pair_agrees(source: Path):
    from_py = jupytext.read(source)
    ipynb = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    assert cells(from_py) == cells(ipynb), (
        f"{source.name} and its .ipynb differ: run `jupytext --sync {source}`")
    assert ipynb.metadata["jupytext"]["formats"] == "ipynb,py:percent"
    assert all(not c.get("outputs") for c in ipynb.cells if c.cell_type == "code")
    tagged = [c for c in ipynb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "params = {}" in tagged[0].source
