"""PRISM's router, boundary control and routing diagnostics (zing-social-mind-report §5.3.3).

Routing is two calls per item (eq. 4): the first names the asked mental variable from the
question and its options alone (never the story), replying ``{"variable": <name>}``
(family ``harness.route.variable``); the second picks one skill among the candidates for that
variable, shown with their target variable and triggers, replying ``{"skill": <id>}`` (family
``harness.route.skill``, the candidates' ids only). Each step is one batched
``backend.generate`` call over all items. A reply that breaks its format is kept with its raw
text and gives the route status ``unparsed`` (the caller then answers without a skill); it is
never mapped to the nearest name. A skill that self-exits (its draft answers ``EXIT``,
:func:`is_self_exit`) is removed from the pool and the item rerouted among the rest (eq. 5), at
most ``max_reroutes`` times. :func:`routing_metrics` scores routes and answers by eq. 6.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from pydantic import Field

from cogrsi_lib.harness.skills import ASKED_VARIABLES, Skill, SkillLibrary, load_library
from cogrsi_lib.harness.taxonomy import Annotation
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, describe, enum_of, reply_model
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem

StepStatus = Literal["ok", "unparsed"]
RouteStatus = Literal["ok", "unparsed", "no_candidate", "exhausted"]

VARIABLE_FAMILY = prompt_family("harness.route.variable", "json")
SKILL_FAMILY = prompt_family("harness.route.skill", "json")
#: the answer a skill's draft gives to exit (the self-exit signal)
EXIT = "EXIT"

VARIABLE_SYSTEM = (
    "You read a question about a story and name the mental variable it asks about. "
    "You do not see the story; judge from the question and its options only."
)
SKILL_SYSTEM = (
    "You choose the reasoning skill that fits a question about a story. Pick the skill whose "
    "'use when' matches the question and whose 'not when' does not."
)


@dataclass
class Route:
    """The routing of one item: its asked variable, its chosen skill and how it got there.

    ``status``: ``ok`` (a skill was chosen), ``unparsed`` (the variable or skill reply did not
    parse; no skill), ``no_candidate`` (no skill for the variable) or ``exhausted`` (every
    reroute allowed was used, or no candidate is left). ``attempts`` are the skills chosen in
    order, ``exits`` those that self-exited; ``raw`` the replies as (step, text).
    """

    item_id: str
    variable: str | None
    variable_status: StepStatus
    skill_id: str | None
    status: RouteStatus
    attempts: list[str] = field(default_factory=list)
    exits: list[str] = field(default_factory=list)
    raw: list[tuple[str, str]] = field(default_factory=list)
    reason: str = ""
    ledger: CallLedger = field(default_factory=CallLedger)

    @property
    def routed(self) -> bool:
        return self.status == "ok" and self.skill_id is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "variable": self.variable,
            "variable_status": self.variable_status,
            "skill_id": self.skill_id,
            "status": self.status,
            "attempts": list(self.attempts),
            "exits": list(self.exits),
            "raw": [list(r) for r in self.raw],
            "reason": self.reason,
            "calls": self.ledger.to_dict(),
        }


@cache  # one reply model, built once
def variable_format() -> ReplyFormat:
    """Step 1's reply: one of the asked variables, by name."""
    model = reply_model("RouteVariable",
                        variable=(enum_of(list(ASKED_VARIABLES)), Field()))
    return ReplyFormat.json(VARIABLE_FAMILY, model)


def skill_format(ids: Sequence[str]) -> ReplyFormat:
    """Step 2's reply: the id of one of the candidates shown."""
    return ReplyFormat.json(SKILL_FAMILY, reply_model("RouteSkill", skill=(enum_of(ids), Field())))


def parse_variable(reply: str) -> str | None:
    """The variable a reply names, or None when it breaks the format."""
    try:
        return str(variable_format().parse(reply).variable)
    except ReplyError:
        return None


def parse_skill_choice(reply: str, allowed: Sequence[str]) -> str | None:
    """The skill id a reply names, if it is one of ``allowed``; None otherwise."""
    try:
        return str(skill_format(allowed).parse(reply).skill)
    except ReplyError:
        return None


def _question_block(item: ReaderItem) -> str:
    lines = [f"Question: {item.question}"]
    if item.options:
        labels = item.labels or ()
        lines.append("Options:")
        lines += [f"{lab}. {opt}" for lab, opt in zip(labels, item.options, strict=True)]
    return "\n".join(lines)


def variable_messages(item: ReaderItem) -> list[Message]:
    """Step 1's prompt: the question and options, the variables, the reply format."""
    menu = "\n".join(f"- {name}: {desc}" for name, (_, desc) in ASKED_VARIABLES.items())
    user = (
        f"{_question_block(item)}\n\nMental variables:\n{menu}\n\n"
        f"Which variable does the question ask about? {describe(variable_format())}"
    )
    return [Message("system", VARIABLE_SYSTEM), Message("user", user)]


