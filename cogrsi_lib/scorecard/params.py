"""The ``scorecard`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`).

Its models are :data:`~cogrsi_lib.llm.spec.ModelSpec` settings. The scripted stand-ins
(``backend: scripted``) are the scorecard's scripted models (:mod:`.scripted`): ``default``,
``alt`` (Gate D's alternate: a weaker bare prompt, the same interventions) and, for Suite D's
cross-agent target only, ``other`` (a second scripted model whose preferences change).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import NonNegativeFloat, PositiveInt, field_validator, model_validator

from cogrsi_lib.llm.spec import stage_model
from cogrsi_lib.matrix import GreedyMatrixParams
from cogrsi_lib.scorecard.gates import GateConfig
from cogrsi_lib.scorecard.variants import INTERVENTIONS, REPLY_CAPS
from cogrsi_lib.settings import NonEmptyList, Settings

#: the scripted stand-ins a scorecard model may be, and those of the cross-agent target
MODEL_VARIANTS = ("default", "alt")
CROSS_VARIANTS = (*MODEL_VARIANTS, "other")
ScorecardModel = stage_model(*MODEL_VARIANTS)
CrossModel = stage_model(*CROSS_VARIANTS)


class ReplyCaps(Settings):
    """Reply caps (tokens) per prompt family (:data:`~.variants.REPLY_CAPS`)."""

    bare: PositiveInt = REPLY_CAPS["bare"]
    perspective: PositiveInt = REPLY_CAPS["perspective"]
    store: PositiveInt = REPLY_CAPS["store"]


class ScorecardParams(GreedyMatrixParams):
    """``scorecard``: recursive-reasoning profile, interventions and gates, for ``model`` or
    each of ``models`` (side by side, on the same frozen items; :mod:`cogrsi_lib.matrix`)."""

    GREEDY: ClassVar[str] = ("the scorecard's model calls are greedy, and a sampled "
                             "cross-agent target draws each task by its prompt")
    model: ScorecardModel = "scripted"
    models: list[ScorecardModel] | None = None  # type: ignore[assignment]
    #: Gate D's alternate model; None: that replication is not run
    alt_model: ScorecardModel | None = {"backend": "scripted", "variant": "alt"}
    n_per_cell: int = 4
    n_agents: int = 4
    n_containers: int = 4
    min_events: int = 8
    max_events: int = 16
    seed: int = 5
    replication_seed: int = 17
    applied_depths: NonEmptyList[int] = [1, 2, 3]
    n_per_game: int = 2
    strategic_seed: int = 3
    history_length: int = 10
    opponent_noise: float = 0.15
    selfpred_classes: list[str] = ["colour"]
    selfpred_test: int = 4
    observation_counts: NonEmptyList[int] = [0, 5, 10, 20]
    selfpred_seed: int = 7
    interventions: list[str] = ["perspective", "store"]
    bootstrap_resamples: int = 300
    #: gate thresholds; ``n_resamples``, unless given, is ``bootstrap_resamples``
    gates: GateConfig = GateConfig()
    reply_caps: ReplyCaps = ReplyCaps()
    #: Suite D's cross-agent target (the predictor's own model only when sampled)
    cross_model: CrossModel = {"backend": "scripted", "variant": "other"}
    cross_temperature: NonNegativeFloat = 0.0  # > 0 when it is the predictor's own model
    structured: bool = True  # enforce each reply's declared format while decoding

    @field_validator("interventions")
    @classmethod
    def _known_interventions(cls, value: list[str]) -> list[str]:
        bad = sorted(set(value) - set(INTERVENTIONS))
        if bad:
            raise ValueError(f"unknown interventions {bad}; known: {sorted(INTERVENTIONS)}")
        return value

    @model_validator(mode="after")
    def _models_fit(self) -> Any:
        for model in self.model_list():
            if (model.backend != "scripted" and self.alt_model is not None
                    and self.alt_model.backend == "scripted"):
                raise ValueError("a scripted alternate model cannot replicate a real model's "
                                 "result: set alt_model to another model, or to null (Gate D "
                                 "then not run)")
            if self.cross_model == model and self.cross_temperature == 0:
                raise ValueError("the cross-agent target would be the self target (same "
                                 "model, same frozen prompt, greedy): set cross_temperature "
                                 "> 0 or another cross_model")
        return self

    def gate_config(self) -> GateConfig:
        """The gate thresholds, resampling ``bootstrap_resamples`` times unless
        ``gates.n_resamples`` says otherwise."""
        if "n_resamples" in self.gates.model_fields_set:
            return self.gates
        return self.gates.model_copy(update={"n_resamples": self.bootstrap_resamples})
