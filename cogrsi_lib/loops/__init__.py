"""Strategy-evolution loops with calibrated registration and gates (CogRSI §4.2, §5.2-5.3,
App. C.2, D).

A loop evolves the reader's principle P (a library of up to five "When condition: rule"
entries, or one principle text): each round the builder proposes up to four changes from the
reader's failures, and registration admits at most one, by a calibrated margin over three
trial cohorts and the arm's gates. The engine sees the reader only through "answer these
items under this principle" (:mod:`cogrsi_lib.loops.slot`). Modules:

- ``library``: the rule library, the single principle, and edits (add, revise, retire)
- ``builder``: builder prompts and strict parsing of its JSON replies (one-line fields that
  name no one in the shown stories: :mod:`cogrsi_lib.reader.text`)
- ``cohorts``: sampling by story; ``devdata``: development data and pair items
- ``registration``: margin, cohort rule, selection; ``gates``: counterfactual and audit gates
- ``arms``: the arms as configurations; ``engine``: rounds, logs, exact resume; ``logs``
- ``noise``: registration-noise simulation; ``evaluate`` and ``selection``: held-out scoring
  and Table 5; ``gepa_arm``: GEPA on the same slot; ``report``: tables and Figure 4;
  ``scripted``: a model-free stand-in backend; ``stage``: the pipeline stage
- ``symbolic``: the scripted bank's rules executed as code; ``registration_study``: the bank
  looped under the margin, gated and audit arms, no model (CogRSI §5.4, §6, Figure 7; the
  audit stage's comparison and the loops stage's shadow study)
"""

from cogrsi_lib.loops.arms import ArmConfig, arm_from_spec, builtin_arms
from cogrsi_lib.loops.builder import (
    REJECTIONS,
    Builder,
    BuilderLimits,
    BuilderReply,
    Failure,
    FailureGroup,
    judge_reply,
    parse_edit,
)
from cogrsi_lib.loops.cohorts import CohortSampler, PoolExhausted, schedule
from cogrsi_lib.loops.devdata import bench_dev_items, oracle_dev_items, pair_items
from cogrsi_lib.loops.engine import Loop, LoopResult, LoopSettings, failure_groups
from cogrsi_lib.loops.evaluate import (
    heldout_candidates,
    pair_scores,
    reference_principles,
    score_principles,
)
from cogrsi_lib.loops.gates import (
    AuditRegistrationGate,
    CandidateView,
    CounterfactualGate,
    Gate,
    GateResult,
    GateUnavailable,
)
from cogrsi_lib.loops.library import Edit, EditError, PrincipleText, RuleLibrary
from cogrsi_lib.loops.noise import (
    PAPER_SD,
    calibration_table,
    gain_sd,
    measured_cohort_sd,
    noise_models,
    simulate_admission,
)
from cogrsi_lib.loops.registration import RegistrationRule, Scored, select
from cogrsi_lib.loops.selection import selection_quality
from cogrsi_lib.loops.slot import FunctionSlot, PrincipleSystem, Scorer
from cogrsi_lib.loops.stage import (
    StageConfig,
    StageData,
    StageRun,
    run_shadow_study,
    run_stage,
    stage_data,
)

__all__ = [
    "PAPER_SD", "REJECTIONS", "ArmConfig", "AuditRegistrationGate", "Builder", "BuilderLimits",
    "BuilderReply", "CandidateView", "CohortSampler", "CounterfactualGate", "Edit", "EditError",
    "Failure", "FailureGroup", "FunctionSlot", "Gate", "GateResult", "GateUnavailable", "Loop",
    "LoopResult", "LoopSettings", "PoolExhausted", "PrincipleSystem", "PrincipleText",
    "RegistrationRule", "RuleLibrary", "Scored", "Scorer", "StageConfig", "StageData",
    "StageRun", "arm_from_spec", "bench_dev_items", "builtin_arms", "calibration_table",
    "failure_groups", "gain_sd", "heldout_candidates", "judge_reply", "measured_cohort_sd",
    "oracle_dev_items", "pair_items", "pair_scores", "parse_edit", "reference_principles",
    "noise_models", "run_shadow_study", "run_stage", "schedule", "score_principles", "select",
    "selection_quality",
    "simulate_admission", "stage_data",
]
