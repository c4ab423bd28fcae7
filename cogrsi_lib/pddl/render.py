"""Traces and parsed PDDL as the text that call 3 reads (PDDL-Mind §3 "ToM question
answering": the model receives the verified state sequence and the question).

The verified trace is written as s_0 in full, then each verified action with the facts it
added and removed, then the final state: the same information as every s_i in full, in far
fewer tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from cogrsi_lib.pddl.executor import Trace, state_text
from cogrsi_lib.pddl.parse import GroundAction
from cogrsi_lib.pddl.problem import Task, fact_text
from cogrsi_lib.pddl.prompts import OPTIONS_HEADER, OPTIONS_INSTRUCTION


def trace_text(trace: Trace) -> str:
    """The verified trace: initial state, each verified step's changes, final state."""
    lines = ["Initial state:", state_text(trace.initial) or "(empty)"]
    for n, step in enumerate(trace.steps, start=1):
        change = [f"+ {fact_text(f)}" for f in sorted(step.added)]
        change += [f"- {fact_text(f)}" for f in sorted(step.deleted)]
        lines.append(f"Step {n}: {step.action}" + ("  " + "; ".join(change) if change else ""))
    if not trace.steps:
        lines.append("(no action was verified)")
    lines += ["Final state:", state_text(trace.final) or "(empty)"]
    return "\n".join(lines)


def init_text(task: Task) -> str:
    return state_text(task.init) or "(empty)"


def actions_text(actions: Sequence[GroundAction]) -> str:
    if not actions:
        return "(none)"
    return "\n".join(f"{n} {a}" for n, a in enumerate(actions, start=1))


def options_text(options: Sequence[tuple[str, str]]) -> str:
    if not options:
        return ""
    body = "\n".join(f"{label}. {text}" for label, text in options)
    return f"{OPTIONS_HEADER}\n{body}\n{OPTIONS_INSTRUCTION}\n"
