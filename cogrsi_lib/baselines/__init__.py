"""Baselines of CogRSI §5 (zero-shot, CoT, SC k=6/9, SimToM, PercepToM, and their +SC forms)
and every reader system by name (:mod:`cogrsi_lib.baselines.registry`)."""

from __future__ import annotations

from collections.abc import Iterable

from cogrsi_lib.baselines import registry
from cogrsi_lib.baselines.registry import (
    check_systems,
    is_system,
    make_system,
    reader_system,
    standard_systems,
)
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
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.reader.system import System

registry.discover()

#: the standard set (what params.gpu.yaml's reader_eval runs), from the registrations
SYSTEMS: tuple[str, ...] = standard_systems()


def make_systems(
    backend: Backend,
    names: Iterable[str] = SYSTEMS,
    config: ReaderConfig | None = None,
    principle: str | None = "expert",
) -> dict[str, System]:
    return {n: make_system(n, backend, config, principle) for n in check_systems(names)}


__all__ = [
    "SYSTEMS",
    "PercepToM",
    "SimToM",
    "SinglePrompt",
    "chain_of_thought",
    "check_systems",
    "is_system",
    "make_system",
    "make_systems",
    "question_characters",
    "reader_system",
    "self_consistency",
    "standard_systems",
    "zero_shot",
]
