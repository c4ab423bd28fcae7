"""The harness as a reader variant: gate, compose, draft, validate (zing-social-mind-report
§5.2, §5.7.0.2), and the module ablations of its Table 10 (§5.8.2).

A :class:`HarnessSystem` wraps a frozen backend. Per item it

1. gates each active module (its own rule, recorded): PRISM routes the asked variable to a
   skill (:mod:`router`); Starling is used only when the question parses as a belief or
   reality question and the story yields state for its object (:mod:`state_memory`); SAGE
   injects what its fallback cascade selects (:mod:`selector`); retrieval injects notes only
   past its gate (:mod:`retrieval`);
2. composes one prompt: the story first, then each support block labelled as support;
3. drafts one greedy direct answer (the report's protocol: temperature 0, one prediction);
4. validates: the answer must parse strictly; a draft whose answer is the skill's self-exit
   (:data:`~cogrsi_lib.harness.router.EXIT`, an extra value of the draft's format) reroutes
   the item (eq. 5) and drafts again, at most ``max_reroutes`` times, then answers without a
   skill.

With ``control`` (the ``full`` ablation) the control layer of :mod:`control` sits between 1
and 2: a per-item gate (eq. 3) opens the modules its policy trusts and picks a path (direct,
augment, staged), and the draft is checked for perspective drift, norm overriding and
over-mentalising against Starling's tracked state, and redrafted once if flagged.

Every decision goes into the record's ``extra`` (the trace), every call into its ledger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cogrsi_lib.embedding import Embedder
from cogrsi_lib.harness.control import (
    Check,
    Decision,
    Policy,
    gate,
    option_for,
    repair_block,
    validate,
)
from cogrsi_lib.harness.dimension import dimension_flow
from cogrsi_lib.harness.experience_store import ExperienceStore
from cogrsi_lib.harness.extract import parse_question
from cogrsi_lib.harness.retrieval import (
    Retriever,
    categories_flow,
    categories_for_variable,
    load_notes,
)
from cogrsi_lib.harness.router import EXIT, Route, Router, is_self_exit, support_block
from cogrsi_lib.harness.selector import Selector
from cogrsi_lib.harness.skills import ASKED_VARIABLES, Skill, SkillLibrary, load_library
from cogrsi_lib.harness.state_memory import StateMemory
from cogrsi_lib.harness.taxonomy import DIMENSION_FAMILY
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.types import Request, SamplingParams
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import read_answer
from cogrsi_lib.reader.records import ItemRecord, PerceptionRecord, new_record
from cogrsi_lib.reader.system import parse_samples
from cogrsi_lib.reader.views import plain_view

MODULES = ("skills", "state", "experience", "retrieval")

#: Table 10's configurations (Memory = Starling + SAGE), plus each memory on its own
ABLATIONS: dict[str, tuple[str, ...]] = {
    "base": (),
    "skills": ("skills",),
    "memory": ("state", "experience"),
    "retrieval": ("retrieval",),
    "full": MODULES,
    "full_ungated": MODULES,
    "state": ("state",),
    "experience": ("experience",),
}
#: the ablations that run the control layer (§5.7); ``full_ungated`` is every module on every
#: item, so that the control layer's own contribution shows
CONTROLLED = frozenset({"full"})

_FAMILY_DIMENSION = {fam: dim for dim, fam in DIMENSION_FAMILY.items()}
#: the family of a draft whose skill may self-exit (a direct answer that may also be EXIT)
DRAFT_FAMILY = prompt_family("harness.draft", "json")


@family_example(DRAFT_FAMILY)
def _draft_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    fmt = prompts.answer_format(ITEM, prompts.THINK_NONE, 32, also=(EXIT,), family=DRAFT_FAMILY)
    return prompts.answer_request(ITEM, plain_view(ITEM), SamplingParams(max_tokens=32),
                                  think=prompts.THINK_NONE, fmt=fmt)


@dataclass(frozen=True)
class HarnessConfig:
    """Which modules run and the harness's call settings."""

    modules: tuple[str, ...] = ()
    answer_max_tokens: int = 32
    route_max_tokens: int = 32
    max_reroutes: int = 1
    state_witnesses: str = "presence"
    seed: int = 0
    structured: bool = True
    #: the control layer: per-item gate over paths, validator and one repair (§5.7)
    control: bool = False
    #: SAGE's Selector mode (Figure 26: cascade, exact_only, dimension_only, store)
    experience_mode: str = "cascade"

    def __post_init__(self) -> None:
        bad = [m for m in self.modules if m not in MODULES]
        if bad:
            raise ValueError(f"unknown harness module(s) {bad} (known: {', '.join(MODULES)})")
        if self.max_reroutes < 0:
            raise ValueError("max_reroutes must be >= 0")


