"""Stage parameters: one typed schema per pipeline stage.

Each stage notebook has one parameter, ``params``: the stage's section of ``params.yaml``
(``cogrsi stage`` injects it). The schema below fills in every key the section leaves out
with the small default that CI and a plain notebook run use, and refuses a key it does not
know, so a misspelt key stops ``cogrsi stage`` before any work. ``params.yaml`` holds the CPU
setting of the embedded default; ``params.gpu.yaml`` the papers' setting (``backend: vllm``).
Nested mappings (backend settings, reader overrides, ...) are checked by the library parts
that take them.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
    field_validator,
    model_validator,
)

__all__ = ["SCHEMAS", "StageParams", "StageParamsError", "load", "validate_file"]

Testimony = Literal["latest", "fresher_access"]  # oracle SEMANTICS.md, "Testimony"
Opening = Literal["common_ground", "unknown"]  # oracle SEMANTICS.md, "Opening"
NESTED_DEPTHS = ("R0", "R1", "R2", "R3", "R4")  # the nested benchmark's (``nested`` stage)
Model = str | dict[str, Any]  # a named model ("embedded", "scripted") or llm backend settings


class StageParamsError(ValueError):
    """A stage's parameters do not fit its schema; the message names the stage and keys."""


class StageParams(BaseModel):
    """Common base: unknown keys refused; a loaded set of parameters is read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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


class PairsParams(StageParams):
    """``pairs``: counterfactual gate and eval splits (pairs per form)."""

    gate_seed: int = 11
    eval_seed: int = 23
    n_gate_narrative: int = 16
    n_gate_dialogue: int = 12
    n_eval_narrative: int = 16
    n_eval_dialogue: int = 12


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


class BenchmarksParams(StageParams):
    """``benchmarks``: item counts, manifests and constant-answer baselines."""

    benchmarks: list[str] | None = None  # None: every benchmark present in data/benchmarks
    sample_sizes: dict[str, int] = {"S0": 5, "S1": 0, "S2": 20, "S3": 40, "S4": 30}
    sample_sizes_by_benchmark: dict[str, dict[str, int]] = {}
    seeds: dict[str, int] = {"S0": 0, "S1": 2, "S2": 0, "S3": 1, "S4": 3}
    systems: list[str] = ["CogRSI", "SC-k9"]
    constant_top: int = 3


class ScorecardParams(StageParams):
    """``scorecard``: recursive-reasoning profile, interventions and gates."""

    model: Model = "scripted"  # "embedded" (the CPU model), "scripted" or llm settings
    alt_model: Model | None = "scripted-alt"  # Gate D's alternate model; None: not run
    llm_cache_dir: str = ".cache/llm"
    n_per_cell: int = 4
    n_agents: int = 4
    n_containers: int = 4
    min_events: int = 8
    max_events: int = 16
    seed: int = 5
    replication_seed: int = 17
    applied_depths: list[int] = [1, 2, 3]
    n_per_game: int = 2
    strategic_seed: int = 3
    history_length: int = 10
    opponent_noise: float = 0.15
    selfpred_classes: list[str] = ["colour"]
    selfpred_test: int = 4
    observation_counts: list[int] = [0, 5, 10, 20]
    selfpred_seed: int = 7
    interventions: list[str] = ["perspective", "store"]
    bootstrap_resamples: int = 300
    gates: dict[str, Any] = {}
    reply_caps: dict[str, int] = {}  # per prompt family (bare 64, perspective 160, store 320)
    cross_model: Model = "scripted-other"  # Suite D's cross-agent target
    cross_temperature: float = 0.0  # > 0 when it is the predictor's own model
    structured: bool = True  # enforce each reply's declared format while decoding


class ReaderEvalParams(StageParams):
    """``reader_eval``: the grounded reader and baselines on eval pairs and benchmark heads."""

    llm: dict[str, Any] = {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}}
    systems: list[str] = ["zero_shot", "sc6", "perceptom", "cogrsi"]
    principle: str = "expert"
    reader_config: dict[str, Any] = {"sample_max_tokens": 96, "perception_max_tokens": 160}
    structured: bool = True
    reference: str = "sc6"  # the system every other one is compared with (paired bootstrap)
    pairs: dict[str, int] = {"eval_seed": 23, "n_eval_narrative": 160, "n_eval_dialogue": 160}
    n_pairs: int = 3
    benchmarks: list[str] = ["tombench", "tomi"]
    n_per_benchmark: int = 2
    batch_size: int = 64
    # also ask the benchmark items zero-shot under each benchmark's official protocol (its
    # released prompt and rule; answer form enforced when ``structured``)
    official: bool = True
    official_max_tokens: int = 48

    @field_validator("systems", "reference")
    @classmethod
    def _registered(cls, names: list[str] | str) -> list[str] | str:
        """Only registered reader systems (cogrsi_lib/baselines/registry.py). Imported by
        name: the other stages' dependencies (cogrsi_lib/dvc_graph.py) stay without it."""
        registry = importlib.import_module("cogrsi_lib.baselines.registry")
        registry.check_systems([names] if isinstance(names, str) else names)
        return names


