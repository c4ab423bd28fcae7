"""One example request of every prompt family, built by the modules that own the prompts.

Each family declares its reply format beside its prompt (DESIGN.md, Principles); this module
only calls those declarations on one small story, so that tests, the structured-output
benchmark and the README can show every family side by side: its kind of format and a request
a backend must constrain. Nothing here defines a prompt or a format.
"""

from __future__ import annotations

from collections.abc import Callable

from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem

STORY = ("1 Sally entered the kitchen.\n2 Anne entered the kitchen.\n"
         "3 The ball is in the basket.\n4 Sally exited the kitchen.\n"
         "5 Anne moved the ball to the box.\n6 Sally entered the kitchen.")
ITEM = ReaderItem("example", STORY, "Where will Sally look for the ball?",
                  options=("basket", "box"), gold="A", story_id="example",
                  meta={"chain": ["Sally"], "object": "ball"})
NESTED = ReaderItem("nested", STORY, "Where does Anne think that Sally thinks the ball is?",
                    options=("basket", "box"), gold="basket", story_id="example",
                    meta={"chain": ["Anne", "Sally"], "object": "ball"})
NUMERIC = ReaderItem("number", "Each player picks a number from 0 to 100.",
                     "Which number should you pick to be two thirds of the average?")


def _reader() -> dict[str, Request]:
    from cogrsi_lib.baselines.systems import perspective_request
    from cogrsi_lib.reader import prompts
    from cogrsi_lib.reader.perception import perception_request
    from cogrsi_lib.reader.views import plain_view

    p = SamplingParams(max_tokens=96, temperature=0.0)
    return {
        prompts.REASONED: prompts.answer_request(ITEM, plain_view(ITEM), p),
        prompts.DIRECT: prompts.answer_request(ITEM, plain_view(ITEM), p,
                                               think=prompts.THINK_NONE),
        "reader.perception": perception_request(ITEM, max_tokens=256),
        prompts.ARBITRATION: prompts.arbitration_request(ITEM, plain_view(ITEM), ("A", "B"),
                                                         "", p),
        "simtom.perspective": perspective_request(ITEM, "Sally",
                                                  SamplingParams(max_tokens=160)),
    }


def _loops() -> dict[str, Request]:
    from cogrsi_lib.loops.builder import Builder, Failure, FailureGroup
    from cogrsi_lib.loops.gepa_arm import REFLECTION_FAMILY, reflection_format
    from cogrsi_lib.loops.library import PrincipleText, RuleLibrary

    group = FailureGroup("false-belief", (Failure(ITEM, "box", "basket"),), 1)
    builder = Builder(None, max_tokens=192)  # type: ignore[arg-type] - requests only
    gepa_prompt = ("I provided an assistant with the following instructions to perform a "
                   "task for me:\n```\n\n```\nWrite a new instruction for the assistant. "
                   "Provide the new instructions within ``` blocks.")
    return {
        "loops.builder": builder.request(RuleLibrary(), group),
        "loops.builder.principle": builder.request(PrincipleText(""), group),
        REFLECTION_FAMILY: Request((Message("user", gepa_prompt),),
                                   SamplingParams(max_tokens=128), reflection_format(128)),
    }


