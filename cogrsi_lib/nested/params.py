"""The ``nested`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from cogrsi_lib.oracle.params import Opening, Testimony
from cogrsi_lib.stage_params import StageParams

NESTED_DEPTHS = ("R0", "R1", "R2", "R3", "R4")  # the nested benchmark's depths


class NestedParams(StageParams):
    """``nested``: R0-R4 nested-belief items."""

    n_per_cell: int = 10
    n_agents: int = 4
    n_containers: int = 4
    min_events: int = 8
    max_events: int = 16
    seed: int = 5
    testimony: Testimony = "latest"
    opening: Opening = "common_ground"