class LoopsParams(StageParams):
    """``loops``: strategy-evolution loops (CogRSI §4.2, App. C.2)."""

    # arm names, or mappings {name, base, delta, ...} (cogrsi_lib/loops/arms.py)
    arms: list[str | dict[str, Any]] = ["accuracy_loop", "accuracy_library", "gated_library",
                                        "pairs_as_data", "single_principle", "gepa"]
    seeds: list[int] = [0]
    rounds: int = 2
    discovery_size: int = 8
    trial_size: int = 8
    n_trials: int = 3
    final_size: int = 24
    heldout_size: int = 12
    max_candidates: int = 4
    failures_per_group: int = 4
    pair_groups: int = 2
    delta: float = 3.0
    min_nonneg: int = 2
    loose_delta: float = 1.0
    gate_tolerance: int = 2
    gate_all: bool = False
    backend: Literal["scripted", "embedded", "vllm", "openai"] = "scripted"
    llm: dict[str, Any] = {}
    reader: dict[str, Any] = {}
    builder_temperature: float = 0.7
    builder_max_tokens: int = 512
    dev_stories: int = 60
    dev_seed: int = 101
    dev_max_depth: int = 2
    dev_situations: Literal["exploretom", "oracle"] = "exploretom"
    dev_benchmarks: list[str] = []
    manifest_dir: str = "data/manifests"
    pairs: dict[str, int] = {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8,
                             "n_gate_dialogue": 4, "n_eval_narrative": 8, "n_eval_dialogue": 4}
    eval_pairs: bool = True
    shadow: bool = True  # the counterfactual gate on every candidate of every arm, logged
    # the symbolic shadow-registration study (Figure 7): StudyConfig settings
    # (cogrsi_lib/loops/registration_study.py) and its audit sample; {} skips it
    shadow_study: dict[str, Any] = {
        "arms": ["accuracy_library", "gated_library"], "seeds": [0, 1], "rounds": 3,
        "dev_stories": 120, "final_size": 40,
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8,
                  "n_gate_dialogue": 8, "n_eval_narrative": 8, "n_eval_dialogue": 8},
    }
    shadow_audit: dict[str, int] = {"n_worlds": 150, "seed": 7, "max_depth": 2}
    gepa_seeds: list[int] = [0]
    gepa_budget: int = 60
    gepa_val_size: int = 8
    gepa_minibatch: int = 3
    log_items: bool = False
    batch_size: int = 64
    audit: dict[str, Any] = {}
    noise_sd: float = 2.7
    noise_rounds: int = 100000
    structured: bool = True


