"""The ``harness`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from pydantic import NonNegativeInt, PositiveInt

from cogrsi_lib.harness.runtime import HarnessConfig
from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.matrix import GreedyMatrixParams
from cogrsi_lib.oracle.params import WorldSample
from cogrsi_lib.settings import NonEmptyList, Settings


class HarnessCalls(Settings):
    """The harness's call settings (:class:`~cogrsi_lib.harness.runtime.HarnessConfig`'s;
    its modules, control layer and Selector mode are each ablation's own, ``structured``
    the stage's)."""

    answer_max_tokens: PositiveInt = HarnessConfig.answer_max_tokens
    route_max_tokens: PositiveInt = HarnessConfig.route_max_tokens
    max_reroutes: NonNegativeInt = HarnessConfig.max_reroutes
    state_witnesses: str = HarnessConfig.state_witnesses
    seed: int = HarnessConfig.seed


class HarnessDev(Settings):
    """SAGE's distillation on development items: ToMBench and oracle items (the oracle's
    seed), the distillation budget and rounds, and the Reflector's reply cap."""

    n_tombench: NonNegativeInt = 3
    n_oracle: NonNegativeInt = 2
    oracle_seed: int = 43
    rounds: PositiveInt = 1
    budget: PositiveInt = 32
    max_tokens: PositiveInt = 64


class HarnessParams(GreedyMatrixParams):
    """``harness``: the Actio-style harness ablations, routing and memory agreement, for each
    model of ``models`` (or the one ``model``) side by side, as the report's Table 10 sets its
    five models (:mod:`cogrsi_lib.matrix`). The harness answers greedily, so ``runs`` is 1."""

    GREEDY = "the harness answers greedily"

    model: RealModel = {"backend": "fake", "reply": {
        "answer": "A", "variable": "desire", "skill": "desire.preference", "dimension": "Belief",
        "categories": ["faux_pas"], "labels": {}}}
    ablations: NonEmptyList[str] = ["base", "skills", "memory", "retrieval", "full",
                                    "full_ungated", "state"]
    harness_config: HarnessCalls = HarnessCalls()
    benchmarks: list[str] = ["tombench", "hi-tom"]
    n_per_benchmark: int = 3  # a seeded random sample of each benchmark (``sample_seed``)
    sample_seed: int = 0
    n_oracle: int = 3
    oracle_seed: int = 41
    dev: HarnessDev = HarnessDev()
    #: Starling against the oracle: a sample of oracle worlds
    agreement: WorldSample = WorldSample(n_worlds=50, seed=0, max_depth=4)
    batch_size: int = 64
    structured: bool = True

    def call_settings(self) -> dict[str, object]:
        """:class:`HarnessConfig` keywords: the call settings and the stage's ``structured``."""
        return {**self.harness_config.model_dump(), "structured": self.structured}
