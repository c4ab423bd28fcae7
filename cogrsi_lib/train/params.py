"""The ``train`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from cogrsi_lib.llm.backend import BackendSpec
from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.nested.items import NestedConfig
from cogrsi_lib.nested.params import NESTED_DEPTHS
from cogrsi_lib.oracle.params import Opening, Testimony
from cogrsi_lib.pairs.params import EvalPairs
from cogrsi_lib.settings import NonEmptyList, Settings
from cogrsi_lib.stage_params import ModelStageParams


class LoraParams(Settings):
    """The LoRA adapter's shape (peft)."""

    r: int = 8
    alpha: int = 16
    dropout: float = 0.0
    target_modules: str | list[str] = "all-linear"


class SftParams(Settings):
    """Supervised fine-tuning (trl's SFTTrainer; loss on the reply tokens only)."""

    steps: int = 2
    batch_size: int = 2
    grad_accum: int = 1
    lr: float = 1e-3
    warmup_steps: int = 0
    scheduler: str = "cosine"
    max_length: int = 1024
    bf16: bool = False  # bfloat16 autocast on the CPU (1.6x faster measured, with AMX)
    group_by_length: bool = False  # batches of similar lengths (less padding)


class GrpoParams(Settings):
    """GRPO after SFT (trl's GRPOTrainer; reward: the oracle's answer). ``steps: 0`` skips it."""

    steps: int = 1
    prompts_per_step: int = 1
    generations: int = 2
    lr: float = 2e-5
    beta: float = 0.0
    temperature: float = 1.0
    max_completion_tokens: int = 16


class EvalNested(Settings):
    """The held-out nested items' generator (:class:`~cogrsi_lib.nested.items.NestedConfig`,
    its count per cell aside: ``eval_n_per_depth``)."""

    n_agents: PositiveInt = 4
    n_containers: PositiveInt = 4
    min_events: PositiveInt = 8
    max_events: PositiveInt = 16
    seed: int = 5
    max_depth: PositiveInt = NestedConfig.max_depth
    max_worlds: PositiveInt = NestedConfig.max_worlds
    weights: tuple[tuple[str, float], ...] = NestedConfig.weights
    p_open_container: float = NestedConfig.p_open_container
    capped: tuple[str, ...] = NestedConfig.capped
    max_shortcut_share: float | None = NestedConfig.max_shortcut_share
    testimony: Testimony = "latest"
    opening: Opening = "common_ground"


def _adapter_capable(spec: BackendSpec) -> BackendSpec:
    if "adapter" not in type(spec).model_fields:
        raise ValueError(f"backend {spec.backend!r} cannot serve the trained adapter (embedded "
                         "or vllm can)")
    return spec


def _eval_sets() -> set[str]:
    from cogrsi_lib.bench.registry import names
    from cogrsi_lib.train.compare import NESTED, PAIRS

    return {NESTED, PAIRS, *names()}


class TrainParams(ModelStageParams):
    """``train``: LoRA fine-tuning of the embedded model on oracle items, and base vs trained
    on held-out oracle items, the eval pairs and the benchmark samples."""

    seed: int = 0
    n_worlds: int = 12  # training worlds (train lexicon); ``per_world`` questions each
    per_world: int = 3
    max_depth: int = 4
    #: questions drawn by depth R0..R4
    depth_weights: NonEmptyList[float] = [2.0, 4.0, 2.0, 1.0, 1.0]
    false_belief_share: float = Field(0.5, ge=0.0, le=1.0)  # of the questions at R1..R4
    max_agents: int = 3
    min_events: int = 3
    max_events: int = 8
    # share of the worlds from each situation set (cogrsi_lib/oracle/situations.py)
    situations: dict[Literal["tomi", "exploretom", "oracle"], PositiveFloat] = {
        "exploretom": 1.0, "oracle": 1.0}
    n_examples: int = 8
    #: share of the examples of each family (cogrsi_lib/train/examples.py: FAMILIES)
    mix: dict[str, float] = {"answer.plain": 0.35, "answer.open": 0.2, "answer.annotated": 0.15,
                             "reader.perception": 0.05, "reader.arbitration": 0.1,
                             "pairs": 0.15}
    n_pairs: int = 4  # train-lexicon pairs per form (narrative, dialogue)
    n_heldout: int = 4  # held-out direct answers scored during training
    n_grpo: int = 4  # direct-answer prompts for GRPO
    lora: LoraParams = LoraParams()
    sft: SftParams = SftParams()
    grpo: GrpoParams = GrpoParams()
    checkpoint_every: int = 1
    heldout_every: int = 1
    threads: int | None = None
    work_dir: str = ".cache/train"  # checkpoints, one folder per run fingerprint
    #: evaluation, base vs trained: the model (its ``adapter`` is set for "trained")
    model: Annotated[RealModel, AfterValidator(_adapter_capable)] = {
        "backend": "embedded", "cache_dir": None}
    # held-out oracle items per depth and partition: one count, or one per depth R0..R4
    eval_n_per_depth: PositiveInt | Annotated[list[NonNegativeInt], Field(
        min_length=len(NESTED_DEPTHS), max_length=len(NESTED_DEPTHS))] = 1
    eval_nested: EvalNested = EvalNested()
    eval_pairs: EvalPairs = EvalPairs()
    eval_n_pairs: int = 1
    #: items per question type, by benchmark
    eval_benchmarks: dict[str, NonNegativeInt] = {"tomi": 1}
    eval_open: list[str] = ["oracle_nested"]  # sets also asked as open questions (no options)
    # strata (by prefix) of sets also asked open after thinking first, as traced examples are
    eval_traced: dict[str, list[str]] = {}
    eval_seed: int = 0
    bootstrap_resamples: int = 2000

    @field_validator("mix")
    @classmethod
    def _known_families(cls, value: dict[str, float]) -> dict[str, float]:
        from cogrsi_lib.train.examples import FAMILIES

        unknown = sorted(set(value) - set(FAMILIES))
        if unknown:
            raise ValueError(f"unknown example families {unknown} (known: {', '.join(FAMILIES)})")
        return value

    @field_validator("eval_benchmarks")
    @classmethod
    def _known_benchmarks(cls, value: dict[str, int]) -> dict[str, int]:
        from cogrsi_lib.bench.registry import names

        unknown = sorted(set(value) - set(names()))
        if unknown:
            raise ValueError(f"unknown benchmarks {unknown} (known: {', '.join(names())})")
        return value

    @field_validator("eval_open", "eval_traced")
    @classmethod
    def _known_sets(cls, value: Any) -> Any:
        unknown = sorted(set(value) - _eval_sets())
        if unknown:
            raise ValueError(f"unknown evaluation sets {unknown} (known: "
                             f"{', '.join(sorted(_eval_sets()))})")
        return value

    @model_validator(mode="after")
    def _some_nested_item(self) -> TrainParams:  # refused before any training, not after
        if self.eval_n_per_depth == [0] * len(NESTED_DEPTHS):
            raise ValueError("eval_n_per_depth: every count is 0")
        return self
