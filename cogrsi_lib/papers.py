"""The source papers' tables and figures as data: what reproduces each one, and how fully.

``cogrsi_lib/papers.yaml`` holds one row per table or figure of the four source documents
(CogRSI, PDDL-Mind, the recursive reasoning plan, the Zing report): the stage(s) and output
files that reproduce it and a status, ``produced``, ``partial: <what is missing>`` or ``not
reproducible here: <why>``. ``cogrsi papers`` prints it; :func:`committed_outputs` reads, from
``dvc.lock`` and the DVC cache or remote, which files each stage's committed run wrote, so the
manifest is checked against the pipeline's outputs without running it.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["KINDS", "PaperRow", "committed_outputs", "manifest", "summary"]

MANIFEST = Path(__file__).with_name("papers.yaml")
#: the statuses, in the order the summary gives them
KINDS = ("produced", "partial", "not reproducible here")
Paper = Literal["CogRSI", "PDDL-Mind", "Recursive reasoning plan", "Zing"]


class PaperRow(BaseModel):
    """One table or figure of a paper and what reproduces it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paper: Paper
    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    stage: list[str] = []
    outputs: list[str] = []
    status: str = Field(pattern=r"^(produced|partial: .+|not reproducible here: .+)$")

    @property
    def kind(self) -> str:
        """``produced``, ``partial`` or ``not reproducible here``."""
        return self.status.split(":", 1)[0]

    @model_validator(mode="after")
    def _outputs_match_status(self) -> PaperRow:
        if self.kind == "not reproducible here" and self.outputs:
            raise ValueError(f"{self.paper} {self.id}: not reproducible, yet lists outputs")
        if self.kind != "not reproducible here" and not (self.stage and self.outputs):
            raise ValueError(f"{self.paper} {self.id}: {self.kind} needs its stage and outputs")
        if any(not out.startswith("reports/") for out in self.outputs):
            raise ValueError(f"{self.paper} {self.id}: outputs live under reports/")
        return self


@functools.cache
def manifest(path: Path = MANIFEST) -> tuple[PaperRow, ...]:
    """Every row of the manifest, in the papers' order; duplicates refused."""
    rows = tuple(PaperRow.model_validate(r) for r in yaml.safe_load(path.read_text("utf-8")))
    seen = Counter((r.paper, r.id) for r in rows)
    twice = [f"{p} {i}" for (p, i), n in seen.items() if n > 1]
    if twice:
        raise ValueError(f"{path}: rows listed twice: {twice}")
    return rows


def summary(rows: Sequence[PaperRow]) -> list[dict[str, int | str]]:
    """Rows per paper and status (one dict per paper, and a total)."""
    papers = list(dict.fromkeys(r.paper for r in rows))
    table = []
    for paper in [*papers, "all"]:
        mine = [r for r in rows if paper in ("all", r.paper)]
        counts = Counter(r.kind for r in mine)
        table.append({"paper": paper, **{k: counts[k] for k in KINDS}, "rows": len(mine)})
    return table


def _dir_listing(md5: str, root: Path) -> list[str] | None:
    """The relative paths a DVC directory hash lists (cache first, then the local remote)."""
    name = md5.removesuffix(".dir")
    for store in (root / ".dvc" / "cache", root / ".dvc" / "storage"):
        path = store / "files" / "md5" / name[:2] / f"{name[2:]}.dir"
        if path.is_file():
            return [entry["relpath"] for entry in json.loads(path.read_text("utf-8"))]
    return None


def committed_outputs(root: str | Path) -> dict[str, set[str]]:
    """Files each committed output folder holds, by folder (``reports/loops``): read from
    ``dvc.lock`` (stages) and ``reports/*.dvc`` (tracked runs such as ``train-long``), and the
    listing DVC stored for that hash. A folder whose listing is not stored maps to an empty set."""
    root = Path(root)
    outs: list[tuple[str, str]] = []
    lock = yaml.safe_load((root / "dvc.lock").read_text("utf-8"))
    for stage in lock.get("stages", {}).values():
        outs += [(o["path"], o.get("md5", "")) for o in stage.get("outs", [])]
    for tracked in (root / "reports").glob("*.dvc"):
        for o in yaml.safe_load(tracked.read_text("utf-8")).get("outs", []):
            outs.append((f"reports/{o['path']}", o.get("md5", "")))
    return {path: set(_dir_listing(md5, root) or []) if md5.endswith(".dir") else {""}
            for path, md5 in outs}
