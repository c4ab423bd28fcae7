"""The ``benchmarks`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt, field_validator

from cogrsi_lib.bench.manifest import DEFAULT_SEEDS
from cogrsi_lib.settings import NonEmptyList, Settings
from cogrsi_lib.stage_params import StageParams

Split = Literal["S0", "S1", "S2", "S3", "S4"]  # cogrsi_lib/bench/manifest.py: SPLIT_NAMES


class SplitSizes(Settings):
    """Questions drawn per split (by whole stories: a split may overshoot by one story)."""

    S0: NonNegativeInt = 5
    S1: NonNegativeInt = 0
    S2: NonNegativeInt = 20
    S3: NonNegativeInt = 40
    S4: NonNegativeInt = 30


class SplitSeeds(Settings):
    """Each split's sampling seed (CogRSI App. E.2)."""

    S0: int = DEFAULT_SEEDS["S0"]
    S1: int = DEFAULT_SEEDS["S1"]
    S2: int = DEFAULT_SEEDS["S2"]
    S3: int = DEFAULT_SEEDS["S3"]
    S4: int = DEFAULT_SEEDS["S4"]


class BenchmarksParams(StageParams):
    """``benchmarks``: item counts, manifests and constant-answer baselines."""

    benchmarks: list[str] | None = None  # None: every benchmark present in data/benchmarks
    sample_sizes: SplitSizes = SplitSizes()
    #: per benchmark, the splits whose sizes differ from ``sample_sizes``
    sample_sizes_by_benchmark: dict[str, dict[Split, NonNegativeInt]] = {}
    seeds: SplitSeeds = SplitSeeds()
    systems: NonEmptyList[str] = ["CogRSI", "SC-k9"]
    constant_top: int = 3

    @field_validator("sample_sizes_by_benchmark")
    @classmethod
    def _known_benchmarks(cls, value: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
        from cogrsi_lib.bench.registry import names

        unknown = sorted(set(value) - set(names()))
        if unknown:
            raise ValueError(f"unknown benchmarks {unknown} (known: {', '.join(names())})")
        return value
