"""The principle slot P of the reader (CogRSI §4.1, §4.2, Appendix C.2).

P is plain text: empty (no principle), the expert principle, or a rule library written by the
loops, composed as a numbered list "(i) When condition: rule". The same text fills both of the
reader's principle positions: the annotated readings and the arbitration call.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

NO_PRINCIPLE = ""

EXPERT_PRINCIPLE = (
    "A character knows only what the story shows them witnessing, being told, or working out "
    "from what they themselves did."
)

MAX_RULES = 5
MAX_RULE_WORDS = 60


@dataclass(frozen=True)
class Rule:
    """One library entry: "When <condition>: <rule>"."""

    condition: str
    rule: str

    def text(self) -> str:
        cond = self.condition.strip().rstrip(":")
        if cond.lower().startswith("when "):
            cond = cond[5:]
        return f"When {cond}: {self.rule.strip()}"

    def words(self) -> int:
        return len(self.text().split())


def format_rule_library(rules: Iterable[Rule | tuple[str, str]]) -> str:
    """The library as P: one "(i) When condition: rule" line per rule, numbered from 1."""
    out = []
    for i, r in enumerate(rules, start=1):
        rule = r if isinstance(r, Rule) else Rule(*r)
        out.append(f"({i}) {rule.text()}")
    return "\n".join(out)


_ENTRY = re.compile(r"^\((\d+)\)\s*When\s+(.+?):\s*(.+)$", re.I)


def parse_rule_library(text: str) -> list[Rule]:
    """Inverse of :func:`format_rule_library`; raises ``ValueError`` on a malformed line."""
    rules = []
    for n, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
        m = _ENTRY.match(line.strip())
        if not m or int(m.group(1)) != n:
            raise ValueError(f"line {n} is not '({n}) When condition: rule': {line!r}")
        rules.append(Rule(m.group(2), m.group(3)))
    return rules


def resolve_principle(p: str | None) -> str:
    """Named principles ("none", "expert") or literal text."""
    if p is None or p.strip().lower() in ("", "none"):
        return NO_PRINCIPLE
    if p.strip().lower() == "expert":
        return EXPERT_PRINCIPLE
    return p.strip()


def principle_id(p: str) -> str:
    """A short stable id for records: "none", "expert" or "sha256:<12 hex>"."""
    if p == NO_PRINCIPLE:
        return "none"
    if p == EXPERT_PRINCIPLE:
        return "expert"
    return "sha256:" + hashlib.sha256(p.encode("utf-8")).hexdigest()[:12]
