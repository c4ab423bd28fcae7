"""The PDDL-Mind pipeline and its diagnostic ladder (PDDL-Mind §3 "Diagnostic variants", §4).

Every variant makes exactly three LLM calls per example, whatever happens in between:

============== =========================== ======================== ============================
variant        call 1                      call 2                   call 3 (answer) sees
============== =========================== ======================== ============================
no_verification problem file (given domain) candidate actions       parsed s0 and the candidate
                                                                     actions, nothing executed
no_domain      the model's domain, then    actions in its domain    the verified trace, executed
               the problem file                                     in the model's domain
full           problem file (given domain) candidate actions        the verified trace
============== =========================== ======================== ============================

A reply that does not parse is recorded (part and parser message) and the later calls still
run with what there is (call 3 is then told there is no trace), so calls and tokens are
comparable across variants. For oracle examples the model's trace is compared with the gold
trace and each wrong answer is classified (:mod:`cogrsi_lib.pddl.diagnosis`). Calls replayed
from the completion cache count as calls and are also counted as cached
(:mod:`cogrsi_lib.llm.accounting`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import polars as pl
from pydantic import Field

from cogrsi_lib import bench
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend, BackendSpec
from cogrsi_lib.llm.families import family_example
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.parsing import normalise_free_text
from cogrsi_lib.llm.reply_format import (
    ReplyError,
    ReplyFormat,
    describe,
    enum_of,
    reasoned_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.pddl import prompts as P
from cogrsi_lib.pddl.baselines import BASELINES, parts, state_prompt, states_evidence
from cogrsi_lib.pddl.diagnosis import Focus, classify, compare_traces, relevant_rejections
from cogrsi_lib.pddl.domain import CompiledDomain, domain_text, predefined_domain
from cogrsi_lib.pddl.examples import Example
from cogrsi_lib.pddl.executor import Trace, execute
from cogrsi_lib.pddl.parse import (
    GroundAction,
    ParseFailure,
    extract_define,
    parse_actions_text,
    parse_domain_text,
    parse_problem_text,
)
from cogrsi_lib.pddl.problem import Task
from cogrsi_lib.pddl.render import actions_text, init_text, options_text, trace_text
from cogrsi_lib.reader.prompts import FREE_ANSWER_CHARS
from cogrsi_lib.records_schema import RecordSchema, calls_json, messages_of

T = TypeVar("T")
VARIANTS = ("no_verification", "no_domain", "full")
ROLES = ("problem", "actions", "answer")
#: every system the stage can run: Table 2's baselines, then the ladder's variants
SYSTEMS = (*BASELINES, *VARIANTS)


@dataclass(frozen=True)
class LadderConfig:
    """Sampling settings of the three calls and which variants to run; ``structured``: each
    call's declared reply format is enforced while decoding (:mod:`cogrsi_lib.pddl.prompts`)."""

    variants: tuple[str, ...] = VARIANTS  # and Table 2's baselines (:data:`SYSTEMS`)
    parse_max_tokens: int = 4096   # paper B.1: 4,096 for every call
    domain_max_tokens: int = 4096  # call 1 of no_domain writes a domain and a problem
    answer_max_tokens: int = 4096
    state_max_tokens: int = 512    # DWM's state descriptions (cogrsi_lib/pddl/baselines.py)
    temperature: float = 0.0
    seed: int = 0
    structured: bool = True

    def __post_init__(self) -> None:
        unknown = [v for v in self.variants if v not in SYSTEMS]
        if unknown:
            raise ValueError(f"unknown variant(s) {unknown}; expected some of {SYSTEMS}")


@dataclass
class _Run:
    """One example under one variant, filled in call by call."""

    example: Example
    ledger: CallLedger = field(default_factory=CallLedger)
    prompts: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    replies: dict[str, str] = field(default_factory=dict)
    domain: CompiledDomain | ParseFailure | None = None
    task: Task | ParseFailure | None = None
    actions: tuple[GroundAction, ...] | ParseFailure | None = None
    trace: Trace | None = None


def answer_format(ex: Example, max_tokens: int) -> ReplyFormat:
    """Call 3's reply: a bounded reasoning step, then an option label (or a short free-text
    answer for a benchmark item without options)."""
    if ex.options:
        answer = (enum_of([lab for lab, _ in ex.options]), Field())
    else:
        answer = (str, text_field(FREE_ANSWER_CHARS, 1, "the answer alone, in a word or a few"))
    model = reasoned_model("PDDLAnswer", max_tokens, "your step-by-step reasoning",
                           answer=answer)
    return ReplyFormat.json(P.ANSWER_FAMILY, model)


