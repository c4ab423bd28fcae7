"""CogRSI-L (CogRSI §5.2, Tables 1, 2, 3, 9 and 27): the grounded reader with a loop's final
principle in place of the expert one, nothing else changed.

The loops stage writes each arm's final principle per seed (``principles.parquet``: ``seed``,
``label``, ``principle``). The paper reports CogRSI-L as one run per loop seed, so the k-th
seed's principle (seeds in order) is read in the reader's run k: :func:`learned_runs` gives
those (run, seed, principle) triples, and :func:`learned_reader` the reader that reads one.
A principle the loop never added to stays empty: that reader then reads with no principle,
which the record's ``principle`` column shows (``none``). Other arms may be read beside it,
each as its own system (:func:`learned_name`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.reader import GroundedReader, ReaderConfig
from cogrsi_lib.reader.system import System

#: the system name of the reader with a learned principle
LEARNED = "cogrsi_l"
#: the loops stage's table of final principles (:mod:`cogrsi_lib.loops.stage`)
PRINCIPLES_FILE = "principles.parquet"
#: the labels of that table that are not a loop's (the reference rows)
NOT_LEARNED = ("none", "expert")


class LearnedPrincipleError(ValueError):
    """The loops' final principles cannot be read as asked."""


@dataclass(frozen=True)
class LearnedRun:
    """One CogRSI-L run: the reader's run index, the loop seed and its final principle."""

    run: int
    seed: int
    principle: str


def learned_runs(path: str | Path, arm: str) -> list[LearnedRun]:
    """``arm``'s final principle of each loop seed, in seed order, the k-th as run k, from the
    loops stage's ``principles.parquet`` (the file, or the loops run's folder holding it)."""
    path = Path(path)
    if path.is_dir():
        path = path / PRINCIPLES_FILE
    if not path.is_file():
        raise LearnedPrincipleError(f"no loops principles at {path}: run the loops stage "
                                    "first (dvc repro loops)")
    table = pl.read_parquet(path)
    missing = {"seed", "label", "principle"} - set(table.columns)
    if missing:
        raise LearnedPrincipleError(f"{path} lacks column(s) {sorted(missing)}")
    arms = sorted(set(table["label"].to_list()) - set(NOT_LEARNED))
    if arm in NOT_LEARNED or arm not in arms:
        raise LearnedPrincipleError(f"{path} has no loop arm {arm!r}; its arms: "
                                    f"{', '.join(arms) or 'none'}")
    rows = table.filter(pl.col("label") == arm).sort("seed")
    seeds = rows["seed"].to_list()
    if len(set(seeds)) != len(seeds):
        raise LearnedPrincipleError(f"{path} gives arm {arm!r} seed(s) twice: {seeds}")
    return [LearnedRun(k, int(s), p or "") for k, (s, p)
            in enumerate(zip(seeds, rows["principle"].to_list(), strict=True))]


def learned_name(arm: str) -> str:
    """The system name of the reader with loop arm ``arm``'s principle, beside CogRSI-L's."""
    return f"{LEARNED}_{arm}"


def learned_reader(backend: Backend, config: ReaderConfig, principle: str,
                   name: str = LEARNED) -> GroundedReader:
    """The reader ``cogrsi`` with ``principle`` (a loop's) in place of the expert one."""
    return GroundedReader(backend, principle or "none", config, name=name)


def cell_systems(names: Sequence[str], backend: Backend, config: ReaderConfig,
                 principle: str | None, learned: Mapping[str, LearnedRun] | None = None
                 ) -> list[System]:
    """One (model, run) cell's systems: each of ``names`` (registered reader systems) with
    the stage's ``principle``, and each learned system (name -> the loop seed's run) the
    cell has a principle for."""
    from cogrsi_lib.baselines.registry import make_system

    systems = [make_system(name, backend, config, principle) for name in names]
    for name, run in (learned or {}).items():
        systems.append(learned_reader(backend, config, run.principle, name=name))
    return systems


def cell_learned(systems: Mapping[str, Sequence[LearnedRun]], run: int
                 ) -> dict[str, LearnedRun]:
    """The learned systems with a principle for the reader's run ``run`` (each system's k-th
    loop seed in run k)."""
    return {name: runs[run] for name, runs in systems.items() if run < len(runs)}
