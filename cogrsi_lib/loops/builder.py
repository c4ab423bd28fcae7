"""The builder: the backbone proposes one change per failure group (CogRSI §4.2, App. C.2).

Each call shows the current library (or principle) and up to four failures of one group
(story, question, the reader's answer and the gold answer) and asks for one JSON object:
a one-sentence diagnosis, an operation (add, revise, retire), an entry number, a condition and
a rule; the single-principle arm asks for a diagnosis and a whole new principle. The builder
is never told what makes a rule valid. It samples at temperature 0.7.

Replies are parsed strictly (DESIGN.md): a reply that is not one JSON object (optionally in
one fenced block), lacks a field, has a field of the wrong type, names an unknown operation or
entry, writes a rule over the word limit, or names a character or place of the shown stories
is rejected with a reason code and logged, never repaired.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.loops.library import Artifact, Edit, EditError, RuleLibrary, clean
from cogrsi_lib.loops.naming import names_in, story_names
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import MAX_RULE_WORDS, MAX_RULES, Rule
from cogrsi_lib.reader.prompts import options_block
from cogrsi_lib.reader.records import ItemRecord

#: rejection codes, in the order the checks run
REJECTIONS = ("malformed_json", "missing_field", "bad_type", "bad_operation", "bad_entry",
              "too_long", "names_story", "library_full", "no_change")

BUILDER_SYSTEM = (
    "You improve the written guidance of a reader that answers questions about stories and "
    "conversations: who saw, heard or was told what, and what each character believes. "
    "Reply with one JSON object and nothing else."
)

LIBRARY_TASK = """Current rule library ({n} of at most {max_rules} rules):
{library}

The reader, following this library, answered these questions wrongly:

{failures}

Propose one change to the library: add a rule, revise an entry, or retire an entry. Each rule \
reads "When <condition>: <rule>" and has at most {max_words} words. Write general rules: do not \
name the characters or places of these stories.
Reply with exactly one JSON object:
{{"diagnosis": "<one sentence: why the reader failed>", "operation": "add" | "revise" | \
"retire", "entry": <number of the entry to revise or retire, or null to add>, "condition": \
"<when the rule applies>", "rule": "<what the reader should conclude>"}}"""

PRINCIPLE_TASK = """Current principle:
{principle}

The reader, following this principle, answered these questions wrongly:

{failures}

Write a new principle for the reader, at most {max_words} words, that would have avoided these \
errors. Write in general terms: do not name the characters or places of these stories.
Reply with exactly one JSON object:
{{"diagnosis": "<one sentence: why the reader failed>", "principle": "<the new principle>"}}"""

#: a marker the scripted backend and tests use to recognise builder prompts
BUILDER_MARKER = "Reply with exactly one JSON object:"


@dataclass(frozen=True)
class BuilderLimits:
    """Word limits (App. C.2): 60 words per rule; a single principle is asked for in 80 words
    and rejected over 120."""

    max_rule_words: int = MAX_RULE_WORDS
    max_rules: int = MAX_RULES
    principle_words: int = 80
    principle_reject_words: int = 120


@dataclass(frozen=True)
class Failure:
    """One wrong answer shown to the builder; ``note`` marks e.g. a counterfactual pair."""

    item: ReaderItem
    answer: str | None
    gold: str | None
    note: str = ""

    @classmethod
    def of(cls, item: ReaderItem, record: ItemRecord, note: str = "") -> Failure:
        return cls(item, record.answer_text, item.option_text(item.gold_key()), note)


@dataclass(frozen=True)
class FailureGroup:
    """Failures that share a group key; ``size`` counts all of the group's failures."""

    key: str
    failures: tuple[Failure, ...]
    size: int
    records: tuple[ItemRecord, ...] = ()


@dataclass(frozen=True)
class BuilderReply:
    """One builder call and its outcome: ``edit`` is set when the reply was accepted."""

    group: str
    text: str
    status: str  # "ok" | "rejected"
    reason: str = ""
    detail: str = ""
    diagnosis: str = ""
    edit: Edit | None = None
    shown: tuple[str, ...] = ()  # item ids of the failures shown
    names: tuple[str, ...] = ()  # the names the reply was checked against
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def render_failure(k: int, f: Failure) -> str:
    parts = [f"Failure {k}"]
    if f.note:
        parts.append(f"({f.note})")
    parts.append("Story:\n" + f.item.context.strip())
    parts.append(f"Question: {f.item.question}")
    ob = options_block(f.item)
    if ob:
        parts.append(ob)
    parts.append(f"The reader answered: {f.answer if f.answer else '(no answer it could parse)'}")
    parts.append(f"The correct answer: {f.gold}")
    return "\n".join(parts)


def builder_messages(artifact: Artifact, group: FailureGroup,
                     limits: BuilderLimits = BuilderLimits()) -> tuple[Message, ...]:
    """The builder prompt for one failure group."""
    failures = "\n\n".join(render_failure(k, f) for k, f in enumerate(group.failures, 1))
    if isinstance(artifact, RuleLibrary):
        body = LIBRARY_TASK.format(
            n=len(artifact), max_rules=artifact.max_rules,
            library=artifact.principle() or "(empty)", failures=failures,
            max_words=limits.max_rule_words)
    else:
        body = PRINCIPLE_TASK.format(principle=artifact.principle() or "(none yet)",
                                     failures=failures, max_words=limits.principle_words)
    return (Message("system", BUILDER_SYSTEM), Message("user", body))