def _ask(run: _Run, role: str, prompt: str, fmt: ReplyFormat | None, max_tokens: int,
         cfg: LadderConfig) -> Flow[None]:
    """One call of a run (a step of its flow), recorded on the run."""
    params = SamplingParams(max_tokens=max_tokens, temperature=cfg.temperature, seed=cfg.seed)
    req = Request((Message("system", P.SYSTEM), Message("user", prompt)), params, fmt,
                  cfg.structured)
    [completions] = yield [req]
    run.ledger.add(role, completions)
    run.prompts[role] = messages_of(req.messages)
    run.replies[role] = completions[0].text


def _shown(reply: str, kind: str) -> str:
    """The model's domain/problem as later calls see it: its define form, else the reply."""
    return (extract_define(reply, kind) or reply).strip()


def problem_format(variant: str, domain: CompiledDomain, max_tokens: int = 768
                   ) -> ReplyFormat:
    if variant == "no_domain":
        return P.domain_problem_format()
    return P.problem_format(domain, max_tokens)


def actions_format(variant: str, run: _Run, domain: CompiledDomain, max_tokens: int = 768
                   ) -> ReplyFormat:
    """Actions of the domain the trace is executed in: the model's own in the no-domain
    ablation (a sequence of s-expressions when it did not parse), else the predefined one."""
    own = run.domain if variant == "no_domain" else domain
    if isinstance(own, CompiledDomain):
        return P.actions_format(own, max_tokens)
    most = P.lines_for(max_tokens, P.line_tokens("", _MAX_ARITY + 1)) - 1
    return ReplyFormat.regex(P.ACTIONS_FAMILY, rf"{_ATOM}(\n{_ATOM}){{0,{most}}}")


#: the most arguments of an action of a domain that did not parse (the predefined one's most: 6)
_MAX_ARITY = 8
_ATOM = rf"\({P.NAME}( {P.NAME}){{0,{_MAX_ARITY}}}\)"


def problem_prompt(variant: str, ex: Example, fmt: ReplyFormat | None = None) -> str:
    fmt = fmt or problem_format(variant, predefined_domain())
    if variant == "no_domain":
        return P.DOMAIN_PROBLEM.format(task=P.TASK_DOMAIN_PROBLEM, story=ex.story,
                                       reply=P.format_hint(fmt))
    return P.PROBLEM.format(task=P.TASK_PROBLEM, domain=domain_text(comments=False),
                            conventions=P.conventions(ex.source), story=ex.story,
                            reply=P.format_hint(fmt))


def actions_prompt(variant: str, run: _Run, fmt: ReplyFormat) -> str:
    reply = run.replies["problem"]
    dom = _shown(reply, "domain") if variant == "no_domain" else domain_text(comments=False)
    return P.ACTIONS.format(task=P.TASK_ACTIONS, domain=dom, problem=_shown(reply, "problem"),
                            conventions=P.conventions(run.example.source),
                            story=run.example.story, reply=P.format_hint(fmt))


def evidence_text(variant: str, run: _Run) -> str:
    """What call 3 is shown besides the story and the question (for Table 2's baselines:
    the story alone, or DWM's state descriptions)."""
    if variant == "cot":
        return P.EVIDENCE_NONE
    if variant == "dwm":
        return states_evidence([v for k, v in run.replies.items() if k.startswith("state_")])
    if variant == "no_verification":
        init = init_text(run.task) if isinstance(run.task, Task) else _shown(
            run.replies["problem"], "problem")
        acts = (actions_text(run.actions) if isinstance(run.actions, tuple)
                else run.replies["actions"].strip() or "(none)")
        return P.EVIDENCE_UNVERIFIED.format(init=init, actions=acts)
    if run.trace is None:
        return P.EVIDENCE_MISSING.format(why=_why_no_trace(run))
    return P.EVIDENCE_VERIFIED.format(trace=trace_text(run.trace))


def _why_no_trace(run: _Run) -> str:
    for part in (run.domain, run.task, run.actions):
        if isinstance(part, ParseFailure):
            return f"the {part.part} did not parse ({part.message})"
    return "nothing was parsed"


def answer_prompt(variant: str, run: _Run, fmt: ReplyFormat) -> str:
    ex = run.example
    return P.ANSWER.format(task=P.TASK_ANSWER, story=ex.story,
                           evidence=evidence_text(variant, run), question=ex.question,
                           options=options_text(ex.options), reply=describe(fmt))


