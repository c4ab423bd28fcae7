"""PDDL-Mind: a predefined PDDL domain, LLM parsing into it, verified symbolic state tracking,
and the diagnostic ladder (PDDL-Mind §3-5).

A story goes through three LLM calls: the initial state as a problem file of the predefined
domain (``domain.pddl``, parsed with the ``pddl`` package), the narrative as candidate
actions, and the answer from the verified trace. Between calls 2 and 3 the
:mod:`~cogrsi_lib.pddl.executor` checks each candidate's preconditions, applies the effects of
those that hold and records the others with the precondition that failed. The ladder
(:mod:`~cogrsi_lib.pddl.ladder`) runs the full method and its two ablations (no verification,
no predefined domain) and classifies wrong answers as parsing/state or reasoning errors.

Oracle extension
----------------
The domain covers the access oracle's events (``cogrsi_lib/oracle/SEMANTICS.md``) as well as
the paper's seven actions: leave and enter are ``move`` between the room and ``outside``;
``sleep``, ``wake``, ``peek`` and ``change`` are added actions, with the types ``prop`` and
``value`` and the predicates ``asleep``, ``has``, ``noticed``, ``visible``, ``says`` and
``private``; a whisper is a ``tell`` of a private utterance; an oracle move is ``grab`` then
``drop``, each in a container opened for it (grab and drop need the object in view, and a grab
is seen by everyone awake in the room). ``seen`` records an agent's latest sight (where it last
saw the object), not just whether it saw it. :func:`~cogrsi_lib.pddl.oracle_map.cross_check`
executes the gold actions of an oracle world and checks, after every event, that the PDDL state
is the oracle's: the world (location, presence, sleep, properties), each agent's latest sight
and noticed values (the oracle's first-order beliefs where they come from perception) and who
heard each whisper.
"""

from cogrsi_lib.pddl.diagnosis import classify, compare_traces, project
from cogrsi_lib.pddl.domain import (
    CompiledDomain,
    DomainError,
    compile_domain,
    domain_text,
    predefined_domain,
)
from cogrsi_lib.pddl.examples import (
    BenchmarkSample,
    Example,
    benchmark_examples,
    item_example,
    oracle_examples,
)
from cogrsi_lib.pddl.executor import Executor, Rejection, Step, Trace, execute
from cogrsi_lib.pddl.ladder import RECORDS, VARIANTS, LadderConfig, make_backend, run_ladder
from cogrsi_lib.pddl.oracle_map import GoldPDDL, Mismatch, cross_check, gold_pddl
from cogrsi_lib.pddl.parse import (
    GroundAction,
    ParseFailure,
    parse_actions_text,
    parse_domain_text,
    parse_problem_text,
)
from cogrsi_lib.pddl.problem import Task, compile_problem
from cogrsi_lib.pddl.render import trace_text

__all__ = [
    "RECORDS", "VARIANTS", "BenchmarkSample", "CompiledDomain", "DomainError", "Example",
    "Executor", "GoldPDDL", "GroundAction", "LadderConfig", "Mismatch", "ParseFailure",
    "Rejection", "Step", "Task", "Trace", "benchmark_examples", "classify", "compare_traces",
    "compile_domain", "compile_problem", "cross_check", "domain_text", "execute", "gold_pddl",
    "item_example", "make_backend", "oracle_examples", "parse_actions_text", "parse_domain_text",
    "parse_problem_text", "predefined_domain", "project", "run_ladder", "trace_text",
]