def _harness() -> dict[str, Request]:
    from cogrsi_lib.harness import dimension, reflector, retrieval, router, runtime
    from cogrsi_lib.harness.experience_store import Entry
    from cogrsi_lib.harness.skills import load_library
    from cogrsi_lib.reader import prompts
    from cogrsi_lib.reader.records import new_record
    from cogrsi_lib.reader.views import plain_view

    lib = load_library()
    cands = lib.candidates("first_order_belief")
    p = SamplingParams(max_tokens=32)
    entry = Entry("m1", "Belief", "Keep the last state a character saw.",
                  "a character was away during a change", "they saw the change")
    draft = prompts.answer_format(ITEM, prompts.THINK_NONE, 32, also=(router.EXIT,),
                                  family=runtime.DRAFT_FAMILY)
    reflection = reflector.reflector_format(["m1"])
    return {
        router.VARIABLE_FAMILY: Request(tuple(router.variable_messages(ITEM)), p,
                                        router.variable_format()),
        router.SKILL_FAMILY: Request(
            tuple(router.skill_messages(ITEM, "first_order_belief", cands)), p,
            router.skill_format([s.id for s in cands])),
        runtime.DRAFT_FAMILY: prompts.answer_request(ITEM, plain_view(ITEM), p,
                                                     think=prompts.THINK_NONE, fmt=draft),
        dimension.DIMENSION_FAMILY: Request(dimension.dimension_messages(ITEM),
                                            SamplingParams(max_tokens=16),
                                            dimension.dimension_format()),
        retrieval.CATEGORIES_FAMILY: Request(tuple(retrieval.category_messages(ITEM)),
                                             SamplingParams(max_tokens=48),
                                             retrieval.categories_format()),
        reflector.REFLECTOR_FAMILY: Request(
            reflector.reflector_messages(ITEM, new_record("x", ITEM), [entry], reflection),
            SamplingParams(max_tokens=400), reflection),
    }


def _scorecard() -> dict[str, Request]:
    from cogrsi_lib.scorecard import perspective, store_system
    from cogrsi_lib.scorecard.direct import DirectSystem

    p = SamplingParams(max_tokens=160)
    chain = NESTED.meta["chain"]
    direct = DirectSystem(None)  # type: ignore[arg-type] - requests only
    return {
        "scorecard.bare": direct.request(NESTED),
        "scorecard.number": direct.request(NUMERIC),
        perspective.FAMILY: Request(
            (Message("user", perspective.perspective_prompt(NESTED, chain, True, 160)),), p,
            perspective.perspective_format(NESTED, chain, True, 160)),
        store_system.FAMILY: Request(
            (Message("user", store_system.store_prompt(NESTED, chain)),),
            SamplingParams(max_tokens=224), store_system.store_format(NESTED, chain)),
    }


def _pddl() -> dict[str, Request]:
    from cogrsi_lib.pddl import ladder
    from cogrsi_lib.pddl import prompts as P
    from cogrsi_lib.pddl.domain import predefined_domain
    from cogrsi_lib.pddl.examples import oracle_examples

    (ex,) = oracle_examples(1, seed=0, questions_per_story=1)
    domain = predefined_domain()
    run = ladder._Run(ex)
    run.replies["problem"] = ex.gold_pddl.problem_text if ex.gold_pddl else ""
    run.replies["actions"] = ex.gold_pddl.actions_text() if ex.gold_pddl else ""
    system = Message("system", P.SYSTEM)

    def req(prompt: str, fmt, cap: int) -> Request:
        return Request((system, Message("user", prompt)), SamplingParams(max_tokens=cap), fmt)

    fmt1, fmt0 = P.problem_format(domain, 480), P.domain_problem_format()
    fmt2 = P.actions_format(domain, 160)
    fmt3 = ladder.answer_format(ex, 48)
    return {
        P.PROBLEM_FAMILY: req(ladder.problem_prompt("full", ex, fmt1), fmt1, 480),
        P.DOMAIN_PROBLEM_FAMILY: req(ladder.problem_prompt("no_domain", ex, fmt0), fmt0, 640),
        P.ACTIONS_FAMILY: req(ladder.actions_prompt("full", run, fmt2), fmt2, 160),
        P.ANSWER_FAMILY: req(ladder.answer_prompt("no_verification", run, fmt3), fmt3, 48),
    }


def _audit() -> dict[str, Request]:
    from cogrsi_lib.audit.handwritten import RULES
    from cogrsi_lib.audit.translate import FAMILY, Translator

    return {FAMILY: Translator("A", None, max_tokens=384).request(RULES[0].text)}  # type: ignore[arg-type]


BUILDERS: tuple[Callable[[], dict[str, Request]], ...] = (
    _reader, _loops, _harness, _scorecard, _pddl, _audit)


def example_requests() -> dict[str, Request]:
    """``{family: request}`` for every prompt family that declares a reply format."""
    out: dict[str, Request] = {}
    for build in BUILDERS:
        for family, request in build().items():
            assert request.reply is not None and request.reply.family == family, family
            out[family] = request
    return out