def merge_ledger(dst: CallLedger, src: CallLedger) -> None:
    """Add every role of ``src`` to ``dst``."""
    for role, u in src.roles.items():
        dst.roles.setdefault(role, type(u)()).merge(u)


#: Starling's update rules per source (zing-social-mind-report §5.8.4): Hi-ToM's gold follows
#: its generator (tell trusted by exit order, moves as the generator writes them), which
#: agrees with every Hi-ToM label where the oracle's perception rules agree with fewer at
#: higher orders; every other source gets the oracle's rules
STARLING_RULES: dict[str, dict[str, str]] = {
    "hi-tom": {"tell_rule": "exit_order", "move_rule": "hitom_generator"},
}
DEFAULT_RULES = {"tell_rule": "oracle", "move_rule": "witnessed"}


def starling_rules(item: ReaderItem) -> dict[str, str]:
    """The tell and move rules Starling reads ``item``'s story with (by its benchmark)."""
    return dict(STARLING_RULES.get(str(item.meta.get("benchmark", "")).lower(), DEFAULT_RULES))


@lru_cache(maxsize=256)
def _memory(lines: tuple[str, ...], witnesses: str, tell_rule: str, move_rule: str
            ) -> StateMemory:
    return StateMemory.from_story(list(lines), witnesses, tell_rule=tell_rule,
                                  move_rule=move_rule)


def story_memory(item: ReaderItem, witnesses: str = "presence") -> StateMemory:
    """Starling's memory of ``item``'s story under its source's rules, read once per story
    (the module's block and the validator share it; queries never change it)."""
    return _memory(tuple(item.lines()), witnesses, **starling_rules(item))


@dataclass(frozen=True)
class Tracked:
    """What Starling tracks for an item's question: the asked chain, object and attribute,
    the chain's value and reality's (None: unknown)."""

    chain: tuple[str, ...]
    obj: str
    attribute: str
    view: str | None
    reality: str | None


def tracked_state(item: ReaderItem, witnesses: str = "presence") -> Tracked | None:
    """Starling's answers for ``item``'s question (None: not a belief or reality question)."""
    parsed = parse_question(item.question)
    if parsed is None:
        return None
    chain, obj, attribute = parsed
    memory = story_memory(item, witnesses)
    view, real = memory.query(chain, obj, attribute), memory.query((), obj, attribute)
    return Tracked(tuple(chain), obj, attribute, None if view is None else str(view.value),
                   None if real is None else str(real.value))


def state_block(item: ReaderItem, witnesses: str = "presence") -> tuple[str, dict[str, Any]]:
    """Starling's block for a belief/reality question, or ``""`` with the bypass reason."""
    parsed = parse_question(item.question)
    if parsed is None:
        return "", {"decision": "not_a_belief_question"}
    chain, obj, attribute = parsed
    rules = starling_rules(item)
    memory = story_memory(item, witnesses)
    if obj not in memory.objects():
        return "", {"decision": "object_not_tracked", "object": obj}
    chains = [chain[:i] for i in range(len(chain) + 1)]
    st = memory.query(chain, obj, attribute)
    trace = {
        "decision": "inject",
        "chain": list(chain),
        "object": obj,
        "attribute": attribute,
        "answer": None if st is None else str(st.value),
        "statements": len(memory.statements),
        **rules,
    }
    return memory.render_block(chains, obj, [attribute]), trace


