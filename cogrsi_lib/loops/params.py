"""The ``loops`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`); its
``shadow_study`` is the registration study's :class:`~cogrsi_lib.audit.settings.StudyConfig`.

The stage's model is ``model`` (a :data:`~cogrsi_lib.llm.spec.ModelSpec`): ``scripted`` (the
CI default: :mod:`cogrsi_lib.loops.scripted`'s world, no model), ``embedded`` (the CPU model,
for the tiny setting), ``vllm`` or ``openai`` (the full setting).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    Discriminator,
    NonNegativeInt,
    PositiveInt,
    Tag,
    model_validator,
)

from cogrsi_lib.audit.settings import AuditGateSettings, Situations, StudyConfig
from cogrsi_lib.llm.spec import StageModel
from cogrsi_lib.loops.arms import ArmConfig, arm_from_spec, builtin_arms
from cogrsi_lib.oracle.params import WorldSample
from cogrsi_lib.pairs.params import PairSplits
from cogrsi_lib.reader.params import StageReader
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.settings import NonEmptyList, Settings
from cogrsi_lib.stage_params import ModelStageParams

if TYPE_CHECKING:
    from cogrsi_lib.loops.engine import LoopSettings

GEPA = "gepa"
#: the built-in arms (cogrsi_lib/loops/arms.py)
BUILTIN_ARMS = tuple(builtin_arms())


class ArmSpec(Settings):
    """An arm of one's own: ``base`` (a built-in arm, else a library arm with the default
    registration rule) with these settings changed (cogrsi_lib/loops/arms.py)."""

    name: str
    base: Literal[BUILTIN_ARMS] | None = None  # type: ignore[valid-type]
    artifact: Literal["library", "principle"] | None = None
    delta: float | None = None
    min_nonneg: NonNegativeInt | None = None
    gates: tuple[Literal["counterfactual", "audit"], ...] | None = None
    pairs_as_data: bool | None = None

    def config(self, delta: float, min_nonneg: int, loose_delta: float) -> ArmConfig:
        return arm_from_spec(self.model_dump(exclude_none=True), delta, min_nonneg, loose_delta)


ArmName = Literal[(*BUILTIN_ARMS, GEPA)]  # type: ignore[valid-type]
#: an arm: a built-in one (or ``gepa``) by name, or one's own
Arm = Annotated[
    Union[Annotated[ArmName, Tag("name")], Annotated[ArmSpec, Tag("spec")]],  # noqa: UP007
    Discriminator(lambda v: "name" if isinstance(v, str) else "spec"),
]


class LoopsParams(ModelStageParams):
    """``loops``: strategy-evolution loops (CogRSI §4.2, App. C.2); the stage's settings."""

    arms: NonEmptyList[Arm] = ["accuracy_loop", "accuracy_library", "gated_library",
                       "pairs_as_data", "single_principle", "gepa"]
    seeds: NonEmptyList[int] = [0]
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
    model: StageModel = "scripted"
    reader: StageReader = ReaderConfig()  # the reader's settings (``structured``: the stage's)
    builder_temperature: float = 0.7
    builder_max_tokens: int = 512
    dev_stories: int = 60
    dev_seed: int = 101
    dev_max_depth: int = 2
    dev_situations: Situations = "exploretom"
    dev_benchmarks: list[str] = []
    manifest_dir: str = "data/manifests"
    pairs: PairSplits = PairSplits(n_gate_narrative=8, n_gate_dialogue=4, n_eval_narrative=8,
                                   n_eval_dialogue=4)
    eval_pairs: bool = True
    #: Table 1's Test Main and BigToM-U columns (CogRSI §5.2): every final principle (none,
    #: expert, each arm's) on the first ``test_main`` questions of each of
    #: ``test_benchmarks``' main test sample (S3, from ``manifest_dir``; Main: the mean over
    #: them) and on the first ``bigtom_u_pairs`` BigToM-U pairs (800: all)
    test_benchmarks: list[str] = []
    test_main: NonNegativeInt = 0
    bigtom_u_pairs: NonNegativeInt = 0
    shadow: bool = True  # the counterfactual gate on every candidate of every arm, logged
    #: the symbolic shadow-registration study (Figure 7); ``dev_situations``, ``delta``,
    #: ``min_nonneg`` and ``gate_tolerance`` are this section's unless given; null skips it
    shadow_study: StudyConfig | None = StudyConfig(
        arms=("accuracy_library", "gated_library"), seeds=(0, 1), rounds=3, dev_stories=120,
        final_size=40, pairs=PairSplits(n_gate_narrative=8, n_gate_dialogue=8,
                                        n_eval_narrative=8, n_eval_dialogue=8))
    #: the audit's sample for ``shadow_study``
    shadow_audit: WorldSample = WorldSample(n_worlds=150, seed=7, max_depth=2)
    gepa_seeds: list[int] = [0]
    gepa_budget: int = 60
    gepa_val_size: int = 8
    gepa_minibatch: int = 3
    gepa_reflection_max_tokens: PositiveInt = 2048  # the cap of each reflection's reply
    log_items: bool = False
    batch_size: int = 64
    #: the audit gate's settings (arm ``audit_library``), as ``params.yaml: audit``
    audit: AuditGateSettings | None = None
    noise_sd: float = 2.7
    noise_rounds: int = 100000
    structured: bool = True

    @model_validator(mode="after")
    def _test_sample_named(self) -> Any:
        if self.test_main and not self.test_benchmarks:
            raise ValueError("test_main asks for test questions: name their test_benchmarks")
        from cogrsi_lib.bench.registry import MAIN_BENCHMARKS

        other = [b for b in self.test_benchmarks if b not in MAIN_BENCHMARKS]
        if other:
            raise ValueError(f"test_benchmarks {other} are not main benchmarks: Test Main "
                             f"averages main ones only ({', '.join(MAIN_BENCHMARKS)})")
        return self

    @model_validator(mode="after")
    def _arms_fit(self) -> Any:
        arms = self.arm_configs()
        if any("audit" in a.gates for a in arms) and self.audit is None:
            raise ValueError("an arm with the audit gate needs the gate's settings (its "
                             "translators at least): loops.audit")
        return self

    def arm_configs(self) -> list[ArmConfig]:
        """The arms but GEPA, as the engine runs them."""
        return [arm_from_spec(a, self.delta, self.min_nonneg, self.loose_delta)
                if isinstance(a, str) else a.config(self.delta, self.min_nonneg,
                                                    self.loose_delta)
                for a in self.arms if a != GEPA]

    @property
    def run_gepa(self) -> bool:
        return GEPA in self.arms

    def settings(self) -> LoopSettings:
        from cogrsi_lib.loops.engine import LoopSettings

        return LoopSettings(rounds=self.rounds, discovery_size=self.discovery_size,
                            trial_size=self.trial_size, n_trials=self.n_trials,
                            max_candidates=self.max_candidates,
                            failures_per_group=self.failures_per_group,
                            pair_groups=self.pair_groups, gate_all=self.gate_all,
                            log_items=self.log_items)

    def study(self) -> StudyConfig | None:
        """``shadow_study`` with this section's settings where it gives none of its own."""
        if self.shadow_study is None:
            return None
        given = self.shadow_study.model_fields_set
        inherited = {k: getattr(self, k) for k in ("dev_situations", "delta", "min_nonneg",
                                                   "gate_tolerance") if k not in given}
        return self.shadow_study.model_copy(update=inherited)
