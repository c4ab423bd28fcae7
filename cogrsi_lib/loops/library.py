"""What a loop evolves: a rule library or a single principle text (CogRSI §4.2, App. C.2).

A :class:`RuleLibrary` holds up to five rules "When condition: rule" and composes them as the
numbered list "(i) When condition: rule" that fills the reader's principle slot. The builder
changes it by one :class:`Edit` per candidate: add a rule, revise an entry or retire one.
The single-principle arm evolves one free text instead (:class:`PrincipleText`), rewritten
whole by each candidate. Both are immutable; ``apply`` returns the changed artifact or raises
:class:`EditError` with the reason a builder reply is rejected.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from cogrsi_lib.reader.principles import MAX_RULES, Rule, format_rule_library
from cogrsi_lib.reader.text import clean

Operation = Literal["add", "revise", "retire", "rewrite"]
OPERATIONS: tuple[str, ...] = ("add", "revise", "retire", "rewrite")


class EditError(ValueError):
    """An edit that cannot be applied; ``reason`` is the rejection code that is logged."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Edit:
    """One candidate change. ``entry`` is 1-based (revise, retire); ``principle`` is the whole
    new text of a ``rewrite`` (single-principle arm)."""

    operation: Operation
    entry: int | None = None
    condition: str = ""
    rule: str = ""
    principle: str = ""

    def written(self) -> str:
        """The text this edit writes: the entry of an add or revise, the principle of a
        rewrite, nothing for a retire (what the audit reads, CogRSI App. C "Semantic audit")."""
        if self.operation in ("add", "revise"):
            return Rule(self.condition, self.rule).text()
        if self.operation == "rewrite":
            return self.principle
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "entry": self.entry, "condition": self.condition,
                "rule": self.rule, "principle": self.principle}


class Artifact(Protocol):
    """What a loop evolves and the reader reads as P."""

    kind: str

    def principle(self) -> str: ...

    def apply(self, edit: Edit) -> Artifact: ...

    def to_json(self) -> str: ...


@dataclass(frozen=True)
class RuleLibrary:
    """Up to ``max_rules`` rules; P is their numbered list (empty library: no principle)."""

    rules: tuple[Rule, ...] = ()
    max_rules: int = MAX_RULES
    kind: str = "library"

    def __post_init__(self) -> None:
        if len(self.rules) > self.max_rules:
            raise ValueError(f"a library holds at most {self.max_rules} rules")

    def __len__(self) -> int:
        return len(self.rules)

    def principle(self) -> str:
        return format_rule_library(self.rules)

    def apply(self, edit: Edit) -> RuleLibrary:
        rules = list(self.rules)
        if edit.operation == "add":
            if len(rules) >= self.max_rules:
                raise EditError("library_full", f"the library already holds {self.max_rules}")
            rules.append(Rule(clean(edit.condition), clean(edit.rule)))
        elif edit.operation in ("revise", "retire"):
            if not rules:
                raise EditError("bad_entry", f"cannot {edit.operation}: the library is empty")
            if edit.entry is None or not 1 <= edit.entry <= len(rules):
                raise EditError("bad_entry",
                                f"entry {edit.entry!r} is not in 1..{len(rules)}")
            if edit.operation == "retire":
                del rules[edit.entry - 1]
            else:
                rules[edit.entry - 1] = Rule(clean(edit.condition), clean(edit.rule))
        else:
            raise EditError("bad_operation", f"{edit.operation!r} does not apply to a library")
        out = RuleLibrary(tuple(rules), self.max_rules)
        if out.principle() == self.principle():
            raise EditError("no_change", "the edit leaves the library as it is")
        return out

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "max_rules": self.max_rules,
                           "rules": [[r.condition, r.rule] for r in self.rules]},
                          ensure_ascii=False, sort_keys=True)


@dataclass(frozen=True)
class PrincipleText:
    """One principle text, rewritten whole by each candidate (the single-principle arm)."""

    text: str = ""
    kind: str = "principle"

    def principle(self) -> str:
        return self.text

    def apply(self, edit: Edit) -> PrincipleText:
        if edit.operation != "rewrite":
            raise EditError("bad_operation", f"{edit.operation!r} does not apply to a principle")
        new = clean(edit.principle)
        if not new:
            raise EditError("missing_field", "the new principle is empty")
        if new == self.text:
            raise EditError("no_change", "the new principle equals the current one")
        return PrincipleText(new)

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "text": self.text}, ensure_ascii=False,
                          sort_keys=True)


def empty_artifact(kind: str, max_rules: int = MAX_RULES) -> RuleLibrary | PrincipleText:
    """The starting point of every loop: an empty library or an empty principle."""
    if kind == "library":
        return RuleLibrary((), max_rules)
    if kind == "principle":
        return PrincipleText("")
    raise ValueError(f"artifact must be 'library' or 'principle', not {kind!r}")


def artifact_from_json(text: str) -> RuleLibrary | PrincipleText:
    data = json.loads(text)
    if data["kind"] == "library":
        return RuleLibrary(tuple(Rule(c, r) for c, r in data["rules"]), int(data["max_rules"]))
    if data["kind"] == "principle":
        return PrincipleText(data["text"])
    raise ValueError(f"unknown artifact kind {data['kind']!r}")
