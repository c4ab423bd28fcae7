"""PRISM's router with scripted replies: routing, unparsed replies, self-exit and reroute,
call counting, the support block and the eq. 6 metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.harness.router import (
    SKILL_SYSTEM,
    VARIABLE_SYSTEM,
    Router,
    RoutingRow,
    is_self_exit,
    parse_skill_choice,
    parse_variable,
    routing_metrics,
    support_block,
)
from cogrsi_lib.harness.skills import DEFAULT_PATH, load_library
from cogrsi_lib.harness.taxonomy import Annotation
from cogrsi_lib.llm.fake import ScriptedBackend
from cogrsi_lib.llm.types import Job
from cogrsi_lib.reader.items import ReaderItem

LIB = load_library()
STORY = "Anne puts the ball in the basket. Anne leaves. Bob moves the ball to the box."


def item(i: int, question: str = "Where does Anne think the ball is?") -> ReaderItem:
    return ReaderItem(f"q{i}", STORY, f"[{i}] {question}", options=("basket", "box"))


def step(job: Job) -> str:
    system = job.request.messages[0].content
    return {VARIABLE_SYSTEM: "variable", SKILL_SYSTEM: "skill"}[system]


def user(job: Job) -> str:
    return job.request.messages[-1].content


def item_no(job: Job) -> int:
    return int(re.search(r"Question: \[(\d+)\]", user(job)).group(1))


def shown(job: Job) -> list[str]:
    return re.findall(r"^- (\S+) \(target: ", user(job), re.M)


def js(text: str) -> str:
    """Shorthand ``Variable: x`` / ``Skill: y`` as the JSON reply; other text unchanged."""
    m = re.fullmatch(r"(Variable|Skill): (\S+)", text)
    return json.dumps({m.group(1).lower(): m.group(2)}) if m else text


def scripted(variables: dict[int, str], pick=lambda i, ids: ids[0]) -> ScriptedBackend:
    """Variable replies per item number; the skill reply is ``pick(item_no, shown_ids)``."""

    def respond(job: Job) -> str:
        i = item_no(job)
        if step(job) == "variable":
            return js(variables[i])
        return js(f"Skill: {pick(i, shown(job))}")

    return ScriptedBackend(respond)


def test_right_variable_gives_its_candidates_in_one_batch_per_step():
    backend = scripted(
        {0: "Variable: first_order_belief", 1: "Variable: norm", 2: "Variable: emotion"}
    )
    routes = Router(backend, LIB).route([item(0), item(1), item(2)])
    assert backend.batches == [3, 3]
    skill_jobs = [j for j in backend.jobs if step(j) == "skill"]
    for j in skill_jobs:
        var = {0: "first_order_belief", 1: "norm", 2: "emotion"}[item_no(j)]
        assert shown(j) == [s.id for s in LIB.candidates(var)]
    assert [r.variable for r in routes] == ["first_order_belief", "norm", "emotion"]
    assert [r.skill_id for r in routes] == [
        LIB.candidates(v)[0].id for v in ("first_order_belief", "norm", "emotion")
    ]
    for r in routes:
        assert r.status == "ok" and r.variable_status == "ok" and r.routed
        assert r.attempts == [r.skill_id] and r.exits == []
        assert [s for s, _ in r.raw] == ["variable", "skill"]


def test_variable_prompt_reads_question_and_options_not_story():
    backend = scripted({0: "Variable: reality"})
    Router(backend, LIB).route([item(0)])
    var_job, skill_job = backend.jobs
    assert "Bob moves the ball" not in user(var_job)
    assert "basket" in user(var_job) and "Where does Anne think" in user(var_job)
    assert '{"variable": "reality" | ' in user(var_job)
    assert '{"skill": "' + LIB.candidates("reality")[0].id in user(skill_job)
    assert var_job.request.reply.family == "harness.route.variable"
    assert skill_job.request.reply.schema()["properties"]["skill"]["enum"] == [
        s.id for s in LIB.candidates("reality")]
    for s in LIB.candidates("reality"):
        assert s.positive_trigger in user(skill_job) and s.negative_trigger in user(skill_job)


def test_routing_requests_are_greedy_short_and_seeded():
    backend = scripted({0: "Variable: desire"})
    Router(backend, LIB, max_tokens=16, seed=5).route([item(0)])
    for j in backend.jobs:
        p = j.request.params
        assert (p.n, p.temperature, p.max_tokens, p.seed) == (1, 0.0, 16, 5)


def test_unparsed_variable_gets_no_skill_and_keeps_raw_text():
    backend = scripted({0: "It is about belief, I think.", 1: "Variable: desire"})
    r0, r1 = Router(backend, LIB).route([item(0), item(1)])
    assert (r0.variable, r0.variable_status, r0.status, r0.skill_id) == (
        None, "unparsed", "unparsed", None
    )  # fmt: skip
    assert r0.raw == [("variable", "It is about belief, I think.")]
    assert r0.ledger.total().calls == 1 and "route_skill" not in r0.ledger.roles
    assert r1.status == "ok"
    assert backend.batches == [2, 1]


@pytest.mark.parametrize(
    "reply",
    [
        '{"variable": "telepathy"}',
        '{"variable": "Desire"}',
        '{"variable": "desire", "confidence": 1}',
        '{"variable": "desire", "variable": "norm"}',
        "Variable: desire",
        "desire",
    ],
)
def test_variable_replies_that_do_not_parse(reply):
    assert parse_variable(reply) is None


@pytest.mark.parametrize(
    ("reply", "name"),
    [
        ('{"variable":"desire"}', "desire"),
        (' {"variable": "higher_order_belief"}\n', "higher_order_belief"),
        ('```json\n{"variable": "norm"}\n```', "norm"),
    ],
)
def test_variable_replies_that_parse(reply, name):
    assert parse_variable(reply) == name


def test_unparsed_skill_reply():
    backend = ScriptedBackend(
        lambda j: js("Variable: desire") if step(j) == "variable" else "The first one, probably."
    )
    (r,) = Router(backend, LIB).route([item(0)])
    assert r.variable == "desire" and r.variable_status == "ok"
    assert r.status == "unparsed" and r.skill_id is None and r.attempts == []
    assert r.raw[-1] == ("skill", "The first one, probably.")
    assert r.ledger.roles["route_skill"].calls == 1


@pytest.mark.parametrize("bad", ["belief.telepathy", "macro.faux-pas"])
def test_unknown_or_not_offered_skill_id_is_unparsed(bad):
    # macro.faux-pas exists but is not a candidate for first_order_belief
    backend = scripted({0: "Variable: first_order_belief"}, pick=lambda i, ids: bad)
    (r,) = Router(backend, LIB).route([item(0)])
    assert r.status == "unparsed" and r.skill_id is None
    assert r.raw[-1] == ("skill", js(f"Skill: {bad}"))


def test_skill_choice_parsing():
    ids = ["belief.first-order", "macro.false-belief"]
    assert parse_skill_choice('{"skill": "macro.false-belief"}', ids) == "macro.false-belief"
    assert parse_skill_choice('{"skill": "Belief.First-Order"}', ids) is None
    assert parse_skill_choice('{"skill": "macro.faux-pas"}', ids) is None
    assert parse_skill_choice("Skill: macro.false-belief", ids) is None


def _small_library(tmp_path: Path, ids: list[str]):
    entries = [e for e in yaml.safe_load(DEFAULT_PATH.read_text())["skills"] if e["id"] in ids]
    p = tmp_path / "small.yaml"
    p.write_text(yaml.safe_dump({"skills": entries}))
    return load_library(p)


def test_variable_without_candidates(tmp_path):
    lib = _small_library(tmp_path, ["belief.first-order", "belief.second-order"])
    backend = scripted({0: "Variable: desire", 1: "Variable: higher_order_belief"})
    r0, r1 = Router(backend, lib).route([item(0), item(1)])
    assert r0.status == "no_candidate" and r0.skill_id is None and r0.variable == "desire"
    assert r0.ledger.total().calls == 1
    assert r1.skill_id == "belief.second-order"
    assert backend.batches == [2, 1]


def test_self_exit_reroute_excludes_the_exited_skill():
    backend = scripted({0: "Variable: first_order_belief", 1: "Variable: emotion"})
    router = Router(backend, LIB)
    items = [item(0), item(1)]
    first = router.route(items)
    second = router.reroute([(items[0], first[0])])
    (r,) = second
    assert r.exits == [first[0].skill_id]
    assert r.skill_id not in (None, first[0].skill_id)
    assert r.attempts == [first[0].skill_id, r.skill_id]
    last_prompt = backend.jobs[-1]
    assert first[0].skill_id not in shown(last_prompt)
    assert shown(last_prompt) == [
        s.id for s in LIB.candidates("first_order_belief", exclude=[first[0].skill_id])
    ]
    # the input route is left as it was
    assert first[0].exits == [] and first[0].ledger.total().calls == 2
    assert r.ledger.total().calls == 3 and r.ledger.roles["route_skill"].calls == 2


def test_rerouting_never_picks_an_exited_skill_again():
    chosen: list[str] = []

    def pick(i, ids):
        # insist on the first skill ever chosen once it is gone from the list
        if chosen and chosen[0] not in ids:
            return chosen[0]
        chosen.append(ids[0])
        return ids[0]

    backend = scripted({0: "Variable: knowledge"}, pick=pick)
    router = Router(backend, LIB)
    (r,) = router.route([item(0)])
    (r2,) = router.reroute([(item(0), r)])
    assert r2.status == "unparsed" and r2.skill_id is None
    assert r2.raw[-1] == ("skill", js(f"Skill: {r.skill_id}"))


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_reroute_stops_after_max_reroutes(k):
    backend = scripted({0: "Variable: first_order_belief"})
    router = Router(backend, LIB, max_reroutes=k)
    it = item(0)
    (r,) = router.route([it])
    rounds = 0
    while r.status == "ok":
        (r,) = router.reroute([(it, r)])
        rounds += 1
    assert r.status == "exhausted" and r.skill_id is None
    assert rounds == k + 1
    assert len(r.exits) == k + 1 and len(set(r.attempts)) == k + 1
    assert r.ledger.roles["route_skill"].calls == k + 1
    assert r.ledger.roles["route_variable"].calls == 1
    with pytest.raises(ValueError, match="no chosen skill"):
        router.reroute([(it, r)])


def test_reroute_exhausts_when_no_candidate_is_left(tmp_path):
    lib = _small_library(tmp_path, ["belief.first-order", "macro.false-belief"])
    backend = scripted({0: "Variable: first_order_belief"})
    router = Router(backend, lib, max_reroutes=5)
    it = item(0)
    (r,) = router.route([it])
    (r,) = router.reroute([(it, r)])
    assert r.status == "ok"
    calls = backend.calls
    (r,) = router.reroute([(it, r)])
    assert r.status == "exhausted" and "no candidate" in r.reason
    assert backend.calls == calls  # nothing left to ask about


def test_reroute_checks_its_input():
    backend = scripted({0: "Variable: desire"})
    router = Router(backend, LIB)
    (r,) = router.route([item(0)])
    with pytest.raises(ValueError, match="q0"):
        router.reroute([(item(1), r)])


def test_calls_are_counted_per_item():
    backend = scripted({0: "Variable: desire", 1: "nonsense", 2: "Variable: norm"})
    routes = Router(backend, LIB).route([item(0), item(1), item(2)])
    assert [r.ledger.total().calls for r in routes] == [2, 1, 2]
    assert sum(r.ledger.total().calls for r in routes) == backend.calls
    tokens = sum(r.ledger.total().prompt_tokens for r in routes)
    assert tokens == sum(len(" ".join(m.content for m in j.request.messages).split())
                         for j in backend.jobs)  # fmt: skip
    assert routes[0].to_dict()["calls"]["by_role"]["route_skill"]["calls"] == 1


def test_empty_batch_makes_no_calls():
    backend = scripted({})
    assert Router(backend, LIB).route([]) == []
    assert Router(backend, LIB).reroute([]) == []
    assert backend.calls == 0


def test_support_block_carries_the_skill_unit():
    s = LIB.lookup("macro.faux-pas")
    block = support_block(s)
    for part in (s.id, s.target_variable, s.positive_trigger, s.negative_trigger,
                 s.failure_check, s.self_exit.rstrip(".")):  # fmt: skip
        assert part in block
    for n, wf in enumerate(s.workflow, 1):
        assert f"{n}. {wf}" in block
    assert "give EXIT as your answer" in block


@pytest.mark.parametrize("answer", ["EXIT", "exit"])
def test_self_exit_answers(answer):
    assert is_self_exit(answer)


@pytest.mark.parametrize("answer", [None, "", "A", "EXITS", "exit exit"])
def test_not_self_exit_answers(answer):
    assert not is_self_exit(answer)


# ----------------------------------------------------------------------------------- metrics

B1 = Annotation("belief", "Belief", "tombench/location-false-beliefs")
FP = Annotation("norms", "Non-Literal Communication", "tombench/faux-pas")
O2 = Annotation("belief", "Belief", "oracle/location/depth-2")
TABLE = [
    RoutingRow(B1, "macro.false-belief", False, True),  # family+strict hit, repaired
    RoutingRow(B1, "belief.second-order", True, True),  # family hit only, kept
    RoutingRow(B1, "perception.reality", True, False),  # both miss, damaged
    RoutingRow(FP, "norms.speaker-knowledge", False, False),  # both hit, not repaired
    RoutingRow(FP, None, False, None),  # unrouted: a miss for both
    RoutingRow(O2, "belief.recursive-chain", None, True),  # both hit, base unknown
    RoutingRow(None, "emotion.appraisal", False, True),  # unannotated, repaired
    RoutingRow(None, None, True, None),  # unannotated, unrouted
]


def test_metrics_on_a_hand_computed_table():
    m = routing_metrics(TABLE, LIB)
    assert m["family_hit"] == {"value": 4 / 6, "k": 4, "n": 6}
    assert m["strict_hit"] == {"value": 3 / 6, "k": 3, "n": 6}
    assert m["repair"] == {"value": 2 / 3, "k": 2, "n": 3}
    assert m["damage"] == {"value": 1 / 2, "k": 1, "n": 2}
    assert (m["n_items"], m["n_annotated"], m["n_unannotated"]) == (8, 6, 2)
    assert (m["n_routed"], m["n_unrouted"], m["n_unrouted_annotated"]) == (6, 2, 1)
    assert m["unrouted_share"] == 2 / 8 and m["n_routed_base_unknown"] == 1


def test_metrics_accept_dicts_and_check_them():
    dicts = [
        {"annotation": r.annotation, "skill_id": r.skill_id, "base_correct": r.base_correct,
         "skill_correct": r.skill_correct}
        for r in TABLE
    ]  # fmt: skip
    assert routing_metrics(dicts, LIB) == routing_metrics(TABLE, LIB)
    with pytest.raises(ValueError, match="skill_id"):
        routing_metrics([{"annotation": None}], LIB)
    with pytest.raises(ValueError, match="belief.telepathy"):
        routing_metrics([RoutingRow(B1, "belief.telepathy", True, True)], LIB)


def test_metrics_of_nothing_are_none():
    m = routing_metrics([], LIB)
    for key in ("family_hit", "strict_hit", "repair", "damage"):
        assert m[key] == {"value": None, "k": 0, "n": 0}
    assert m["unrouted_share"] is None


_ANNOTATIONS = [
    None, B1, FP, O2,
    Annotation("emotion", "Emotion", "tombench/hidden-emotions"),
    Annotation("perception", "Knowledge", "hi-tom/order-0"),
]  # fmt: skip
_rows = st.lists(
    st.builds(
        RoutingRow,
        annotation=st.sampled_from(_ANNOTATIONS),
        skill_id=st.one_of(st.none(), st.sampled_from(LIB.ids)),
        base_correct=st.sampled_from([True, False, None]),
        skill_correct=st.sampled_from([True, False, None]),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_rows)
def test_metrics_are_shares_and_repair_damage_partition_routed_items(rows):
    m = routing_metrics(rows, LIB)
    for key in ("family_hit", "strict_hit", "repair", "damage"):
        rate = m[key]
        assert 0 <= rate["k"] <= rate["n"]
        assert rate["value"] is None if rate["n"] == 0 else 0.0 <= rate["value"] <= 1.0
    known = [r for r in rows if r.skill_id is not None and r.base_correct is not None]
    assert m["repair"]["n"] + m["damage"]["n"] == len(known)
    assert m["repair"]["n"] == sum(not r.base_correct for r in known)
    assert m["family_hit"]["n"] == m["strict_hit"]["n"] == m["n_annotated"]
    # acceptable skills stay inside the tag's family, so a strict hit is a family hit
    assert m["strict_hit"]["k"] <= m["family_hit"]["k"]
    assert m["n_unrouted"] + m["n_routed"] == m["n_items"] == len(rows)


def test_a_missing_skill_answer_counts_as_wrong():
    rows = [
        RoutingRow(B1, "macro.false-belief", True, None),  # damaged: no usable answer
        RoutingRow(B1, "macro.false-belief", False, None),  # not repaired
    ]
    m = routing_metrics(rows, LIB)
    assert m["damage"] == {"value": 1.0, "k": 1, "n": 1}
    assert m["repair"] == {"value": 0.0, "k": 0, "n": 1}
