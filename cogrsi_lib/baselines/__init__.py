"""Baselines of CogRSI §5 (zero-shot, CoT, SC k=6/9, SimToM, PercepToM, and their +SC forms)."""

from __future__ import annotations

from collections.abc import Iterable

from cogrsi_lib.baselines.systems import (
    PercepToM,
    SimToM,
    SinglePrompt,
    chain_of_thought,
    self_consistency,
    zero_shot,
)
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.items import question_characters
from cogrsi_lib.reader.reader import GroundedReader, ReaderConfig
from cogrsi_lib.reader.system import System

SYSTEMS = (
    "zero_shot",
    "cot",
    "sc6",
    "sc9",
    "simtom",
    "perceptom",
    "simtom_sc6",
    "perceptom_sc6",
    "cogrsi",
)


def make_system(
    name: str,
    backend: Backend,
    config: ReaderConfig | None = None,
    principle: str | None = "expert",
) -> System:
    """A system by name; every one shares the backend and the sampling settings of ``config``."""
    cfg = config or ReaderConfig()
    if name == "zero_shot":
        return zero_shot(backend, cfg)
    if name == "cot":
        return chain_of_thought(backend, cfg)
    if name.startswith("sc") and name[2:].isdigit():
        return self_consistency(backend, cfg, k=int(name[2:]))
    if name == "simtom":
        return SimToM(backend, cfg, n=1)
    if name == "perceptom":
        return PercepToM(backend, cfg, n=1)
    if name.startswith("simtom_sc") and name[9:].isdigit():
        return SimToM(backend, cfg, n=int(name[9:]))
    if name.startswith("perceptom_sc") and name[12:].isdigit():
        return PercepToM(backend, cfg, n=int(name[12:]))
    if name == "cogrsi":
        return GroundedReader(backend, principle, cfg, name="cogrsi")
    raise ValueError(f"unknown system {name!r}; known: {SYSTEMS}")


def make_systems(
    backend: Backend,
    names: Iterable[str] = SYSTEMS,
    config: ReaderConfig | None = None,
    principle: str | None = "expert",
) -> dict[str, System]:
    return {n: make_system(n, backend, config, principle) for n in names}


__all__ = [
    "SYSTEMS",
    "PercepToM",
    "SimToM",
    "SinglePrompt",
    "chain_of_thought",
    "make_system",
    "make_systems",
    "question_characters",
    "self_consistency",
    "zero_shot",
]
