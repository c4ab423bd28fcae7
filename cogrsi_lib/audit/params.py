"""The ``audit`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

from pydantic import NonNegativeInt, PositiveInt

from cogrsi_lib.audit.sandbox import SandboxLimits
from cogrsi_lib.audit.settings import STUDY_ARMS, AuditSettings, StudyConfig
from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.pairs.params import PairSplits
from cogrsi_lib.reader.params import StageReader
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.settings import NonEmptyList, Settings
from cogrsi_lib.stage_params import ModelStageParams


class ReplaySettings(Settings):
    """The counterexample replay: the reader's model and settings (``structured`` is the
    stage's), the counterexamples replayed per invalid rule, control questions and seed."""

    model: RealModel = {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}}
    reader_config: StageReader = ReaderConfig()
    max_per_rule: NonNegativeInt = 5
    n_controls: NonNegativeInt = 5
    seed: int = 0


class AuditParams(ModelStageParams, AuditSettings):
    """``audit``: semantic audit of rules and the audit-in-registration comparison."""

    n_worlds: PositiveInt = 300
    #: per translation, in the sandbox (whole seconds, as params.yaml writes them: the run's
    #: summary shows them as given)
    limits: SandboxLimits = SandboxLimits(wall_s=120, cpu_s=60)
    #: ``handwritten``, a candidates file (rule_id, text, ...; the loops stage writes
    #: reports/loops/audit_candidates.parquet), or a list of them (cogrsi_lib/audit/rules.py)
    rules: str | NonEmptyList[str] = "handwritten"
    #: the loops stage's outputs (``reports/loops``): Figure 7a-c from its candidates, each
    #: replayed under every registration rule, with their verdicts here (null: not drawn)
    loops_run: str | None = None
    replay: ReplaySettings = ReplaySettings()
    check_expected: bool = True
    structured: bool = True
    reference_translations: bool = True  # model translators: also audit the reference code
    #: the symbolic audit-in-registration comparison (CI size)
    registration: StudyConfig = StudyConfig(
        arms=STUDY_ARMS, seeds=(0,), rounds=2, dev_stories=120, final_size=80,
        pairs=PairSplits(n_gate_narrative=8, n_gate_dialogue=8, n_eval_narrative=16,
                         n_eval_dialogue=16))