def skill_messages(item: ReaderItem, variable: str, candidates: Sequence[Skill]) -> list[Message]:
    """Step 2's prompt: the story, the question, the asked variable and the candidates with
    their target variable and triggers."""
    menu = "\n".join(
        f"- {s.id} (target: {s.target_variable})\n  use when: {s.positive_trigger}\n"
        f"  not when: {s.negative_trigger}"
        for s in candidates
    )
    user = (
        f"Story:\n{item.context}\n\n{_question_block(item)}\n\n"
        f"Asked variable: {variable}\n\nSkills:\n{menu}\n\n"
        f"Which skill fits best? {describe(skill_format([s.id for s in candidates]))}"
    )
    return [Message("system", SKILL_SYSTEM), Message("user", user)]


@family_example(VARIABLE_FAMILY)
def _variable_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return Request(tuple(variable_messages(ITEM)), SamplingParams(max_tokens=32),
                   variable_format())


@family_example(SKILL_FAMILY)
def _skill_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    cands = load_library().candidates("first_order_belief")
    return Request(tuple(skill_messages(ITEM, "first_order_belief", cands)),
                   SamplingParams(max_tokens=32), skill_format([s.id for s in cands]))


class Router:
    """PRISM's two-step router (eq. 4) with reroute on self-exit (eq. 5)."""

    def __init__(
        self,
        backend: Backend,
        library: SkillLibrary | None = None,
        *,
        max_reroutes: int = 2,
        max_tokens: int = 32,
        seed: int = 0,
        structured: bool = True,
    ) -> None:
        if max_reroutes < 0:
            raise ValueError("max_reroutes must be >= 0")
        self.backend = backend
        self.library = library if library is not None else load_library()
        self.max_reroutes = max_reroutes
        self.max_tokens = max_tokens
        self.seed = seed
        self.structured = structured

    def _request(self, messages: list[Message], fmt: ReplyFormat) -> Request:
        return Request.of(
            messages, reply=fmt, structured=self.structured, n=1, temperature=0.0,
            max_tokens=self.max_tokens, seed=self.seed,
        )

    def route(self, items: Sequence[ReaderItem]) -> list[Route]:
        """One route per item (:meth:`route_flow`), every item's calls in one stream."""
        return run_flows(self.backend, [self.route_flow(it) for it in items])

    def route_flow(self, item: ReaderItem) -> Flow[Route]:
        """An item's route: the variable call, then the skill call when the variable parsed
        and has candidates."""
        [cs] = yield [self._request(variable_messages(item), variable_format())]
        text = cs[0].text
        var = parse_variable(text)
        r = Route(item.item_id, var, "ok" if var else "unparsed", None, "unparsed")
        r.raw.append(("variable", text))
        r.ledger.add("route_variable", cs)
        if var is None:
            r.reason = "variable reply did not parse"
        else:
            yield from self._pick(item, r, final_status="no_candidate")
        return r

    def reroute(self, routes_and_exited: Sequence[tuple[ReaderItem, Route]]) -> list[Route]:
        """New routes for items whose chosen skill self-exited (:meth:`reroute_flow`), in
        one stream. The given routes are left unchanged."""
        return run_flows(self.backend, [self.reroute_flow(it, old)
                                        for it, old in routes_and_exited])

    def reroute_flow(self, item: ReaderItem, old: Route) -> Flow[Route]:
        """A new route for an item whose chosen skill self-exited: that skill joins
        ``exits`` and the router picks again among the candidates never tried (eq. 5).
        After ``max_reroutes`` reroutes, or with no candidate left, the status is
        ``exhausted``. ``old`` is left unchanged."""
        if old.item_id != item.item_id:
            raise ValueError(f"route for {old.item_id!r} given with item {item.item_id!r}")
        if old.skill_id is None or old.variable is None:
            raise ValueError(f"route {old.item_id!r} has no chosen skill to exit from")
        r = copy.deepcopy(old)
        r.exits.append(old.skill_id)
        r.skill_id = None
        if len(r.exits) > self.max_reroutes:
            r.status, r.reason = "exhausted", f"{len(r.exits)} self-exits"
        else:
            yield from self._pick(item, r, final_status="exhausted")
        return r

    def _pick(self, item: ReaderItem, r: Route, final_status: RouteStatus) -> Flow[None]:
        """The skill call of a route with a variable (none when no candidate is left); sets
        its status and skill."""
        assert r.variable is not None
        cands = self.library.candidates(r.variable, exclude=set(r.attempts) | set(r.exits))
        if not cands:
            r.status, r.skill_id = final_status, None
            r.reason = f"no candidate skill left for {r.variable}"
            return
        [cs] = yield [self._request(skill_messages(item, r.variable, cands),
                                    skill_format([s.id for s in cands]))]
        text = cs[0].text
        r.raw.append(("skill", text))
        r.ledger.add("route_skill", cs)
        sid = parse_skill_choice(text, [s.id for s in cands])
        if sid is None:
            r.status, r.skill_id, r.reason = "unparsed", None, "skill reply did not parse"
        else:
            r.status, r.skill_id, r.reason = "ok", sid, ""
            r.attempts.append(sid)