class AuditParams(StageParams):
    """``audit``: semantic audit of rules and the audit-in-registration comparison."""

    n_worlds: int = 300
    seed: int = 7
    max_depth: int = 2
    rules: str = "handwritten"  # or a candidates file (rule_id, text, ...)
    translators: list[dict[str, Any]] = [
        {"name": "A", "llm": {"backend": "scripted"}, "prompt": "literal", "seed": 0},
        {"name": "B", "llm": {"backend": "scripted"}, "prompt": "plain", "seed": 1},
    ]
    max_tokens: int = 8192
    recompile_max_tokens: int | None = None
    vacuous_threshold: float = 0.001
    agreement_threshold: float = 0.8
    agreement_over: Literal["either", "both"] = "either"
    limits: dict[str, Any] = {"wall_s": 120, "cpu_s": 60, "memory_mb": 1024,
                              "require_seccomp": True}
    workers: int | None = None
    replay: dict[str, Any] = {
        "reader": {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}},
        "reader_config": {}, "max_per_rule": 5, "n_controls": 5, "seed": 0,
    }
    check_expected: bool = True
    structured: bool = True
    reference_translations: bool = True  # model translators: also audit the reference code
    registration: dict[str, Any] = {
        "arms": ["accuracy_library", "gated_library", "audit_library"],
        "seeds": [0], "rounds": 2, "dev_stories": 120, "final_size": 80,
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8,
                  "n_gate_dialogue": 8, "n_eval_narrative": 16, "n_eval_dialogue": 16},
    }


class PddlMindParams(StageParams):
    """``pddl_mind``: the PDDL-Mind ladder on oracle stories and benchmark items."""

    backend: Literal["scripted", "embedded", "vllm", "openai", "fake"] = "scripted"
    llm: dict[str, Any] = {}  # build_backend settings for a real backend
    script: dict[str, Any] = {}  # scripted backend: p_malformed, p_drop, p_bad_domain, seed
    n_stories: int = 6
    questions_per_story: int = 2
    max_depth: int = 2
    min_agents: int = 2
    max_agents: int = 3
    min_events: int = 3
    max_events: int = 8
    seed: int = 0
    n_cross_check: int = 40
    benchmarks: list[str] = ["fantom", "mmtom-qa", "muma-tom"]
    n_per_category: int = 2  # items (FANToM: question sets) per question type, drawn at random
    sample_seed: int = 0
    variants: list[str] = ["no_verification", "no_domain", "full"]
    parse_max_tokens: int = 4096   # paper B.1: 4,096 for every call
    domain_max_tokens: int = 4096
    answer_max_tokens: int = 4096
    structured: bool = True


class HarnessParams(StageParams):
    """``harness``: the Actio-style harness ablations, routing and memory agreement."""

    llm: dict[str, Any] = {"backend": "fake", "reply": {
        "answer": "A", "variable": "desire", "skill": "desire.preference", "dimension": "Belief",
        "categories": ["faux_pas"], "labels": {}}}
    ablations: list[str] = ["base", "skills", "memory", "retrieval", "full", "full_ungated"]
    harness_config: dict[str, Any] = {"answer_max_tokens": 32, "route_max_tokens": 32,
                                      "max_reroutes": 1}
    benchmarks: list[str] = ["tombench", "hi-tom"]
    n_per_benchmark: int = 3
    n_oracle: int = 3
    oracle_seed: int = 41
    dev: dict[str, Any] = {"n_tombench": 3, "n_oracle": 2, "oracle_seed": 43, "rounds": 1,
                           "budget": 32, "max_tokens": 64}
    agreement: dict[str, Any] = {"n_worlds": 50, "seed": 0, "max_depth": 4}
    batch_size: int = 64
    structured: bool = True


class LoraParams(StageParams):
    """The LoRA adapter's shape (peft)."""

    r: int = 8
    alpha: int = 16
    dropout: float = 0.0
    target_modules: str | list[str] = "all-linear"


class SftParams(StageParams):
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


class GrpoParams(StageParams):
    """GRPO after SFT (trl's GRPOTrainer; reward: the oracle's answer). ``steps: 0`` skips it."""

    steps: int = 1
    prompts_per_step: int = 1
    generations: int = 2
    lr: float = 2e-5
    beta: float = 0.0
    temperature: float = 1.0
    max_completion_tokens: int = 16


