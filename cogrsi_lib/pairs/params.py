"""The ``pairs`` stage's parameters, and the pair-split settings other stages take (their
schemas; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from typing import Any

import polars as pl
from pydantic import NonNegativeInt, model_validator

from cogrsi_lib.settings import Settings
from cogrsi_lib.stage_params import StageParams


class PairSplits(Settings):
    """The gate and evaluation splits of the counterfactual pairs (pairs per form), drawn
    with different seeds (:func:`~cogrsi_lib.pairs.records.build_splits`); defaults: the
    paper's sizes."""

    gate_seed: int = 11
    eval_seed: int = 23
    n_gate_narrative: NonNegativeInt = 48
    n_gate_dialogue: NonNegativeInt = 48
    n_eval_narrative: NonNegativeInt = 160
    n_eval_dialogue: NonNegativeInt = 160

    @model_validator(mode="after")
    def _two_seeds(self) -> Any:
        if self.gate_seed == self.eval_seed:
            raise ValueError("the gate and evaluation splits must be drawn with different seeds")
        for split in ("gate", "eval"):
            if not getattr(self, f"n_{split}_narrative") + getattr(self, f"n_{split}_dialogue"):
                raise ValueError(f"the {split} split would be empty: n_{split}_narrative + "
                                 f"n_{split}_dialogue must be at least 1")
        return self

    def build(self) -> dict[str, pl.DataFrame]:
        """Both splits as pair-record frames."""
        from cogrsi_lib.pairs.records import build_splits

        return build_splits(**self.model_dump())


class EvalPairs(Settings):
    """The evaluation split alone (pairs per form)."""

    eval_seed: int = 23
    n_eval_narrative: NonNegativeInt = 160
    n_eval_dialogue: NonNegativeInt = 160


class PairsParams(StageParams, PairSplits):
    """``pairs``: counterfactual gate and eval splits (pairs per form)."""

    n_gate_narrative: NonNegativeInt = 16
    n_gate_dialogue: NonNegativeInt = 12
    n_eval_narrative: NonNegativeInt = 16
    n_eval_dialogue: NonNegativeInt = 12
