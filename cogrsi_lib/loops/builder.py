"""The builder: the backbone proposes one change per failure group (CogRSI §4.2, App. C.2).

Each call shows the current library (or principle) and up to four failures of one group
(story, question, the reader's answer and the gold answer) and asks for one JSON object:
a one-sentence diagnosis, an operation (add, revise, retire), an entry number, a condition and
a rule; the single-principle arm asks for a diagnosis and a whole new principle. The builder
is never told what makes a rule valid. It samples at temperature 0.7.

The reply format is declared once (:func:`builder_format`, family ``loops.builder`` or
``loops.builder.principle``): the fields in order, the operation one of add/revise/retire,
the entry a number of the library or null, and each text bounded so that the reply fits the
call's token cap. Replies are parsed strictly against it (DESIGN.md); a reply that breaks it
(``malformed_json``), leaves a text empty, asks to revise or retire without an entry, writes a
rule over the word limit, or names a character or place of the shown stories is rejected with
a reason code and logged, never repaired.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import Field

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import (
    CHARS_PER_TOKEN,
    ReplyError,
    ReplyFormat,
    describe,
    enum_of,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.loops.library import Artifact, Edit, EditError, RuleLibrary
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import MAX_RULE_WORDS, MAX_RULES, Rule
from cogrsi_lib.reader.prompts import options_block
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.text import clean, names_in, story_names

#: rejection codes, in the order the checks run (``malformed_json``: the reply breaks the
#: declared format: not one JSON object, a missing or extra field, a wrong type or value)
REJECTIONS = ("malformed_json", "missing_field", "bad_operation", "bad_entry", "too_long",
              "names_story", "library_full", "no_change")

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
{marker} {reply}"""

PRINCIPLE_TASK = """Current principle:
{principle}

The reader, following this principle, answered these questions wrongly:

{failures}

Write a new principle for the reader, at most {max_words} words, that would have avoided these \
errors. Write in general terms: do not name the characters or places of these stories.
{marker} {reply}"""

#: a marker the scripted backend and tests use to recognise builder prompts
BUILDER_MARKER = "Propose your change."
LIBRARY_FAMILY = prompt_family("loops.builder", "json")
PRINCIPLE_FAMILY = prompt_family("loops.builder.principle", "json")
#: the longest texts a builder reply may hold (a 60-word rule is about 400 characters)
MAX_CHARS = {"diagnosis": 300, "condition": 250, "rule": 450, "principle": 900}
#: how the reply's text budget is shared when the token cap is the tighter bound
SHARES = {"diagnosis": 0.2, "condition": 0.25, "rule": 0.55, "principle": 0.8}
DESCRIPTIONS = {
    "diagnosis": "one sentence: why the reader failed",
    "condition": "when the rule applies",
    "rule": "what the reader should conclude",
    "principle": "the new principle",
}


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


def _text_fields(names: Sequence[str], max_tokens: int, reserved: int) -> dict[str, Any]:
    """Bounded text fields sharing what the cap leaves after ``reserved`` characters of keys
    and values (counted at one token per character)."""
    budget = max(0, CHARS_PER_TOKEN * (max_tokens - reserved))
    # condition and rule may be empty: a retirement writes neither
    return {n: (str, text_field(max(16, min(MAX_CHARS[n], int(SHARES[n] * budget))),
                                int(n in ("diagnosis", "principle")), DESCRIPTIONS[n]))
            for n in names}


def builder_format(artifact: Artifact, max_tokens: int) -> ReplyFormat:
    """The builder's reply: a diagnosis, then an operation on the library (or a new
    principle), each text bounded so that the whole reply fits ``max_tokens``."""
    if not isinstance(artifact, RuleLibrary):
        texts = _text_fields(("diagnosis", "principle"), max_tokens, 40)
        return ReplyFormat.json(PRINCIPLE_FAMILY, reply_model("PrincipleEdit", **texts))
    texts = _text_fields(("diagnosis", "condition", "rule"), max_tokens, 110)
    entry = (int | None, Field(ge=1, le=max(1, artifact.max_rules),
                               description="number of the entry to revise or retire, or "
                                           "null to add"))
    model = reply_model(
        "LibraryEdit", diagnosis=texts["diagnosis"],
        operation=(enum_of(["add", "revise", "retire"]), Field()), entry=entry,
        condition=texts["condition"], rule=texts["rule"],
    )
    return ReplyFormat.json(LIBRARY_FAMILY, model)


def builder_messages(artifact: Artifact, group: FailureGroup,
                     limits: BuilderLimits = BuilderLimits(),
                     fmt: ReplyFormat | None = None) -> tuple[Message, ...]:
    """The builder prompt for one failure group."""
    fmt = fmt or builder_format(artifact, 512)
    failures = "\n\n".join(render_failure(k, f) for k, f in enumerate(group.failures, 1))
    if isinstance(artifact, RuleLibrary):
        body = LIBRARY_TASK.format(
            n=len(artifact), max_rules=artifact.max_rules,
            library=artifact.principle() or "(empty)", failures=failures,
            max_words=limits.max_rule_words, marker=BUILDER_MARKER, reply=describe(fmt))
    else:
        body = PRINCIPLE_TASK.format(principle=artifact.principle() or "(none yet)",
                                     failures=failures, max_words=limits.principle_words,
                                     marker=BUILDER_MARKER, reply=describe(fmt))
    return (Message("system", BUILDER_SYSTEM), Message("user", body))