class TrainParams(StageParams):
    """``train``: LoRA fine-tuning of the embedded model on oracle items, and base vs trained
    on held-out oracle items, the eval pairs and the benchmark samples."""

    seed: int = 0
    n_worlds: int = 12  # training worlds (train lexicon); ``per_world`` questions each
    per_world: int = 3
    max_depth: int = 4
    depth_weights: list[float] = [2.0, 4.0, 2.0, 1.0, 1.0]  # questions drawn by depth R0..R4
    false_belief_share: float = Field(0.5, ge=0.0, le=1.0)  # of the questions at R1..R4
    max_agents: int = 3
    min_events: int = 3
    max_events: int = 8
    # share of the worlds from each situation set (cogrsi_lib/oracle/situations.py)
    situations: dict[Literal["tomi", "exploretom", "oracle"], PositiveFloat] = {
        "exploretom": 1.0, "oracle": 1.0}
    n_examples: int = 8
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
    # evaluation, base vs trained: the model's settings (the adapter is added for "trained")
    llm: dict[str, Any] = {"backend": "embedded", "cache_dir": None}
    # held-out oracle items per depth and partition: one count, or one per depth R0..R4
    eval_n_per_depth: PositiveInt | Annotated[list[NonNegativeInt], Field(
        min_length=len(NESTED_DEPTHS), max_length=len(NESTED_DEPTHS))] = 1
    eval_nested: dict[str, Any] = {"seed": 5, "n_agents": 4, "n_containers": 4,
                                   "min_events": 8, "max_events": 16}
    eval_pairs: dict[str, int] = {"eval_seed": 23, "n_eval_narrative": 160,
                                  "n_eval_dialogue": 160}
    eval_n_pairs: int = 1
    eval_benchmarks: dict[str, int] = {"tomi": 1}  # items per question type
    eval_open: list[str] = ["oracle_nested"]  # sets also asked as open questions (no options)
    # strata (by prefix) of sets also asked open after thinking first, as traced examples are
    eval_traced: dict[str, list[str]] = {}
    eval_seed: int = 0
    bootstrap_resamples: int = 2000

    @model_validator(mode="after")
    def _some_nested_item(self) -> TrainParams:  # refused before any training, not after
        if self.eval_n_per_depth == [0] * len(NESTED_DEPTHS):
            raise ValueError("eval_n_per_depth: every count is 0")
        return self


SCHEMAS: dict[str, type[StageParams]] = {
    "oracle_worlds": OracleWorldsParams, "pairs": PairsParams, "nested": NestedParams,
    "benchmarks": BenchmarksParams, "scorecard": ScorecardParams,
    "reader_eval": ReaderEvalParams, "loops": LoopsParams, "audit": AuditParams,
    "pddl_mind": PddlMindParams, "harness": HarnessParams, "train": TrainParams,
}


def load(stage: str, given: Mapping[str, Any] | None = None) -> StageParams:
    """The stage's parameters: ``given`` over the schema's defaults, checked.

    Raises :class:`StageParamsError` naming the stage and every offending key."""
    if stage not in SCHEMAS:
        raise StageParamsError(f"no parameter schema for stage '{stage}' "
                               f"(stages: {', '.join(SCHEMAS)})")
    try:
        return SCHEMAS[stage].model_validate(dict(given or {}))
    except ValidationError as err:
        problems = "; ".join(_describe(e) for e in err.errors())
        raise StageParamsError(f"stage '{stage}': {problems}") from None


def validate_file(params: Mapping[str, Any]) -> dict[str, StageParams]:
    """Every stage section of a parsed params file, checked; unknown sections refused."""
    unknown = sorted(set(params) - set(SCHEMAS))
    if unknown:
        raise StageParamsError(f"unknown stage sections {unknown} (stages: {', '.join(SCHEMAS)})")
    return {name: load(name, section or {}) for name, section in params.items()}


def _describe(e: Mapping[str, Any]) -> str:
    key = ".".join(str(p) for p in e["loc"]) or "(section)"
    if e["type"] == "extra_forbidden":
        return f"unknown key '{key}'"
    return f"'{key}': {e['msg']} (got {e.get('input')!r})"
