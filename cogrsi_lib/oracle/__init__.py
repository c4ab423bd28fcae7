"""The access oracle: a formal model of who saw, was told, or believes what.

See ``SEMANTICS.md`` beside this file for every rule, with an example each.
"""

from cogrsi_lib.oracle.answer import Answer, answer, answer_all, check_question
from cogrsi_lib.oracle.state import Chain, OracleState, chains, replay, trace
from cogrsi_lib.oracle.world import Event, OracleInputError, Question, World

__all__ = [
    "Answer", "Chain", "Event", "OracleInputError", "OracleState", "Question", "World",
    "answer", "answer_all", "chains", "check_question", "replay", "trace",
]