def support_block(skill: Skill) -> str:
    """The typed support block the composer puts in the answering prompt (§5.3.3)."""
    steps = "\n".join(f"{i}. {step}" for i, step in enumerate(skill.workflow, 1))
    return (
        f"[Skill {skill.id}]\n"
        f"Target variable: {skill.target_variable}\n"
        f"Applies when: {skill.positive_trigger}\n"
        f"Does not apply when: {skill.negative_trigger}\n"
        f"Workflow:\n{steps}\n"
        f"Failure check: {skill.failure_check}\n"
        f"Self-exit: {skill.self_exit.rstrip('.')}. If that holds, give {EXIT} as your "
        "answer; otherwise follow the workflow and answer as instructed."
    )


def is_self_exit(answer: str | None) -> bool:
    """Whether a draft's parsed answer is the self-exit signal :data:`EXIT` (a free-text
    answer is compared as the reader normalises it)."""
    return answer is not None and answer.casefold() == EXIT.casefold()


# ------------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class RoutingRow:
    """One item's routing outcome for :func:`routing_metrics`. ``base_correct`` is None when
    the base answer's correctness is unknown; ``skill_correct`` None counts as wrong (an
    unanswered or unparsed skill-augmented answer is not correct)."""

    annotation: Annotation | None
    skill_id: str | None
    base_correct: bool | None
    skill_correct: bool | None
    item_id: str = ""


def _row(row: RoutingRow | Mapping[str, Any]) -> RoutingRow:
    if isinstance(row, RoutingRow):
        return row
    try:
        return RoutingRow(
            annotation=row["annotation"],
            skill_id=row["skill_id"],
            base_correct=row["base_correct"],
            skill_correct=row["skill_correct"],
            item_id=str(row.get("item_id", "")),
        )
    except KeyError as e:
        raise ValueError(f"routing row {dict(row)!r} lacks {e.args[0]!r}") from None


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"value": k / n if n else None, "k": k, "n": n}


def routing_metrics(
    rows: Iterable[RoutingRow | Mapping[str, Any]], library: SkillLibrary | None = None
) -> dict[str, Any]:
    """Eq. 6 (§5.3.3.3) with numerators ``k`` and denominators ``n``; ``value`` is None when
    ``n`` is 0.

    - ``family_hit``, ``strict_hit``: over items with an annotation. An item routed to no
      skill (unparsed, no candidate, exhausted) counts as a miss; ``n_unrouted_annotated``
      says how many. Items without annotation are left out of both and counted in
      ``n_unannotated``.
    - ``repair`` = P(skill answer correct | base wrong), ``damage`` = P(skill answer wrong |
      base correct): over routed items (a skill was chosen, annotated or not) with a known
      base outcome, so their two denominators partition those items; routed items with an
      unknown base outcome are counted in ``n_routed_base_unknown``.
    - ``unrouted_share``: the share of all items with no chosen skill.
    """
    lib = library if library is not None else load_library()
    rs = [_row(r) for r in rows]
    fam_k = strict_k = n_ann = unrouted_ann = 0
    rep_k = rep_n = dmg_k = dmg_n = base_unknown = 0
    for r in rs:
        routed = r.skill_id is not None
        if routed and r.skill_id not in lib:
            raise ValueError(f"routing row {r.item_id!r}: unknown skill {r.skill_id!r}")
        if r.annotation is not None:
            n_ann += 1
            if not routed:
                unrouted_ann += 1
            else:
                fam_k += lib.family_of(r.skill_id) == r.annotation.family
                strict_k += r.skill_id in lib.acceptable(r.annotation.tag)
        if not routed:
            continue
        if r.base_correct is None:
            base_unknown += 1
        elif r.base_correct:
            dmg_n += 1
            dmg_k += r.skill_correct is not True
        else:
            rep_n += 1
            rep_k += r.skill_correct is True
    n_routed = sum(r.skill_id is not None for r in rs)
    return {
        "n_items": len(rs),
        "n_annotated": n_ann,
        "n_unannotated": len(rs) - n_ann,
        "n_routed": n_routed,
        "n_unrouted": len(rs) - n_routed,
        "n_unrouted_annotated": unrouted_ann,
        "unrouted_share": (len(rs) - n_routed) / len(rs) if rs else None,
        "n_routed_base_unknown": base_unknown,
        "family_hit": _rate(fam_k, n_ann),
        "strict_hit": _rate(strict_k, n_ann),
        "repair": _rate(rep_k, rep_n),
        "damage": _rate(dmg_k, dmg_n),
    }
