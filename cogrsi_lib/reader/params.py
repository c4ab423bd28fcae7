"""The ``reader_eval`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`), and
the reader settings other stages take."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.pairs.params import EvalPairs
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.stage_params import StageParams


def _stage_structured(config: ReaderConfig) -> ReaderConfig:
    if "structured" in config.model_fields_set:
        raise ValueError("set the stage's own 'structured', not the reader's")
    return config


#: :class:`ReaderConfig` overrides of a stage; ``structured`` is the stage's own setting
StageReader = Annotated[ReaderConfig, AfterValidator(_stage_structured)]


class ReaderEvalParams(StageParams):
    """``reader_eval``: the grounded reader and baselines on eval pairs and benchmark heads."""

    model: RealModel = {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}}
    systems: list[str] = ["zero_shot", "sc6", "perceptom", "cogrsi"]
    principle: str = "expert"
    reader_config: StageReader = ReaderConfig(sample_max_tokens=96, perception_max_tokens=160)
    structured: bool = True
    reference: str = "sc6"  # the system every other one is compared with (paired bootstrap)
    pairs: EvalPairs = EvalPairs()
    n_pairs: int = 3
    benchmarks: list[str] = ["tombench", "tomi"]
    n_per_benchmark: int = 2
    batch_size: int = 64
    # also ask the benchmark items zero-shot under each benchmark's official protocol (its
    # released prompt and rule; answer form enforced when ``structured``)
    official: bool = True
    official_max_tokens: int = 48

    def reader(self) -> ReaderConfig:
        """The reader's settings with the stage's ``structured``."""
        return self.reader_config.model_copy(update={"structured": self.structured})
