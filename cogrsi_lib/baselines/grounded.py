"""The grounded reader (:mod:`cogrsi_lib.reader.reader`, CogRSI §4.1) as the reader system
``cogrsi``, beside its baselines."""

from __future__ import annotations

from cogrsi_lib.baselines.registry import reader_system
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.reader import GroundedReader, ReaderConfig


@reader_system("cogrsi")
def cogrsi(backend: Backend, config: ReaderConfig, principle: str | None) -> GroundedReader:
    return GroundedReader(backend, principle, config, name="cogrsi")
