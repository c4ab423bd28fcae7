"""The audit's typed settings: its translators, sample, verdict rule and sandbox limits.

The ``audit`` stage (:class:`~cogrsi_lib.audit.params.AuditParams`) and the loops' audit gate
(``loops.audit``, :class:`AuditGateSettings`) take the same settings, checked here once and
turned into an :class:`~cogrsi_lib.audit.audit.AuditConfig` by :meth:`AuditSettings.config`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, Field, NonNegativeInt, PositiveInt

from cogrsi_lib.audit.sandbox import SandboxLimits
from cogrsi_lib.llm.spec import StageModel
from cogrsi_lib.pairs.params import PairSplits
from cogrsi_lib.settings import Settings

if TYPE_CHECKING:
    from cogrsi_lib.audit.audit import AuditConfig
    from cogrsi_lib.audit.snapshot import AuditSample

#: the translation prompts (cogrsi_lib/audit/translate.py: PROMPTS)
Prompt = Literal["literal", "plain"]
#: an audit verdict (cogrsi_lib/audit/verdict.py: VERDICTS)
VerdictName = Literal["invalid", "valid", "vacuous", "ambiguous"]
#: the arms of the registration study (cogrsi_lib/loops/registration_study.py)
STUDY_ARMS = ("accuracy_library", "gated_library", "audit_library")
#: development situations (cogrsi_lib/oracle/situations.py: SITUATIONS)
Situations = Literal["exploretom", "oracle"]
#: the roles' defaults, by position: name, prompt and seed
ROLES = (("A", "literal", 0), ("B", "plain", 1))


class TranslatorSpec(Settings):
    """One translator role: its model (``scripted``: the hand-written rules' own code for the
    role), prompt wording, seed and sampling temperature; ``plays``: the model it stands in
    for, for the report. Name, prompt and seed default by position (A/literal/0,
    B/plain/1); ``max_tokens`` to the audit's own."""

    name: str | None = None
    model: StageModel = "scripted"  # scripted: the role's hand-written code
    prompt: Prompt | None = None
    seed: int | None = None
    temperature: float = 0.0
    plays: str | None = None
    max_tokens: PositiveInt | None = None

    def role(self, position: int) -> tuple[str, str, int]:
        """Name, prompt and seed of the translator at ``position`` (0 or 1)."""
        name, prompt, seed = ROLES[position]
        return (self.name or name, self.prompt or prompt,
                seed if self.seed is None else self.seed)


def _two_roles(specs: list[TranslatorSpec]) -> list[TranslatorSpec]:
    if specs[0].role(0)[0] == specs[1].role(1)[0]:
        raise ValueError("the two translators need different names")
    return specs


#: the audit's two translators
Translators = Annotated[list[TranslatorSpec], Field(min_length=2, max_length=2),
                        AfterValidator(_two_roles)]


class AuditSettings(Settings):
    """The sample of oracle worlds, the two translators, their output cap (and the recompile
    cap of capped replies), the verdict rule and the sandbox's limits."""

    n_worlds: PositiveInt = 6000
    seed: int = 7
    max_depth: PositiveInt = 2
    translators: Translators = [TranslatorSpec(), TranslatorSpec()]
    max_tokens: PositiveInt = 8192
    recompile_max_tokens: PositiveInt | None = None
    vacuous_threshold: float = 0.001
    agreement_threshold: float = 0.8
    agreement_over: Literal["either", "both"] = "either"
    limits: SandboxLimits = SandboxLimits()
    workers: PositiveInt | None = None  # sandbox processes at a time (None: the CPU count)

    def sample(self) -> AuditSample:
        """The audit's fixed sample of oracle worlds."""
        from cogrsi_lib.audit.snapshot import sample_audit_worlds

        return sample_audit_worlds(self.n_worlds, self.seed, self.max_depth)

    def config(self) -> AuditConfig:
        """Everything the auditor takes but the sample and the translators."""
        from cogrsi_lib.audit.stage import audit_config

        return audit_config(self.vacuous_threshold, self.agreement_threshold,
                            self.agreement_over, self.limits, self.recompile_max_tokens,
                            self.workers)


class AuditGateSettings(AuditSettings):
    """The loops' audit gate (arm ``audit_library``): the audit's settings, its translators
    given (no default: the scripted ones know the hand-written rules only), and the verdicts
    it rejects."""

    translators: Translators
    reject: tuple[VerdictName, ...] = ("invalid",)


class StudyConfig(Settings):
    """The symbolic audit-in-registration comparison (``params.yaml: audit.registration``;
    ``loops.shadow_study``); defaults are the paper's loop sizes (App. C.2: 8 rounds, cohorts
    of 80, final cohort of 300)."""

    arms: tuple[Literal[STUDY_ARMS], ...] = STUDY_ARMS  # type: ignore[valid-type]
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    rounds: PositiveInt = 8
    discovery_size: PositiveInt = 80
    trial_size: PositiveInt = 80
    n_trials: PositiveInt = 3
    final_size: PositiveInt = 300
    max_candidates: PositiveInt = 4
    failures_per_group: PositiveInt = 4
    delta: float = 3.0
    min_nonneg: NonNegativeInt = 2
    gate_tolerance: NonNegativeInt = 2
    dev_stories: PositiveInt = 600
    dev_seed: int = 101
    dev_max_depth: PositiveInt = 2
    pairs: PairSplits = PairSplits()
    default: Literal["reality", "initial", "none"] = "reality"  # the reader's fallback answer
    reading: Literal["A", "B"] = "A"  # which translation the reader executes
    bad_reply_share: float = 0.25
    reject: tuple[VerdictName, ...] = ("invalid",)
    batch_size: PositiveInt = 256
    #: development situations: exploretom, as the paper's loops, or oracle (sleep, whispers,
    #: lies and peeks as well)
    dev_situations: Situations = "exploretom"
    #: run the counterfactual gate on every candidate of every arm and log it (shadow
    #: registration, cogrsi_lib/loops/shadow.py)
    shadow: bool = True

    @classmethod
    def from_params(cls, params: Any) -> StudyConfig:
        """From a mapping of settings (None: the defaults); unknown keys are an error."""
        return cls.model_validate(dict(params or {}))
