"""Write a stage notebook from its cells, with empty outputs and stable cell ids.

Each cell is ``(kind, source)`` with kind ``markdown``, ``code`` or ``parameters`` (a code
cell tagged ``parameters`` for papermill). Rebuilding gives a byte-identical file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat as nbf

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def write_notebook(path: Path, cells: Sequence[tuple[str, str]]) -> None:
    nb = nbf.v4.new_notebook()
    for i, (kind, source) in enumerate(cells):
        if kind == "markdown":
            cell = nbf.v4.new_markdown_cell(source)
        elif kind in ("code", "parameters"):
            cell = nbf.v4.new_code_cell(source)
            if kind == "parameters":
                cell.metadata["tags"] = ["parameters"]
        else:
            raise ValueError(f"unknown cell kind {kind!r}")
        cell.id = f"{path.stem}-{i:02d}"
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = KERNELSPEC
    nbf.write(nb, path)