_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)\n?[ \t]*```", re.S)


def load_object(text: str) -> dict[str, Any]:
    """The reply as one JSON object: the whole reply, or the content of one fenced block that
    is the whole reply. Raises ``ValueError`` otherwise."""
    s = text.strip()
    m = _FENCE.fullmatch(s)
    if m:
        s = m.group(1).strip()
    try:
        obj = json.loads(s)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err.msg} at char {err.pos}") from err
    if not isinstance(obj, dict):
        raise ValueError(f"a JSON {type(obj).__name__}, not an object")
    return obj


class Rejected(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def _text(obj: dict[str, Any], key: str, required: bool = True) -> str:
    if key not in obj or obj[key] is None:
        if required:
            raise Rejected("missing_field", f"no {key!r}")
        return ""
    if not isinstance(obj[key], str):
        raise Rejected("bad_type", f"{key!r} is a {type(obj[key]).__name__}, not a string")
    value = clean(obj[key])
    if required and not value:
        raise Rejected("missing_field", f"{key!r} is empty")
    return value


def parse_edit(text: str, artifact: Artifact, names: Sequence[str] = (),
               limits: BuilderLimits = BuilderLimits()) -> tuple[str, Edit]:
    """``(diagnosis, edit)`` from a reply; raises :class:`Rejected` with the reason code."""
    try:
        obj = load_object(text)
    except ValueError as err:
        raise Rejected("malformed_json", str(err)) from err
    diagnosis = _text(obj, "diagnosis")
    if not isinstance(artifact, RuleLibrary):
        principle = _text(obj, "principle")
        n = len(principle.split())
        if n > limits.principle_reject_words:
            raise Rejected("too_long",
                           f"principle has {n} words (limit {limits.principle_reject_words})")
        hits = names_in(principle, names)
        if hits:
            raise Rejected("names_story", f"names {', '.join(hits)}")
        return diagnosis, Edit("rewrite", principle=principle)
    if "operation" not in obj or obj["operation"] is None:
        raise Rejected("missing_field", "no 'operation'")
    op = obj["operation"]
    if not isinstance(op, str) or op.strip().lower() not in ("add", "revise", "retire"):
        raise Rejected("bad_operation", f"operation {op!r} is not add, revise or retire")
    op = op.strip().lower()
    entry = obj.get("entry")
    if isinstance(entry, bool) or not (entry is None or isinstance(entry, int)):
        raise Rejected("bad_entry", f"entry {entry!r} is not a number or null")
    if op in ("revise", "retire") and entry is None:
        raise Rejected("bad_entry", f"{op} needs an entry number")
    writes = op in ("add", "revise")
    condition = _text(obj, "condition", required=writes)
    rule = _text(obj, "rule", required=writes)
    if writes:
        words = Rule(condition, rule).words()
        if words > limits.max_rule_words:
            raise Rejected("too_long", f"rule has {words} words (limit {limits.max_rule_words})")
        hits = names_in(f"{condition} {rule}", names)
        if hits:
            raise Rejected("names_story", f"names {', '.join(hits)}")
    return diagnosis, Edit(op, entry if op != "add" else None,  # type: ignore[arg-type]
                           condition if writes else "", rule if writes else "")


def judge_reply(text: str, artifact: Artifact, group: FailureGroup,
                limits: BuilderLimits = BuilderLimits()) -> BuilderReply:
    """Parse and check one reply against the artifact it would change."""
    names = tuple(sorted(story_names([f.item for f in group.failures], group.records)))
    shown = tuple(f.item.item_id for f in group.failures)
    try:
        diagnosis, edit = parse_edit(text, artifact, names, limits)
        artifact.apply(edit)
    except Rejected as err:
        return BuilderReply(group.key, text, "rejected", err.reason, err.detail, shown=shown,
                            names=names)
    except EditError as err:
        return BuilderReply(group.key, text, "rejected", err.reason, err.detail,
                            diagnosis=diagnosis, shown=shown, names=names)
    return BuilderReply(group.key, text, "ok", diagnosis=diagnosis, edit=edit, shown=shown,
                        names=names)


class Builder:
    """One call per failure group, all groups of a round in one batch."""

    def __init__(self, backend: Backend, *, limits: BuilderLimits = BuilderLimits(),
                 temperature: float = 0.7, max_tokens: int = 512, seed: int = 0) -> None:
        self.backend = backend
        self.limits = limits
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    def request(self, artifact: Artifact, group: FailureGroup) -> Request:
        params = SamplingParams(n=1, temperature=self.temperature, max_tokens=self.max_tokens,
                                seed=self.seed)
        return Request(builder_messages(artifact, group, self.limits), params)

    def propose(self, artifact: Artifact, groups: Sequence[FailureGroup]) -> list[BuilderReply]:
        """One reply per group, in the groups' order."""
        if not groups:
            return []
        outs = self.backend.generate([self.request(artifact, g) for g in groups])
        replies = []
        for g, cs in zip(groups, outs, strict=True):
            c = cs[0]
            r = judge_reply(c.text, artifact, g, self.limits)
            usage = {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                     "finish_reason": c.finish_reason, "from_cache": c.from_cache}
            replies.append(BuilderReply(**{**r.__dict__, "usage": usage}))
        return replies