def _strict(part: str, fmt: ReplyFormat, reply: str, parsed: T) -> T | ParseFailure:
    """What the PDDL parser made of a reply, unless the reply breaks its declared format: a
    parser failure keeps the parser's own message, a reply the parser reads but that breaks
    the format fails with the format's."""
    if isinstance(parsed, ParseFailure):
        return parsed
    try:
        fmt.parse(reply)
    except ReplyError as err:
        return ParseFailure(part, err.reason)
    return parsed


def _parse_calls_1_2(variant: str, run: _Run, domain: CompiledDomain,
                     fmt: ReplyFormat) -> None:
    reply = run.replies["problem"]
    if variant == "no_domain":
        run.domain = _strict("domain", fmt, reply, parse_domain_text(reply))
        if isinstance(run.domain, CompiledDomain):
            run.task = parse_problem_text(reply, run.domain)
    else:
        run.domain = domain
        run.task = _strict("problem", fmt, reply, parse_problem_text(reply, domain))


def run_ladder(
    backend: Backend, examples: Sequence[Example], cfg: LadderConfig | None = None
) -> pl.DataFrame:
    """Run every variant on every example; one record per (variant, example), in
    :data:`RECORDS` (``system`` is the variant). Each is a flow (:mod:`cogrsi_lib.llm.flow`):
    every example's next call goes out as soon as the one it reads is back."""
    cfg = cfg or LadderConfig()
    domain = predefined_domain()
    gold_traces = _gold_traces(examples, domain)
    flows = []
    for variant in cfg.variants:
        if variant in BASELINES:
            flows += [_baseline(variant, ex, cfg, backend.model) for ex in examples]
            continue
        first = cfg.domain_max_tokens if variant == "no_domain" else cfg.parse_max_tokens
        fmt1 = problem_format(variant, domain, first)
        flows += [_ladder(variant, ex, domain, fmt1, first, gold_traces.get(ex.story_id), cfg,
                          backend.model) for ex in examples]
    return RECORDS.frame(run_flows(backend, flows))


def _ladder(variant: str, ex: Example, domain: CompiledDomain, fmt1: ReplyFormat, first: int,
            gold: Trace | None, cfg: LadderConfig, model: str) -> Flow[dict[str, Any]]:
    """One example under one variant: its three calls, each after the one it reads."""
    r = _Run(ex)
    yield from _ask(r, "problem", problem_prompt(variant, ex, fmt1), fmt1, first, cfg)
    _parse_calls_1_2(variant, r, domain, fmt1)
    fmt2 = actions_format(variant, r, domain, cfg.parse_max_tokens)
    yield from _ask(r, "actions", actions_prompt(variant, r, fmt2), fmt2, cfg.parse_max_tokens,
                    cfg)
    r.actions = _strict("actions", fmt2, r.replies["actions"],
                        parse_actions_text(r.replies["actions"]))
    if isinstance(r.task, Task) and isinstance(r.actions, tuple):
        r.trace = execute(r.task, r.actions)
    fmt3 = answer_format(ex, cfg.answer_max_tokens)
    yield from _ask(r, "answer", answer_prompt(variant, r, fmt3), fmt3, cfg.answer_max_tokens,
                    cfg)
    return {"model": model, "structured": cfg.structured, **_record(variant, r, gold, fmt3)}


