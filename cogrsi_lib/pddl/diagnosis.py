"""Failure classification: parsing/state errors against reasoning errors given a correct trace
(PDDL-Mind §4 "Manual analysis separates parsing/state errors from reasoning errors").

The paper inspects failures by hand; here, for oracle stories, the model's trace is compared
with the gold trace (the gold actions executed from the gold problem). Both are projected on
what the questions depend on: where objects are and who holds them, who is where and asleep,
property values, and each agent's sights, noticed values and heard claims (an utterance is
replaced by what it says, so its name does not matter). The trace is correct when the
sequences of distinct projected states are equal. With a :class:`Focus` (the question's
object and the agents of its chain) only the facts the question can depend on are compared:
where the object is and who holds it, where the chain's agents are and whether they sleep,
and their sights, noticed values and heard claims; a mistake about someone else does not make
the trace wrong for this question. Classes of a wrong answer:

* ``parsing/state``: a reply did not parse, or the trace differs from the gold trace;
* ``reasoning``: the trace is correct, the answer is wrong;
* ``answer format``: the answer reply broke its declared format (``pddl.answer``);
* ``unverified``: no gold trace (benchmark items) and nothing flagged; a parse failure, or a
  rejected action that names someone or something the question or its options name
  (:func:`relevant_rejections`), still marks such an item ``parsing/state``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cogrsi_lib.pddl.executor import Rejection, Trace
from cogrsi_lib.pddl.problem import Fact

PROJECTED = frozenset({"in", "holding", "at", "asleep", "has", "seen", "noticed"})
FAILURE_CLASSES = ("none", "parsing/state", "reasoning", "answer format", "unverified")


@dataclass(frozen=True)
class Focus:
    """What one question is about: its object and the agents of its chain (PDDL names)."""

    obj: str
    agents: frozenset[str] = frozenset()

    def keeps(self, fact: Fact) -> bool:
        name, args = fact[0], fact[1:]
        if name in ("in", "has"):
            return bool(args) and args[0] == self.obj
        if name == "holding":
            return len(args) > 1 and args[1] == self.obj
        if name in ("at", "asleep"):
            return bool(args) and args[0] in self.agents
        if name in ("seen", "noticed", "heard"):
            return len(args) > 1 and args[0] in self.agents and args[1] == self.obj
        return False


def project(state: Iterable[Fact], focus: Focus | None = None) -> frozenset[Fact]:
    """The facts questions depend on; ``heard`` facts become ``(heard agent obj container)``;
    with ``focus``, only those about its object and agents."""
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
    if focus is not None:
        out = {f for f in out if focus.keeps(f)}
    return frozenset(out)


def projected_states(trace: Trace, focus: Focus | None = None) -> list[frozenset[Fact]]:
    """Distinct consecutive projected states of a trace."""
    out: list[frozenset[Fact]] = []
    for s in trace.states:
        p = project(s, focus)
        if not out or out[-1] != p:
            out.append(p)
    return out


def compare_traces(model: Trace, gold: Trace, focus: Focus | None = None
                   ) -> tuple[bool, str]:
    """Whether the model's trace equals the gold trace (projected, on ``focus`` if given),
    and the first difference."""
    mine, theirs = projected_states(model, focus), projected_states(gold, focus)
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


_WORD = re.compile(r"[a-z0-9]+")


def relevant_rejections(rejected: Iterable[Rejection], text: str) -> list[Rejection]:
    """The rejected actions that name someone or something ``text`` (a question and its
    options) names: one of their arguments, or a part of one split at ``_``/``-``, is a word
    of the text. A rejected action about anything else cannot have changed the answer."""
    words = set(_WORD.findall(text.lower()))
    out = []
    for r in rejected:
        parts = {p for a in r.action.args for p in [a, *re.split(r"[_-]+", a)] if p}
        if parts & words:
            out.append(r)
    return out


def classify(
    correct: bool,
    answer_parsed: bool,
    parse_failed: bool,
    trace_correct: bool | None,
    n_rejected: int,
) -> str:
    """The failure class of one answer (see the module docstring); ``n_rejected`` counts
    the rejected actions that matter (:func:`relevant_rejections` on benchmark items)."""
    if correct:
        return "none"
    if not answer_parsed:
        return "answer format"
    if parse_failed:
        return "parsing/state"
    if trace_correct is None:
        return "parsing/state" if n_rejected else "unverified"
    return "reasoning" if trace_correct else "parsing/state"
