"""Failure classification: parsing/state errors against reasoning errors given a correct trace
(PDDL-Mind §4 "Manual analysis separates parsing/state errors from reasoning errors").

The paper inspects failures by hand; here, for oracle stories, the model's trace is compared
with the gold trace (the gold actions executed from the gold problem). Both are projected on
what the questions depend on: where objects are and who holds them, who is where and asleep,
property values, and each agent's sights, noticed values and heard claims (an utterance is
replaced by what it says, so its name does not matter). The trace is correct when the
sequences of distinct projected states are equal. Classes of a wrong answer:

* ``parsing/state``: a reply did not parse, or the trace differs from the gold trace;
* ``reasoning``: the trace is correct, the answer is wrong;
* ``answer format``: the answer reply broke its declared format (``pddl.answer``);
* ``unverified``: no gold trace (benchmark items) and nothing flagged; a rejected action or a
  parse failure still marks such an item ``parsing/state``.
"""

from __future__ import annotations

from collections.abc import Iterable

from cogrsi_lib.pddl.executor import Trace
from cogrsi_lib.pddl.problem import Fact

PROJECTED = frozenset({"in", "holding", "at", "asleep", "has", "seen", "noticed"})
FAILURE_CLASSES = ("none", "parsing/state", "reasoning", "answer format", "unverified")


def project(state: Iterable[Fact]) -> frozenset[Fact]:
    """The facts questions depend on; ``heard`` facts become ``(heard agent obj container)``."""
    facts = frozenset(state)
    says: dict[str, list[tuple[str, ...]]] = {}
    for f in facts:
        if f[0] == "says" and len(f) >= 2:
            says.setdefault(f[1], []).append(tuple(f[2:]))
    out = {f for f in facts if f[0] in PROJECTED}
    for f in facts:
        if f[0] == "heard" and len(f) == 3:
            for claim in says.get(f[2], [("?",)]):
                out.add(("heard", f[1], *claim))
    return frozenset(out)


def projected_states(trace: Trace) -> list[frozenset[Fact]]:
    """Distinct consecutive projected states of a trace."""
    out: list[frozenset[Fact]] = []
    for s in trace.states:
        p = project(s)
        if not out or out[-1] != p:
            out.append(p)
    return out


def compare_traces(model: Trace, gold: Trace) -> tuple[bool, str]:
    """Whether the model's trace equals the gold trace (projected), and the first difference."""
    mine, theirs = projected_states(model), projected_states(gold)
    for k, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if a != b:
            missing = sorted(b - a)[:3]
            extra = sorted(a - b)[:3]
            return False, (f"state {k}: missing {' '.join(map(_text, missing)) or '-'}; "
                           f"extra {' '.join(map(_text, extra)) or '-'}")
    if len(mine) != len(theirs):
        return False, f"{len(mine)} distinct states, gold has {len(theirs)}"
    return True, ""


def _text(f: Fact) -> str:
    return "(" + " ".join(f) + ")"


def classify(
    correct: bool,
    answer_parsed: bool,
    parse_failed: bool,
    trace_correct: bool | None,
    n_rejected: int,
) -> str:
    """The failure class of one answer (see the module docstring)."""
    if correct:
        return "none"
    if not answer_parsed:
        return "answer format"
    if parse_failed:
        return "parsing/state"
    if trace_correct is None:
        return "parsing/state" if n_rejected else "unverified"
    return "reasoning" if trace_correct else "parsing/state"
