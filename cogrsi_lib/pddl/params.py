"""The ``pddl_mind`` stage's parameters (its schema; :mod:`cogrsi_lib.stage_params`)."""

from __future__ import annotations

import inspect
from typing import Literal

from cogrsi_lib.llm.spec import StageModel
from cogrsi_lib.matrix import GreedyMatrixParams
from cogrsi_lib.pddl.ladder import SYSTEMS
from cogrsi_lib.pddl.scripted import ScriptedPDDLMind
from cogrsi_lib.settings import NonEmptyList, Settings

_SCRIPT = inspect.signature(ScriptedPDDLMind).parameters


class ScriptSettings(Settings):
    """The scripted stand-in's knobs (:class:`~cogrsi_lib.pddl.scripted.ScriptedPDDLMind`):
    shares of malformed problems, dropped grabs and bad domains, and its seed. Read only
    when the stage's model is ``scripted``."""

    p_malformed: float = _SCRIPT["p_malformed"].default
    p_drop: float = _SCRIPT["p_drop"].default
    p_bad_domain: float = _SCRIPT["p_bad_domain"].default
    seed: int = _SCRIPT["seed"].default


class PddlMindParams(GreedyMatrixParams):
    """``pddl_mind``: the PDDL-Mind ladder on oracle stories and benchmark items, for each
    model of ``models`` (or the one ``model``; :mod:`cogrsi_lib.matrix`), as PDDL-Mind
    compares backbones (Table 2). Its three calls are greedy, so a run would repeat the
    first: ``runs`` stays 1."""

    GREEDY = "the ladder's calls are greedy"

    model: StageModel = "scripted"  # scripted: cogrsi_lib/pddl/scripted.py, no model
    script: ScriptSettings = ScriptSettings()
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
    #: the ladder's variants and Table 2's baselines (cot, dwm: cogrsi_lib/pddl/baselines.py)
    variants: NonEmptyList[Literal[SYSTEMS]] = list(SYSTEMS)  # type: ignore[valid-type]
    parse_max_tokens: int = 4096   # paper B.1: 4,096 for every call
    domain_max_tokens: int = 4096
    answer_max_tokens: int = 4096
    state_max_tokens: int = 512    # DWM's state descriptions
    structured: bool = True