class Rejected(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def _text(reply: Any, key: str, required: bool = True) -> str:
    value = clean(getattr(reply, key))
    if required and not value:
        raise Rejected("missing_field", f"{key!r} is empty")
    return value


def parse_edit(text: str, artifact: Artifact, names: Sequence[str] = (),
               limits: BuilderLimits = BuilderLimits(),
               fmt: ReplyFormat | None = None) -> tuple[str, Edit]:
    """``(diagnosis, edit)`` from a reply; raises :class:`Rejected` with the reason code."""
    fmt = fmt or builder_format(artifact, 512)
    try:
        reply = fmt.parse(text)
    except ReplyError as err:
        raise Rejected("malformed_json", err.reason) from err
    diagnosis = _text(reply, "diagnosis")
    if not isinstance(artifact, RuleLibrary):
        principle = _text(reply, "principle")
        n = len(principle.split())
        if n > limits.principle_reject_words:
            raise Rejected("too_long",
                           f"principle has {n} words (limit {limits.principle_reject_words})")
        hits = names_in(principle, names)
        if hits:
            raise Rejected("names_story", f"names {', '.join(hits)}")
        return diagnosis, Edit("rewrite", principle=principle)
    op, entry = reply.operation, reply.entry
    if op in ("revise", "retire") and entry is None:
        raise Rejected("bad_entry", f"{op} needs an entry number")
    writes = op in ("add", "revise")
    condition = _text(reply, "condition", required=writes)
    rule = _text(reply, "rule", required=writes)
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
                limits: BuilderLimits = BuilderLimits(),
                fmt: ReplyFormat | None = None) -> BuilderReply:
    """Parse and check one reply against the artifact it would change."""
    names = tuple(sorted(story_names([f.item for f in group.failures], group.records)))
    shown = tuple(f.item.item_id for f in group.failures)
    try:
        diagnosis, edit = parse_edit(text, artifact, names, limits, fmt)
        artifact.apply(edit)
    except Rejected as err:
        return BuilderReply(group.key, text, "rejected", err.reason, err.detail, shown=shown,
                            names=names)
    except EditError as err:
        return BuilderReply(group.key, text, "rejected", err.reason, err.detail,
                            diagnosis=diagnosis, shown=shown, names=names)
    return BuilderReply(group.key, text, "ok", diagnosis=diagnosis, edit=edit, shown=shown,
                        names=names)


def arm_seed(arm: str, seed: int) -> int:
    """The builder's sampling seed for arm ``arm`` in loop seed ``seed``: arms sample their
    own candidates, as the paper ran them separately (the cache is keyed on the request, so
    a seed shared by arms would hand every arm the same round-0 candidates)."""
    digest = hashlib.sha256(f"{arm}/{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


class Builder:
    """One call per failure group, all groups of a round in one batch; ``seed`` is the
    sampling seed of every request (:func:`arm_seed` in the loops stage)."""

    def __init__(self, backend: Backend, *, limits: BuilderLimits = BuilderLimits(),
                 temperature: float = 0.7, max_tokens: int = 512, seed: int = 0,
                 structured: bool = True) -> None:
        self.backend = backend
        self.limits = limits
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.structured = structured

    def request(self, artifact: Artifact, group: FailureGroup) -> Request:
        params = SamplingParams(n=1, temperature=self.temperature, max_tokens=self.max_tokens,
                                seed=self.seed)
        fmt = builder_format(artifact, self.max_tokens)
        return Request(builder_messages(artifact, group, self.limits, fmt), params, fmt,
                       self.structured)

    def propose(self, artifact: Artifact, groups: Sequence[FailureGroup]) -> list[BuilderReply]:
        """One reply per group, in the groups' order."""
        if not groups:
            return []
        reqs = [self.request(artifact, g) for g in groups]
        outs = self.backend.generate(reqs)
        replies = []
        for g, req, cs in zip(groups, reqs, outs, strict=True):
            c = cs[0]
            r = judge_reply(c.text, artifact, g, self.limits, req.reply)
            usage = {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                     "finish_reason": c.finish_reason, "from_cache": c.from_cache,
                     "structured": c.structured}
            replies.append(replace(r, usage=usage))
        return replies


# -- the families' example requests (cogrsi_lib/llm/families.py) ------------------------------


def _example(artifact: Artifact) -> Request:
    from cogrsi_lib.reader.example_items import ITEM

    group = FailureGroup("false-belief", (Failure(ITEM, "box", "basket"),), 1)
    return Builder(None, max_tokens=192).request(artifact, group)  # type: ignore[arg-type]


@family_example(LIBRARY_FAMILY)
def _library_example() -> Request:
    return _example(RuleLibrary())


@family_example(PRINCIPLE_FAMILY)
def _principle_example() -> Request:
    from cogrsi_lib.loops.library import PrincipleText

    return _example(PrincipleText(""))