class HarnessSystem:
    """A reader variant made of the frozen model plus the active support modules."""

    def __init__(
        self,
        backend: Backend,
        config: HarnessConfig | None = None,
        *,
        name: str | None = None,
        library: SkillLibrary | None = None,
        store: ExperienceStore | None = None,
        embedder: Embedder | None = None,
        retriever: Retriever | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.backend = backend
        self.config = config or HarnessConfig()
        self.policy = policy or Policy()
        mods = set(self.config.modules)
        self.name = name or ("harness:" + ("+".join(self.config.modules) or "base"))
        if mods & {"experience", "retrieval"} and embedder is None and retriever is None:
            raise ValueError("experience memory and retrieval need an embedder")
        self.router = (
            Router(backend, library or load_library(), max_reroutes=self.config.max_reroutes,
                   max_tokens=self.config.route_max_tokens, seed=self.config.seed,
                   structured=self.config.structured)
            if "skills" in mods else None
        )  # fmt: skip
        self.selector = (
            Selector(store or ExperienceStore(), embedder, mode=self.config.experience_mode)
            if "experience" in mods else None
        )
        if "retrieval" in mods and retriever is None:
            retriever = Retriever(load_notes(), embedder)
        self.retriever = retriever if "retrieval" in mods else None

    # ------------------------------------------------------------------ gates
    def _gates(self, item: ReaderItem, ledger: CallLedger
               ) -> Flow[tuple[Route | None, str | None, tuple[str, ...]]]:
        """The model's calls that decide an item's support, in order: its route (PRISM),
        SAGE's dimension (from the routed variable when PRISM ran, else one strict call)
        and retrieval's categories (from the routed variable, else the model's prediction,
        so that a failed route does not switch retrieval off)."""
        route = (yield from self.router.route_flow(item)) if self.router is not None else None
        dim = None
        if self.selector is not None:
            if route is not None:
                v = route.variable
                fam = ASKED_VARIABLES[v][0] if v in ASKED_VARIABLES else None
                dim = _FAMILY_DIMENSION.get(fam) if fam else None
            else:
                pred = yield from dimension_flow(item, seed=self.config.seed, ledger=ledger,
                                                 structured=self.config.structured)
                dim = pred.dimension
        cats: tuple[str, ...] = ()
        if self.retriever is not None:
            if route is not None and route.variable in ASKED_VARIABLES:
                cats = categories_for_variable(route.variable)
            else:
                cp = yield from categories_flow(item, seed=self.config.seed,
                                                structured=self.config.structured)
                merge_ledger(ledger, cp.ledger)
                cats = tuple(cp.categories)
        return route, dim, cats

    # ----------------------------------------------------------------- drafts
    def _draft_request(self, item: ReaderItem, support: Sequence[str],
                       skill: Skill | None) -> Request:
        """A direct answer; with a skill, :data:`EXIT` is also an answer."""
        params = SamplingParams(
            n=1, temperature=0.0, max_tokens=self.config.answer_max_tokens, seed=self.config.seed
        )
        blocks = ([support_block(skill)] if skill is not None else []) + [b for b in support if b]
        view = plain_view(item)
        if blocks:
            view += "\n\nSupport (never overrides the story):\n\n" + "\n\n".join(blocks)
        fmt = None
        if skill is not None:
            fmt = prompts.answer_format(item, prompts.THINK_NONE, params.max_tokens,
                                        also=(EXIT,), family=DRAFT_FAMILY)
        return prompts.answer_request(
            item, view, params, think=prompts.THINK_NONE, structured=self.config.structured,
            fmt=fmt,
        )

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        """Every item's records: its gates' calls (one stream over the items), the support
        modules (state memory, experience, retrieval: batched), then its drafts (a second
        stream): each item's next call goes out as soon as the one it reads is back."""
        items = list(items)
        recs = [new_record(self.name, it) for it in items]
        traces: list[dict[str, Any]] = [{"modules": list(self.config.modules)} for _ in items]
        blocks: list[dict[str, str]] = [{} for _ in items]
        gates = run_flows(self.backend, [self._gates(it, rec.ledger)
                                         for it, rec in zip(items, recs, strict=True)])
        routes = [g[0] for g in gates]
        if "state" in self.config.modules:
            for i, it in enumerate(items):
                blocks[i]["state"], traces[i]["state"] = state_block(
                    it, self.config.state_witnesses)
        if self.selector is not None:
            for i, act in enumerate(self.selector.select_batch(items, [g[1] for g in gates])):
                blocks[i]["experience"] = act.text
                traces[i]["experience"] = act.to_dict()
        if self.retriever is not None:
            for i, ret in enumerate(self.retriever.retrieve_batch(items, [g[2] for g in gates])):
                blocks[i]["retrieval"] = ret.block
                traces[i]["retrieval"] = ret.to_dict()
        if self.config.control:
            flows = [self._controlled(it, rec, b, r, t)
                     for it, rec, b, r, t in zip(items, recs, blocks, routes, traces, strict=True)]
        else:
            flows = [self._final(it, rec, [b[m] for m in MODULES if m in b], r, t)
                     for it, rec, b, r, t in zip(items, recs, blocks, routes, traces, strict=True)]
        run_flows(self.backend, flows)
        return recs

    # ---------------------------------------------------------------- control
    def _controlled(self, item: ReaderItem, rec: ItemRecord, block: dict[str, str],
                    route: Route | None, trace: dict[str, Any]) -> Flow[None]:
        """Gate the item onto a path, draft, validate, and redraft a flagged draft once: a
        staged item with the evidence it held back, any other under a repair block."""
        known = tracked_state(item, self.config.state_witnesses)
        evidence = {m: bool(block.get(m)) for m in self.config.modules if m != "skills"}
        if self.router is not None:
            evidence["skills"] = bool(route is not None and route.routed)
        d = gate(None if known is None else known.chain, evidence, self.policy)
        opened = [block[m] for m in MODULES if m in d.opened and block.get(m)]
        used = route if d.path == "augment" and "skills" in d.opened else None
        yield from self._final(item, rec, opened if d.path == "augment" else [], used, trace)
        if route is not None and used is None:  # routed, but the gate kept the skill out
            merge_ledger(rec.ledger, route.ledger)
            trace["route"] = {**route.to_dict(), "used": False}
        check = self._check(rec, known, d)
        ctl: dict[str, Any] = {**d.to_dict(), "first": check.to_dict(),
                               "redrafted": bool(check.flags)}
        if check.flags:
            assert known is not None  # only a tracked question is flagged
            value = known.view if known.chain else known.reality
            label = option_for(value, list(zip(item.labels, item.options, strict=True)))
            repair = [] if d.path == "staged" else [
                repair_block(known.chain, known.obj, known.attribute, check, label)]
            again = new_record(self.name, item)
            yield from self._final(item, again, opened + repair, None, {})
            rec.samples, rec.answer = again.samples, again.answer
            rec.answer_text, rec.status = again.answer_text, again.status
            merge_ledger(rec.ledger, again.ledger)
            ctl["final"] = self._check(rec, known, d).to_dict()
            ctl["redraft"] = "evidence" if d.path == "staged" else "repair"
        rec.extra = {**trace, "control": ctl}

    @staticmethod
    def _check(rec: ItemRecord, known: Tracked | None, d: Decision) -> Check:
        if known is None:
            return validate(None, None, None, None)
        return validate(rec.answer_text, known.chain, known.view, known.reality, d.opened)

    def answer_with_support(
        self, items: Sequence[ReaderItem], blocks: Sequence[Sequence[str]]
    ) -> list[ItemRecord]:
        """Draft answers with the given support blocks only (no gate, no module): the
        generator of SAGE's distillation (:func:`cogrsi_lib.harness.distil.distil`)."""
        items = list(items)
        if len(blocks) != len(items):
            raise ValueError("one list of support blocks per item")
        recs = [new_record(self.name, it) for it in items]
        run_flows(self.backend, [
            self._final(it, rec, list(b), None, {"modules": [], "support_blocks": len(b)})
            for it, rec, b in zip(items, recs, blocks, strict=True)])
        return recs

    def _final(self, item: ReaderItem, rec: ItemRecord, support: Sequence[str],
               route: Route | None, trace: dict[str, Any]) -> Flow[Route | None]:
        """Draft, validate and reroute on self-exit; write the answer and the trace into
        ``rec``. Returns the item's last route."""
        lib = self.router.library if self.router is not None else None
        for attempt in range(self.config.max_reroutes + 2):
            skill = (lib[route.skill_id] if lib is not None and route is not None
                     and route.routed else None)  # fmt: skip
            req = self._draft_request(item, support, skill)
            [cs] = yield [req]
            if skill is not None and is_self_exit(read_answer(item, req.reply,
                                                              cs[0].text).value):
                rec.ledger.add("draft_exit", cs)
                assert route is not None
                if attempt >= self.config.max_reroutes:  # exits left: answer without a skill
                    if route.skill_id is not None:  # the last skill exited too: keep it
                        route.exits.append(route.skill_id)
                    route.status, route.skill_id = "exhausted", None
                    route.reason = f"{len(route.exits)} self-exits"
                else:
                    assert self.router is not None
                    route = yield from self.router.reroute_flow(item, route)
                continue
            s, a = parse_samples(item, "harness", req, cs, rec.ledger, "draft")
            rec.samples = s
            rec.answer, rec.status = a[0], "ok" if a[0] is not None else "unparsed"
            rec.answer_text = item.option_text(a[0])
            trace["draft_attempts"] = attempt + 1
            break
        if route is not None:
            merge_ledger(rec.ledger, route.ledger)
            trace["route"] = route.to_dict()
        rec.perception = PerceptionRecord("none")
        rec.extra = trace
        return route


def build_ablations(
    backend: Backend,
    names: Sequence[str],
    *,
    config: Mapping[str, Any] | None = None,
    store: ExperienceStore | None = None,
    embedder: Embedder | None = None,
    retriever: Retriever | None = None,
    library: SkillLibrary | None = None,
    policy: Policy | None = None,
) -> list[HarnessSystem]:
    """One system per ablation name (keys of :data:`ABLATIONS`), sharing every module."""
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        raise ValueError(f"unknown ablation(s) {unknown} (known: {', '.join(ABLATIONS)})")
    settings = dict(config or {})
    return [
        HarnessSystem(backend, HarnessConfig(modules=ABLATIONS[n], control=n in CONTROLLED,
                                             **settings),
                      name=f"harness:{n}", library=library, store=store, embedder=embedder,
                      retriever=retriever, policy=policy)
        for n in names
    ]  # fmt: skip