def _baseline(variant: str, ex: Example, cfg: LadderConfig, model: str
              ) -> Flow[dict[str, Any]]:
    """One example under a Table 2 baseline (:mod:`cogrsi_lib.pddl.baselines`): DWM's
    state calls, each after the one before, then the answering call."""
    r = _Run(ex)
    if variant == "dwm":
        pieces, states = parts(ex.story), []
        words = max(20, cfg.state_max_tokens * 2 // 3)
        for k in range(len(pieces)):
            role = f"state_{k + 1}"
            yield from _ask(r, role, state_prompt("\n".join(pieces[: k + 1]), states, words),
                            None, cfg.state_max_tokens, cfg)
            states.append(r.replies[role])
    fmt = answer_format(ex, cfg.answer_max_tokens)
    yield from _ask(r, "answer", answer_prompt(variant, r, fmt), fmt, cfg.answer_max_tokens,
                    cfg)
    return {"model": model, "structured": cfg.structured,
            **_record(variant, r, None, fmt, baseline=True)}


def _gold_traces(examples: Sequence[Example], domain: CompiledDomain) -> dict[str, Trace]:
    out: dict[str, Trace] = {}
    for ex in examples:
        if ex.gold_pddl is not None and ex.story_id not in out:
            out[ex.story_id] = execute(ex.gold_pddl.task(domain), ex.gold_pddl.actions)
    return out


def score(ex: Example, reply: str, fmt: ReplyFormat | None = None
          ) -> tuple[str, str | None, float]:
    """(answer status, parsed answer, score in [0, 1]); benchmark items by their own rule
    (a free-text answer is judged as the model wrote it)."""
    fmt = fmt or answer_format(ex, 256)
    try:
        given = str(fmt.parse(reply).answer).strip()
    except ReplyError as err:
        return "unparsed: " + err.reason, None, 0.0
    if not given:
        return "unparsed: empty answer", None, 0.0
    if ex.item is not None:
        judgement = bench.get(ex.item.benchmark).judge(ex.item, given)
        return "ok", given, float(judgement.value)
    value = given if ex.options else normalise_free_text(given)
    return "ok", value, float(value == ex.gold)


def _status(part: object, absent: str = "skipped") -> tuple[str, str]:
    if part is None:
        return absent, ""
    if isinstance(part, ParseFailure):
        return "failed", part.message
    return "ok", ""


def focus_of(ex: Example) -> Focus | None:
    """The object and chain agents of an oracle question, as PDDL names (None otherwise)."""
    g, q = ex.gold_pddl, ex.oracle_question
    if g is None or q is None:
        return None
    return Focus(g.obj, frozenset(g.agent[a] for a in q.chain))


def _record(variant: str, run: _Run, gold: Trace | None, fmt: ReplyFormat,
            baseline: bool = False) -> dict[str, Any]:
    """A run's row of :data:`RECORDS`; a ``baseline``'s has no PDDL parts (``n/a``) and no
    trace."""
    ex = run.example
    status, answer, value = score(ex, run.replies["answer"], fmt)
    answer_ok = status == "ok"
    correct = value >= 1.0
    d_status, d_msg = ("predefined", "") if variant != "no_domain" else _status(run.domain)
    p_status, p_msg = _status(run.task)
    a_status, a_msg = _status(run.actions)
    parse_failed = "failed" in (d_status, p_status, a_status) or run.trace is None
    if baseline:
        (d_status, d_msg), (p_status, p_msg), (a_status, a_msg) = [("n/a", "")] * 3
        parse_failed = False
    trace_correct: bool | None = None
    trace_diff = ""
    if gold is not None:
        if run.trace is None:
            trace_correct, trace_diff = False, "no trace"
        else:
            trace_correct, trace_diff = compare_traces(run.trace, gold, focus_of(ex))
    trace = run.trace
    rejected = [f"{r.action}: {r.reason}" for r in trace.rejected] if trace else []
    relevant = (relevant_rejections(trace.rejected, ex.question + " " + " ".join(
        t for _, t in ex.options)) if trace else [])
    issues = list(run.task.issues) if isinstance(run.task, Task) else []
    total = run.ledger.total()
    parse_status, _, parse_reason = status.partition(": ")
    return {
        "run": 0,
        "system": variant,
        "source": ex.source,
        "item_id": ex.id,
        "story_id": ex.story_id,
        "prompt": calls_json(run.prompts),
        "reply": calls_json({k: [v] for k, v in run.replies.items()}),
        "parse_status": parse_status,
        "answer": answer,
        "gold": ex.gold,
        "correct": correct,
        "n_options": len(ex.options) or None,
        "calls": total.calls,
        "cached_calls": total.cached_calls,
        "prompt_tokens": total.prompt_tokens,
        "completion_tokens": total.completion_tokens,
        "unit": str(ex.item.group_id or ex.story_id) if ex.item is not None else ex.story_id,
        "category": ex.category,
        "false_belief": ex.false_belief,
        "story": ex.story,
        "question": ex.question,
        "options_json": json.dumps([text for _, text in ex.options]) if ex.options else None,
        "parse_reason": parse_reason,
        "score": value,
        "domain_status": d_status,
        "domain_message": d_msg,
        "problem_status": p_status,
        "problem_message": p_msg,
        "problem_issues_json": json.dumps(issues),
        "actions_status": a_status,
        "actions_message": a_msg,
        "n_candidates": len(run.actions) if isinstance(run.actions, tuple) else 0,
        "n_verified": len(trace.steps) if trace else 0,
        "n_rejected": len(trace.rejected) if trace else 0,
        "rejected_json": json.dumps(rejected),
        "n_relevant_rejected": len(relevant),
        "trace_correct": trace_correct,
        "trace_diff": trace_diff,
        "failure": classify(correct, answer_ok, parse_failed, trace_correct, len(relevant)),
        "latency_s": total.latency_s,
        "usage_json": json.dumps(run.ledger.to_dict(), sort_keys=True),
    }


#: PDDL-Mind's records (``records.parquet``): the core (``system`` is the ladder variant;
#: ``prompt``/``reply`` hold the ``problem``, ``actions`` and ``answer`` calls; the story,
#: question and options as the reader's records have them;
#: ``parse_status`` is the answer's, ``ok`` or ``unparsed``, the reason in ``parse_reason``)
#: and each step's outcome: parsed parts, verified and rejected actions, the trace against
#: the gold trace, the failure class
RECORDS = RecordSchema("pddl_mind", {
    "structured": pl.Boolean, "unit": pl.Utf8, "category": pl.Utf8,
    "false_belief": pl.Boolean, "story": pl.Utf8, "question": pl.Utf8,
    "options_json": pl.Utf8, "parse_reason": pl.Utf8,
    "score": pl.Float64, "domain_status": pl.Utf8, "domain_message": pl.Utf8,
    "problem_status": pl.Utf8, "problem_message": pl.Utf8, "problem_issues_json": pl.Utf8,
    "actions_status": pl.Utf8, "actions_message": pl.Utf8, "n_candidates": pl.Int64,
    "n_verified": pl.Int64, "n_rejected": pl.Int64, "rejected_json": pl.Utf8,
    "n_relevant_rejected": pl.Int64, "trace_correct": pl.Boolean, "trace_diff": pl.Utf8,
    "failure": pl.Utf8, "latency_s": pl.Float64, "usage_json": pl.Utf8,
})


def make_backend(
    model: BackendSpec | Mapping[str, Any] | str = "scripted",
    examples: Sequence[Example] = (),
    script: Mapping[str, Any] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> Backend:
    """The stage's ``model`` (a :data:`~cogrsi_lib.llm.spec.ModelSpec`); its scripted
    stand-in is :mod:`cogrsi_lib.pddl.scripted`'s (no model) on ``examples``, with the
    ``script`` settings (``p_malformed``, ``p_drop``, ``p_bad_domain``, ``seed``)."""
    from cogrsi_lib.llm.fake import ScriptedBackend
    from cogrsi_lib.llm.spec import parse_model
    from cogrsi_lib.pddl.scripted import ScriptedPDDLMind

    knobs = dict(script or {})

    def mind() -> Backend:
        return ScriptedBackend(ScriptedPDDLMind(examples, **knobs), model="pddl-mind-script")

    return parse_model(model).build(base_dir, {"default": mind})


# -- the families' example requests (cogrsi_lib/llm/families.py) ------------------------------


def _example_run() -> _Run:
    """The first oracle example, its gold problem and actions as the replies of calls 1-2."""
    from cogrsi_lib.pddl.examples import oracle_examples

    (ex,) = oracle_examples(1, seed=0, questions_per_story=1)
    run = _Run(ex)
    run.replies["problem"] = ex.gold_pddl.problem_text if ex.gold_pddl else ""
    run.replies["actions"] = ex.gold_pddl.actions_text() if ex.gold_pddl else ""
    return run


def _example(prompt: str, fmt: ReplyFormat, cap: int) -> Request:
    return Request((Message("system", P.SYSTEM), Message("user", prompt)),
                   SamplingParams(max_tokens=cap), fmt)


@family_example(P.PROBLEM_FAMILY)
def _problem_example() -> Request:
    fmt = P.problem_format(predefined_domain(), 480)
    return _example(problem_prompt("full", _example_run().example, fmt), fmt, 480)


@family_example(P.DOMAIN_PROBLEM_FAMILY)
def _domain_problem_example() -> Request:
    fmt = P.domain_problem_format()
    return _example(problem_prompt("no_domain", _example_run().example, fmt), fmt, 640)


@family_example(P.ACTIONS_FAMILY)
def _actions_example() -> Request:
    fmt = P.actions_format(predefined_domain(), 160)
    return _example(actions_prompt("full", _example_run(), fmt), fmt, 160)


@family_example(P.ANSWER_FAMILY)
def _answer_example() -> Request:
    run = _example_run()
    fmt = answer_format(run.example, 48)
    return _example(answer_prompt("no_verification", run, fmt), fmt, 48)
