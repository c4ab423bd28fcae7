"""Stage parameters: one typed schema per pipeline stage, beside the stage's own code.

Each stage notebook has one parameter, ``params``: the stage's section of ``params.yaml``
(``cogrsi stage`` injects it), loaded with :func:`load`. The stage's schema (:data:`SCHEMAS`
names where it lives, e.g. ``cogrsi_lib/pairs/params.py``) fills in every key the section
leaves out with the small default that CI and a plain notebook run use, and refuses a key it
does not know, at any depth, naming its full path (``reader_eval.llm.backnd``), so a
misspelt key stops ``cogrsi stage`` before any work. Every nested mapping is typed too
(:class:`~cogrsi_lib.settings.Settings`): a partial one keeps the schema's other defaults.
Every model a stage takes is a :data:`~cogrsi_lib.llm.spec.ModelSpec`. ``params.yaml``
holds the CPU setting of the embedded default; ``params.gpu.yaml`` the papers' setting
(``backend: vllm``).

A schema is imported only when its stage's parameters are loaded, so a stage depends on its
own schema alone (``cogrsi_lib/dvc_graph.py`` adds the schema's module to its stage's
dependencies).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from cogrsi_lib.settings import Settings, describe_errors

__all__ = ["SCHEMAS", "ModelStageParams", "StageParams", "StageParamsError", "load", "schema",
           "validate_file"]


class StageParamsError(ValueError):
    """A stage's parameters do not fit its schema; the message names the stage and keys."""


class StageParams(Settings):
    """Common base of the stage schemas: unknown keys refused; read-only once loaded."""


class ModelStageParams(StageParams):
    """Base of the schemas of stages that call models. ``max_failed_share``: the stage
    fails, publishing nothing, when more of its requests than this share failed (a dead or
    refusing server), or every one of them."""

    max_failed_share: float = Field(0.05, ge=0.0, le=1.0)


#: each stage's schema, as ``module:Class`` (imported on first use), in pipeline order
SCHEMAS: dict[str, str | type[StageParams]] = {
    "oracle_worlds": "cogrsi_lib.oracle.params:OracleWorldsParams",
    "pairs": "cogrsi_lib.pairs.params:PairsParams",
    "nested": "cogrsi_lib.nested.params:NestedParams",
    "benchmarks": "cogrsi_lib.bench.params:BenchmarksParams",
    "scorecard": "cogrsi_lib.scorecard.params:ScorecardParams",
    "reader_eval": "cogrsi_lib.baselines.params:ReaderEvalParams",
    "loops": "cogrsi_lib.loops.params:LoopsParams",
    "audit": "cogrsi_lib.audit.params:AuditParams",
    "pddl_mind": "cogrsi_lib.pddl.params:PddlMindParams",
    "harness": "cogrsi_lib.harness.params:HarnessParams",
    "train": "cogrsi_lib.train.params:TrainParams",
}


def schema(stage: str) -> type[StageParams]:
    """The schema class of ``stage`` (its module imported now)."""
    if stage not in SCHEMAS:
        raise StageParamsError(f"no parameter schema for stage '{stage}' "
                               f"(stages: {', '.join(SCHEMAS)})")
    entry = SCHEMAS[stage]
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        entry = getattr(importlib.import_module(module), name)
    return entry


def load(stage: str, given: Mapping[str, Any] | None = None) -> StageParams:
    """The stage's parameters: ``given`` over the schema's defaults, checked.

    Raises :class:`StageParamsError` naming the stage and every offending key."""
    cls = schema(stage)
    data = dict(given or {})
    try:
        return cls.model_validate(data)
    except ValidationError as err:
        raise StageParamsError(f"stage '{stage}': {describe_errors(err, data)}") from None


def validate_file(params: Mapping[str, Any]) -> dict[str, StageParams]:
    """Every stage section of a parsed params file, checked; unknown sections refused."""
    unknown = sorted(set(params) - set(SCHEMAS))
    if unknown:
        raise StageParamsError(f"unknown stage sections {unknown} (stages: {', '.join(SCHEMAS)})")
    return {name: load(name, section or {}) for name, section in params.items()}
