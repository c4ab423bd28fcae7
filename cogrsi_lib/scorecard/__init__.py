"""Recursive-reasoning scorecard (recursive-reasoning plan §4 Suites B-D, §10-11, §16-17).

* Suite B, applied ToM: :mod:`.applied` (belief and behaviour questions on one state);
* Suite C, strategic: :mod:`.games` (solvers), :mod:`.opponents` (bounded level-k
  opponents), :mod:`.strategic` (normative, equilibrium and predictive questions);
* Suite D, self and cross-agent prediction: :mod:`.ledger`, :mod:`.selfpred`;
* reader variants on the same frozen items: :mod:`.direct` (bare model),
  :mod:`.perspective` (§10), :mod:`.store` and :mod:`.store_system` (§11),
  :mod:`.variants`;
* :mod:`.runs` (one system through every suite), :mod:`.profile` (the §17 profile, the
  depth curve, RR beside the vector), :mod:`.gates` (Gates A-E with recorded outcomes);
* :mod:`.scripted`: a scripted model with known behaviour for tests and the CI notebook.

Suite A is :mod:`cogrsi_lib.nested`, reused as is.
"""

from cogrsi_lib.scorecard.answers import NestedRun, cost_per_100, run_nested
from cogrsi_lib.scorecard.applied import (
    AppliedItem,
    AppliedScore,
    applied_items,
    run_applied,
    score_applied,
)
from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.gates import (
    Decision,
    GateConfig,
    GateOutcome,
    Replication,
    decision_checks,
    decision_table,
    gate_a,
    gate_b,
    gate_c,
    gate_d,
    gate_e,
)
from cogrsi_lib.scorecard.ledger import LedgerOrderError, PredictionLedger
from cogrsi_lib.scorecard.perspective import PerspectiveSystem
from cogrsi_lib.scorecard.profile import (
    RecursiveProfile,
    build_profile,
    depth_curves,
    depth_figure,
    interval_table,
    rr_scalar,
    scorecard_table,
)
from cogrsi_lib.scorecard.runs import Suites, SystemRun, run_suites
from cogrsi_lib.scorecard.scripted import ScriptedModel, Skill
from cogrsi_lib.scorecard.selfpred import (
    SelfPredConfig,
    Target,
    run_selfpred,
    score_selfpred,
)
from cogrsi_lib.scorecard.store import UNKNOWN, Entry, EpistemicStore, StoreError
from cogrsi_lib.scorecard.store_system import StoreSystem
from cogrsi_lib.scorecard.strategic import (
    StrategicConfig,
    StrategicItem,
    generate_strategic,
    run_strategic,
    score_strategic,
)
from cogrsi_lib.scorecard.variants import INTERVENTIONS, VARIANTS, make_variant, needed_variants

__all__ = [
    "INTERVENTIONS", "UNKNOWN", "VARIANTS", "AppliedItem", "AppliedScore", "Decision",
    "DirectSystem", "Entry", "EpistemicStore", "GateConfig", "GateOutcome", "LedgerOrderError",
    "NestedRun", "PerspectiveSystem", "PredictionLedger", "RecursiveProfile", "Replication",
    "ScriptedModel", "SelfPredConfig", "Skill", "StoreError", "StoreSystem", "StrategicConfig",
    "StrategicItem", "Suites", "SystemRun", "Target", "applied_items", "build_profile",
    "cost_per_100", "decision_checks", "decision_table", "depth_curves", "depth_figure", "gate_a",
    "gate_b", "gate_c", "gate_d", "gate_e", "generate_strategic", "interval_table", "make_variant",
    "needed_variants", "rr_scalar", "run_applied", "run_nested",
    "run_selfpred", "run_strategic", "run_suites", "score_applied", "score_selfpred",
    "score_strategic", "scorecard_table",
]
