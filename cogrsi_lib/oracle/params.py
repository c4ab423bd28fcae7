"""The ``oracle_worlds`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`), and
the oracle-world samples other stages take."""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveInt

from cogrsi_lib.settings import Settings
from cogrsi_lib.stage_params import StageParams

Testimony = Literal["latest", "fresher_access"]  # oracle SEMANTICS.md, "Testimony"
Opening = Literal["common_ground", "unknown"]  # oracle SEMANTICS.md, "Opening"


class OracleWorldsParams(StageParams):
    """``oracle_worlds``: sampled worlds and their questions (CogRSI App. B)."""

    n_worlds: int = 200
    min_agents: int = 2
    max_agents: int = 3
    n_containers: int = 3
    min_events: int = 4
    max_events: int = 10
    max_depth: int = 2
    p_hidden_observer: float = 0.1  # chance a move or change is secretly watched from outside
    p_missed: float = 0.1  # chance an onlooker misses a move or change unnoticed
    testimony: Testimony = "latest"
    opening: Opening = "common_ground"
    seed: int = 0


class WorldSample(Settings):
    """A sample of oracle worlds: how many, their seed and the deepest question asked."""

    n_worlds: PositiveInt
    seed: int
    max_depth: PositiveInt = 2
