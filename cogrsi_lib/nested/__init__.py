"""Nested-belief benchmark R0-R4 (recursive-reasoning plan §4 Suite A, §5.6, §5.7, §7).

``generate`` rejection-samples adversarial and true-belief items per depth from oracle
worlds; ``baseline_table`` scores the shortcut heuristics; ``score`` turns raw model
replies into the depth curve, false-belief accuracy, leakage, slope, depth AUC, Brier
and recursive lift.
"""

from cogrsi_lib.nested.baselines import as_replies, baseline_table, baseline_wide, best_shortcut
from cogrsi_lib.nested.curve import baseline_curves, curve_table, depth_chart, oracle_replies
from cogrsi_lib.nested.edits import DeepestEdit, deepest_edit, deepest_edits, edit_table
from cogrsi_lib.nested.export import (
    generation_table,
    item_table,
    load_items,
    strata_table,
    write_items_jsonl,
)
from cogrsi_lib.nested.facts import (
    ADVERSARIAL,
    REALITY,
    TRUE_BELIEF,
    ChainFacts,
    chain_facts,
    world_facts,
)
from cogrsi_lib.nested.gate import IntegrityError, integrity_table, require
from cogrsi_lib.nested.heuristics import HEURISTICS, is_shortcut, mentioned_locations
from cogrsi_lib.nested.items import CellsNotFilled, Generation, NestedConfig, NestedItem, generate
from cogrsi_lib.nested.reply import ANSWER_FORMAT, Reply, parse_reply, prompt
from cogrsi_lib.nested.score import NestedScore, lie_condition_table, score
from cogrsi_lib.nested.whispers import whisper_table

__all__ = [
    "ADVERSARIAL", "ANSWER_FORMAT", "HEURISTICS", "REALITY", "TRUE_BELIEF",
    "CellsNotFilled", "ChainFacts", "DeepestEdit", "Generation", "IntegrityError",
    "NestedConfig", "NestedItem", "NestedScore", "Reply",
    "as_replies", "baseline_curves", "baseline_table", "baseline_wide", "best_shortcut",
    "chain_facts", "curve_table", "deepest_edit", "deepest_edits", "depth_chart", "edit_table",
    "generate", "generation_table", "integrity_table", "is_shortcut", "item_table",
    "lie_condition_table", "load_items", "mentioned_locations", "oracle_replies",
    "parse_reply", "prompt", "require",
    "score", "strata_table", "whisper_table", "world_facts", "write_items_jsonl",
]
