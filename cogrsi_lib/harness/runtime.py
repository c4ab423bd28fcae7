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
from cogrsi_lib.harness.dimension import predict_dimension
from cogrsi_lib.harness.experience_store import ExperienceStore
from cogrsi_lib.harness.extract import parse_question
from cogrsi_lib.harness.retrieval import (
    Retriever,
    categories_for_variable,
    load_notes,
    predict_categories,
)
from cogrsi_lib.harness.router import EXIT, Route, Router, is_self_exit, support_block
from cogrsi_lib.harness.selector import Selector
from cogrsi_lib.harness.skills import ASKED_VARIABLES, SkillLibrary, load_library
from cogrsi_lib.harness.state_memory import StateMemory
from cogrsi_lib.harness.taxonomy import DIMENSION_FAMILY
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
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
    def _dimensions(self, items, routes, ledgers) -> list[str | None]:
        """SAGE's predicted dimension: from the routed variable when PRISM ran, else one
        strict call per item."""
        if self.router is not None:
            out = []
            for r in routes:
                fam = ASKED_VARIABLES[r.variable][0] if r.variable in ASKED_VARIABLES else None
                out.append(_FAMILY_DIMENSION.get(fam) if fam else None)
            return out
        preds = predict_dimension(items, self.backend, seed=self.config.seed, ledgers=ledgers,
                                  structured=self.config.structured)
        return [p.dimension for p in preds]

    def _categories(self, items, routes, ledgers) -> list[tuple[str, ...]]:
        """Retrieval's categories: from the routed variable; for an item without one (no
        router, or a route that failed) the model's prediction, so that a failed route does
        not switch retrieval off."""
        out: list[tuple[str, ...]] = [()] * len(items)
        ask: list[int] = []
        for i, r in enumerate(routes):
            if r is not None and r.variable in ASKED_VARIABLES:
                out[i] = categories_for_variable(r.variable)
            else:
                ask.append(i)
        if ask:
            preds = predict_categories([items[i] for i in ask], self.backend,
                                       seed=self.config.seed, structured=self.config.structured)
            for i, p in zip(ask, preds, strict=True):
                merge_ledger(ledgers[i], p.ledger)
                out[i] = tuple(p.categories)
        return out

    # ----------------------------------------------------------------- drafts
    def _draft(self, items, supports, skills) -> tuple[list[Request], list]:
        """One direct answer per item; with a skill, :data:`EXIT` is also an answer."""
        params = SamplingParams(
            n=1, temperature=0.0, max_tokens=self.config.answer_max_tokens, seed=self.config.seed
        )
        reqs = []
        for it, sup, sk in zip(items, supports, skills, strict=True):
            blocks = ([support_block(sk)] if sk is not None else []) + [b for b in sup if b]
            view = plain_view(it)
            if blocks:
                view += "\n\nSupport (never overrides the story):\n\n" + "\n\n".join(blocks)
            fmt = None
            if sk is not None:
                fmt = prompts.answer_format(it, prompts.THINK_NONE, params.max_tokens,
                                            also=(EXIT,), family=DRAFT_FAMILY)
            reqs.append(prompts.answer_request(
                it, view, params, think=prompts.THINK_NONE, structured=self.config.structured,
                fmt=fmt,
            ))
        return reqs, self.backend.generate(reqs)

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        items = list(items)
        recs = [new_record(self.name, it) for it in items]
        ledgers = [r.ledger for r in recs]
        traces: list[dict[str, Any]] = [{"modules": list(self.config.modules)} for _ in items]
        blocks: list[dict[str, str]] = [{} for _ in items]

        routes: list[Route | None] = [None] * len(items)
        if self.router is not None:
            routes = list(self.router.route(items))
        if "state" in self.config.modules:
            for i, it in enumerate(items):
                blocks[i]["state"], traces[i]["state"] = state_block(
                    it, self.config.state_witnesses)
        if self.selector is not None:
            dims = self._dimensions(items, routes, ledgers)
            for i, act in enumerate(self.selector.select_batch(items, dims)):
                blocks[i]["experience"] = act.text
                traces[i]["experience"] = act.to_dict()
        if self.retriever is not None:
            cats = self._categories(items, routes, ledgers)
            for i, ret in enumerate(self.retriever.retrieve_batch(items, cats)):
                blocks[i]["retrieval"] = ret.block
                traces[i]["retrieval"] = ret.to_dict()

        if self.config.control:
            self._controlled(items, recs, blocks, routes, traces)
        else:
            supports = [[b[m] for m in MODULES if m in b] for b in blocks]
            self._finalise(items, recs, supports, routes, traces)
        return recs

    # ---------------------------------------------------------------- control
    def _controlled(self, items, recs, blocks, routes, traces) -> None:
        """Gate each item onto a path, draft, validate, and redraft a flagged draft once:
        a staged item with the evidence it held back, any other under a repair block."""
        known = [tracked_state(it, self.config.state_witnesses) for it in items]
        decisions = []
        for i, tr in enumerate(known):
            evidence = {m: bool(blocks[i].get(m)) for m in self.config.modules if m != "skills"}
            if self.router is not None:
                evidence["skills"] = bool(routes[i] is not None and routes[i].routed)
            decisions.append(gate(None if tr is None else tr.chain, evidence, self.policy))

        def supports_of(i: int) -> list[str]:
            return [blocks[i][m] for m in MODULES if m in decisions[i].opened and blocks[i].get(m)]

        first = [supports_of(i) if d.path == "augment" else [] for i, d in enumerate(decisions)]
        first_routes = [r if d.path == "augment" and "skills" in d.opened else None
                        for r, d in zip(routes, decisions, strict=True)]
        self._finalise(items, recs, first, first_routes, traces)
        for i, (r, used) in enumerate(zip(routes, first_routes, strict=True)):
            if r is not None and used is None:  # routed, but the gate kept the skill out
                merge_ledger(recs[i].ledger, r.ledger)
                traces[i]["route"] = {**r.to_dict(), "used": False}
        checks = [self._check(recs[i], known[i], decisions[i]) for i in range(len(items))]
        redo = [i for i, c in enumerate(checks) if c.flags]
        extra: list[list[str]] = []
        for i in redo:
            k = known[i]
            assert k is not None  # only a tracked question is flagged
            value = k.view if k.chain else k.reality
            label = option_for(value, list(zip(items[i].labels, items[i].options, strict=True)))
            repair = [] if decisions[i].path == "staged" else [
                repair_block(k.chain, k.obj, k.attribute, checks[i], label)]
            extra.append(supports_of(i) + repair)
        again = [new_record(self.name, items[i]) for i in redo]
        again_traces: list[dict[str, Any]] = [{} for _ in redo]
        if redo:
            self._finalise([items[i] for i in redo], again, extra, [None] * len(redo),
                           again_traces)
        final = {i: rec for i, rec in zip(redo, again, strict=True)}
        for i, d in enumerate(decisions):
            ctl: dict[str, Any] = {**d.to_dict(), "first": checks[i].to_dict(),
                                   "redrafted": i in final}
            if i in final:
                rec = final[i]
                recs[i].samples, recs[i].answer = rec.samples, rec.answer
                recs[i].answer_text, recs[i].status = rec.answer_text, rec.status
                merge_ledger(recs[i].ledger, rec.ledger)
                ctl["final"] = self._check(recs[i], known[i], d).to_dict()
                ctl["redraft"] = "evidence" if d.path == "staged" else "repair"
            recs[i].extra = {**traces[i], "control": ctl}

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
        traces: list[dict[str, Any]] = [{"modules": [], "support_blocks": len(b)} for b in blocks]
        self._finalise(items, recs, [list(b) for b in blocks], [None] * len(items), traces)
        return recs

    def _finalise(self, items, recs, supports, routes, traces) -> None:
        """Draft, validate and reroute on self-exit; write answers and traces into ``recs``."""
        ledgers = [r.ledger for r in recs]
        lib = self.router.library if self.router is not None else None
        pending = list(range(len(items)))
        for attempt in range(self.config.max_reroutes + 2):
            skills = [lib[routes[i].skill_id] if lib is not None and routes[i] is not None
                      and routes[i].routed else None for i in pending]  # fmt: skip
            reqs, outs = self._draft([items[i] for i in pending], [supports[i] for i in pending],
                                     skills)
            exited: list[int] = []
            for i, sk, req, cs in zip(pending, skills, reqs, outs, strict=True):
                if sk is not None and is_self_exit(read_answer(items[i], req.reply,
                                                               cs[0].text).value):
                    ledgers[i].add("draft_exit", cs)
                    exited.append(i)
                    continue
                s, a = parse_samples(items[i], "harness", req, cs, ledgers[i], "draft")
                rec = recs[i]
                rec.samples = s
                rec.answer, rec.status = a[0], "ok" if a[0] is not None else "unparsed"
                rec.answer_text = items[i].option_text(a[0])
                traces[i]["draft_attempts"] = attempt + 1
            if not exited:
                break
            if attempt >= self.config.max_reroutes:  # exits left: answer without a skill
                for i in exited:
                    r = routes[i]
                    if r.skill_id is not None:  # the last skill exited too: keep it in the trace
                        r.exits.append(r.skill_id)
                    r.status, r.skill_id = "exhausted", None
                    r.reason = f"{len(r.exits)} self-exits"
            else:
                new = self.router.reroute([(items[i], routes[i]) for i in exited])
                for i, r in zip(exited, new, strict=True):
                    routes[i] = r
            pending = exited
        for i, r in enumerate(routes):
            if r is not None:
                merge_ledger(ledgers[i], r.ledger)
                traces[i]["route"] = r.to_dict()
            recs[i].perception = PerceptionRecord("none")
            recs[i].extra = traces[i]


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
