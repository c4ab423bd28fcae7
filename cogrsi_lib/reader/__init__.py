"""The grounded reader (CogRSI §4.1): perception, annotated and plain views, vote, arbitration."""

from cogrsi_lib.reader.items import ReaderItem, answer_key, split_context
from cogrsi_lib.reader.principles import (
    EXPERT_PRINCIPLE,
    NO_PRINCIPLE,
    Rule,
    format_rule_library,
    parse_rule_library,
    resolve_principle,
)
from cogrsi_lib.reader.reader import GroundedReader, ReaderConfig
from cogrsi_lib.reader.records import ItemRecord, records_to_frame, write_records
from cogrsi_lib.reader.system import SamplingConfig, System, run_system
from cogrsi_lib.reader.vote import SUPERMAJORITY, VoteOutcome, decide, settle

__all__ = [
    "EXPERT_PRINCIPLE",
    "NO_PRINCIPLE",
    "SUPERMAJORITY",
    "GroundedReader",
    "ItemRecord",
    "ReaderConfig",
    "ReaderItem",
    "Rule",
    "SamplingConfig",
    "System",
    "VoteOutcome",
    "answer_key",
    "decide",
    "format_rule_library",
    "parse_rule_library",
    "records_to_frame",
    "resolve_principle",
    "run_system",
    "settle",
    "split_context",
    "write_records",
]
