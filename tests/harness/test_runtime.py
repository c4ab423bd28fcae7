"""The composed harness: gates, composition, self-exit reroute, ablations, stage tables."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest

from cogrsi_lib.embedding import ScriptedEmbedder
from cogrsi_lib.harness import stage as hs
from cogrsi_lib.harness.experience_store import ExperienceStore
from cogrsi_lib.harness.runtime import (
    ABLATIONS,
    HarnessConfig,
    HarnessSystem,
    build_ablations,
    state_block,
)
from cogrsi_lib.llm.fake import ScriptedBackend, json_reply, prompt_text
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.reader.items import ReaderItem

EMB = ScriptedEmbedder(lambda t: [1.0, float(len(t) % 7), 0.5])


def _items(n: int = 3) -> list[ReaderItem]:
    return oracle_dev_items(2, 5)[:n]


def _is_answer_prompt(job) -> bool:
    return job.request.reply.family in ("answer.direct", "harness.draft")


class Model:
    """Routes every item to the first offered skill; answers with the gold or "exit"."""

    def __init__(self, exit_first: int = 0, variable: str = "first_order_belief") -> None:
        self.exit_first, self.variable = exit_first, variable
        self.exits = 0
        self.answer_prompts: list[str] = []

    def __call__(self, job) -> str:
        t = prompt_text(job)
        family = job.request.reply.family
        if _is_answer_prompt(job):
            self.answer_prompts.append(t)
            if "[Skill " in t and self.exits < self.exit_first:
                self.exits += 1
                return json_reply(job, {"answer": "EXIT"})
            return json_reply(job, {"answer": "A"})
        if family == "harness.route.skill":
            ids = re.findall(r"^- ([\w.\-]+)", t, re.M)
            return json_reply(job, {"skill": ids[0]})
        if family == "harness.route.variable":
            return json_reply(job, {"variable": self.variable})
        return "no idea"


def test_base_makes_one_greedy_call_per_item():
    b = ScriptedBackend(Model())
    recs = HarnessSystem(b, HarnessConfig()).answer_batch(_items())
    assert [r.ledger.total().calls for r in recs] == [1, 1, 1]
    assert all(j.request.params.temperature == 0.0 for j in b.jobs)
    assert all(r.answer == "A" and r.status == "ok" for r in recs)
    assert "Support (never overrides the story)" not in b.jobs[0].request.messages[-1].content


def test_skills_route_then_draft_with_the_support_block():
    model = Model()
    recs = HarnessSystem(ScriptedBackend(model), HarnessConfig(modules=("skills",))).answer_batch(
        _items(2)
    )
    for r in recs:
        roles = r.ledger.to_dict()["by_role"]
        assert set(roles) == {"route_variable", "route_skill", "draft"}
        assert r.extra["route"]["status"] == "ok"
    assert all("[Skill " in p for p in model.answer_prompts)


def test_self_exit_reroutes_to_another_skill_and_counts_the_extra_draft():
    model = Model(exit_first=1)
    item = _items(1)
    rec = HarnessSystem(
        ScriptedBackend(model), HarnessConfig(modules=("skills",), max_reroutes=1)
    ).answer_batch(item)[0]
    route = rec.extra["route"]
    assert len(route["attempts"]) == 2 and route["exits"] == [route["attempts"][0]]
    assert route["skill_id"] == route["attempts"][1] != route["attempts"][0]
    assert rec.extra["draft_attempts"] == 2 and rec.answer == "A"
    assert rec.ledger.to_dict()["by_role"]["draft_exit"]["calls"] == 1


def test_exits_beyond_the_reroute_budget_answer_without_a_skill():
    model = Model(exit_first=10)
    rec = HarnessSystem(
        ScriptedBackend(model), HarnessConfig(modules=("skills",), max_reroutes=1)
    ).answer_batch(_items(1))[0]
    route = rec.extra["route"]
    assert route["status"] == "exhausted" and route["skill_id"] is None
    # every skill that was tried self-exited, the last one included
    assert len(route["attempts"]) == 2 and route["exits"] == route["attempts"]
    assert route["reason"] == "2 self-exits"
    assert rec.answer == "A"
    assert "[Skill " not in model.answer_prompts[-1]


def test_unparsed_route_answers_without_a_skill():
    model = Model(variable="no-such-variable")
    rec = HarnessSystem(ScriptedBackend(model), HarnessConfig(modules=("skills",))).answer_batch(
        _items(1)
    )[0]
    assert rec.extra["route"]["status"] == "unparsed"
    assert "[Skill " not in model.answer_prompts[0]


def test_state_block_reports_the_oracle_answer_for_first_order_questions():
    items = [it for it in oracle_dev_items(6, 9) if it.meta["depth"] == 1][:10]
    assert items
    for it in items:
        block, trace = state_block(it, "presence")
        assert trace["decision"] == "inject"
        # presence witnesses never give a wrong answer on the oracle's worlds, only UNKNOWN
        assert trace["answer"] in (None, it.gold)
        assert trace["object"] in block


def test_state_block_bypasses_non_belief_questions():
    it = ReaderItem("x", "Anna smiled.", "Why did Anna smile?", ("happy", "sad"), "A")
    block, trace = state_block(it)
    assert block == "" and trace["decision"] == "not_a_belief_question"


def test_memory_config_injects_state_and_a_cascade_level():
    model = Model()
    rec = HarnessSystem(
        ScriptedBackend(model), HarnessConfig(modules=("state", "experience")), embedder=EMB
    ).answer_batch(_items(1))[0]
    assert rec.extra["state"]["decision"] == "inject"
    assert rec.extra["experience"]["level"] == "scaffold"  # empty store, no dimension
    assert "Tracked state of the" in model.answer_prompts[0]


def test_experience_and_retrieval_need_an_embedder():
    with pytest.raises(ValueError, match="embedder"):
        HarnessSystem(ScriptedBackend("x"), HarnessConfig(modules=("retrieval",)))


def test_unknown_module_and_ablation_are_errors():
    with pytest.raises(ValueError, match="unknown harness module"):
        HarnessConfig(modules=("telepathy",))
    with pytest.raises(ValueError, match="unknown ablation"):
        build_ablations(ScriptedBackend("x"), ["base", "magic"], embedder=EMB)


def test_ablations_share_items_and_the_stage_tables_add_up():
    b = ScriptedBackend(Model())
    systems = build_ablations(b, list(ABLATIONS)[:5], embedder=EMB, store=ExperienceStore())
    items = {"oracle": _items(3)}
    frame = hs.run(systems, items)
    assert frame.height == 15
    acc = hs.accuracy_table(frame)
    base = acc.filter((acc["system"] == "harness:base") & (acc["source"] == "all"))
    expected = np.mean([r == "A" for r in frame.filter(frame["system"] == "harness:base")["gold"]])
    assert base["accuracy"][0] == pytest.approx(expected)
    deltas = hs.delta_table(acc)
    assert deltas.filter(deltas["system"] == "harness:base")["delta_pts"].abs().max() == 0
    routing = hs.routing_table(frame, "harness:skills")
    all_row = routing.filter(routing["source"] == "all")
    assert all_row["items"][0] == 3 and all_row["family_hit"][0] == 1.0  # belief family
    decisions = hs.module_decisions(frame)
    per_system = decisions.group_by("system", "module").agg(n=pl.col("items").sum())
    assert set(per_system["n"].to_list()) == {3}
    cov = hs.experience_coverage(frame, "harness:memory")
    assert cov["n"] == 3 and cov["exact_coverage"] == 0.0


def test_the_question_type_table_compares_each_system_with_base_per_type():
    # Hi-ToM orders 0 and 3: Starling repairs one order-3 question and breaks nothing
    rows = [("hi-tom", "hi-tom/order-0", "harness:base", True),
            ("hi-tom", "hi-tom/order-0", "harness:state", True),
            ("hi-tom", "hi-tom/order-3", "harness:base", False),
            ("hi-tom", "hi-tom/order-3", "harness:base", False),
            ("hi-tom", "hi-tom/order-3", "harness:state", True),
            ("hi-tom", "hi-tom/order-3", "harness:state", None),  # unparsed: wrong
            ("tombench", "tombench/faux-pas", "harness:skills", True)]
    frame = pl.DataFrame(rows, schema=["source", "tag", "system", "correct"], orient="row")
    t = hs.question_type_table(frame)
    assert t.columns == ["source", "tag", "system", "questions", "accuracy", "delta_pts"]
    got = {(r["tag"], r["system"]): (r["questions"], r["accuracy"], r["delta_pts"])
           for r in t.iter_rows(named=True)}
    assert got[("hi-tom/order-3", "harness:state")] == (2, 0.5, 50.0)
    assert got[("hi-tom/order-0", "harness:state")] == (1, 1.0, 0.0)
    assert got[("hi-tom/order-3", "harness:base")][2] == 0.0
    assert got[("tombench/faux-pas", "harness:skills")][2] is None  # no base on that type


def test_answer_with_support_puts_the_blocks_in_the_prompt():
    model = Model()
    sys = HarnessSystem(ScriptedBackend(model), HarnessConfig())
    recs = sys.answer_with_support(_items(2), [["GUIDE-ONE"], []])
    assert "GUIDE-ONE" in model.answer_prompts[0] and "GUIDE-ONE" not in model.answer_prompts[1]
    assert json.dumps(recs[0].extra)  # the trace is serialisable
    with pytest.raises(ValueError, match="one list"):
        sys.answer_with_support(_items(2), [[]])


def test_development_items_are_disjoint_from_the_evaluated_sample():
    items, _ = hs.evaluation_items(["tombench"], 3, 4, 41)
    evaluated = [it.item_id for its in items.values() for it in its]
    dev = hs.development_items(400, 2, 43, exclude=evaluated)
    assert not set(evaluated) & {d.item_id for d in dev}
    assert len([d for d in dev if d.item_id.startswith("tombench")]) == 400
    depths = {it.meta["depth"] for it in items["oracle"]}
    assert len(depths) > 1  # spread over depths


def test_the_evaluated_items_are_a_seeded_sample_of_the_whole_benchmark():
    from cogrsi_lib import bench

    whole = bench.load("hi-tom")
    a, _ = hs.evaluation_items(["hi-tom", "tombench"], 40, 0, 41, sample_seed=0)
    again, _ = hs.evaluation_items(["hi-tom", "tombench"], 40, 0, 41, sample_seed=0)
    other, _ = hs.evaluation_items(["hi-tom", "tombench"], 40, 0, 41, sample_seed=1)
    ids = [it.item_id for it in a["hi-tom"]]
    assert ids == [it.item_id for it in again["hi-tom"]] and len(ids) == 40
    assert ids != [it.item_id for it in other["hi-tom"]]
    order = [str(it.id) for it in whole]
    assert ids == sorted(ids, key=order.index)  # in file order
    assert ids != order[:40]  # not the head of the file
    # the head is one order and one task; a sample of 40 reaches all five orders and many tasks
    types = {str(x.question_type) for x in whole if str(x.id) in set(ids)}
    assert len(types) == 5
    tasks = {x.question_type for x in bench.load("tombench")
             if str(x.id) in {it.item_id for it in a["tombench"]}}
    assert len(tasks) >= 5


class CategoriesModel(Model):
    """Model, plus a category reply naming the first category of the taxonomy."""

    def __call__(self, job) -> str:
        if job.request.reply.family == "harness.categories":
            from cogrsi_lib.harness.retrieval import CATEGORIES

            return json_reply(job, {"categories": [sorted(CATEGORIES)[0]]})
        return super().__call__(job)


def test_a_failed_route_does_not_switch_retrieval_off():
    model = CategoriesModel(variable="no-such-variable")
    rec = HarnessSystem(ScriptedBackend(model), HarnessConfig(modules=("skills", "retrieval")),
                        embedder=EMB).answer_batch(_items(1))[0]
    assert rec.extra["route"]["status"] == "unparsed"
    assert rec.extra["retrieval"]["categories"]  # from the model's own prediction
    assert "rag_categories" in rec.ledger.to_dict()["by_role"]


def test_calibration_credits_notes_and_updates_the_policy_on_validation_items_only():
    b = ScriptedBackend(CategoriesModel())
    dev = oracle_dev_items(3, 77)[:6]
    cal = hs.calibrate(b, {}, dev, EMB, ExperienceStore(), test_ids=["not-a-dev-id"])
    assert cal.log["validation_items"] == 6
    assert set(cal.policy_credit["decision"]) >= {"all"}
    assert cal.policy_credit.filter(pl.col("decision") == "all")["traces"].item() == 6
    assert cal.retriever is not None and cal.policy is not None
    with pytest.raises(ValueError, match="evaluation items"):
        hs.calibrate(b, {}, dev, EMB, ExperienceStore(), test_ids=[dev[0].item_id])


def test_sage_systems_are_figure_26s_modes_and_the_table10_comparison_reads_the_deltas():
    from cogrsi_lib.harness.selector import ABLATION_MODES

    systems = hs.sage_systems(ScriptedBackend(Model()), {}, ExperienceStore(), EMB)
    assert [s.name for s in systems] == ["sage:none", *(f"sage:{k}" for k in ABLATION_MODES)]
    assert [s.selector.mode for s in systems[1:]] == list(ABLATION_MODES.values())
    deltas = pl.DataFrame({"source": ["hi-tom", "oracle"], "system": ["harness:full"] * 2,
                           "questions": [4, 4], "accuracy": [0.5, 0.25],
                           "delta_pts": [25.0, -25.0]})
    cmp = hs.paper_comparison(deltas, "m")
    hitom = cmp.filter(pl.col("source") == "hi-tom").row(0, named=True)
    assert hitom["paper_models"] == 5 and hitom["paper_delta_min"] == pytest.approx(-0.75)
    assert hitom["paper_delta_max"] == pytest.approx(6.0)
    assert cmp.filter(pl.col("source") == "oracle")["paper_models"].item() is None


def test_figure_26_is_drawn_in_the_report_s_order_with_its_values_beside_ours():
    systems = [s.name for s in hs.sage_systems(ScriptedBackend(Model()), {}, ExperienceStore(),
                                               EMB)]
    assert set(systems) == set(hs.PAPER_FIGURE26)  # every configuration has its reported value
    chance = pl.DataFrame({"system": systems[::-1], "items": [4] * 5,
                           "accuracy": [0.25, 0.5, 0.0, 0.75, 1.0], "chance": [0.25] * 5,
                           "low": [0.0] * 5, "high": [1.0] * 5, "model": ["m"] * 5})
    spec = hs.sage_chart(chance).to_dict()
    layers = spec["layer"]
    ours = spec["datasets"][layers[0]["data"]["name"]]
    reported = spec["datasets"][layers[3]["data"]["name"]]
    order = layers[0]["encoding"]["y"]["sort"]
    assert order == [f"{s} (n=4)" for s in hs.PAPER_FIGURE26]  # Base first, full SAGE last
    assert {r["label"]: r["accuracy"] for r in reported} == {
        f"{s} (n=4)": pytest.approx(v / 100) for s, v in hs.PAPER_FIGURE26.items()}
    assert {r["label"]: r["accuracy"] for r in ours} == {
        f"{s} (n=4)": a for s, a in zip(chance["system"], chance["accuracy"], strict=True)}
    with pytest.raises(ValueError, match="harness:base"):
        hs.sage_chart(chance.with_columns(system=pl.lit("harness:base")))
    empty = hs.sage_chart(chance.clear()).to_dict()
    assert "no multiple-choice item" in json.dumps(empty)
    two = hs.sage_chart(pl.concat([chance, chance.with_columns(model=pl.lit("m2"))])).to_dict()
    sources = {r["source"] for r in two["datasets"][two["layer"][0]["data"]["name"]]}
    assert sources == {"this run (m)", "this run (m2)"}  # each model beside the report


@pytest.mark.parametrize("control", [False, True])
def test_every_item_s_calls_are_a_flow_with_the_records_of_the_item_alone(control):
    """The harness's calls as flows (cogrsi_lib/llm/flow.py): the gates' calls of all items
    in one stream, the drafts (self-exits and reroutes included) in a second; each item's
    record is the one it gets answered on its own."""
    modules = ("skills", "state", "experience", "retrieval")
    items = _items(4)

    def system():  # every draft with a skill exits: draft, reroute, draft, no skill, draft
        return HarnessSystem(ScriptedBackend(Model(exit_first=10**6)), HarnessConfig(
            modules=modules, max_reroutes=1, control=control), embedder=EMB)

    together = system()
    recs = together.answer_batch(items)
    exits = [r.ledger.to_dict()["by_role"].get("draft_exit", {}).get("calls", 0) for r in recs]
    assert sum(exits) >= 2
    # one wave per step of the deepest item's chain of calls, whatever the items
    longest = 2 + max(2 * e + 1 for e in exits) + (1 if control else 0)
    assert len(together.backend.batches) <= longest
    for it, rec in zip(items, recs, strict=True):
        assert rec.to_row() == system().answer_batch([it])[0].to_row()


def _sage_rows(source: str, system: str, correct: list[bool | None]) -> list[dict]:
    return [{"source": source, "system": system, "correct": c,
             "parse_status": "ok" if c is not None else "unparsed", "calls": 1,
             "total_tokens": 10} for c in correct]


def test_table11_sets_the_frozen_store_against_base_in_domain_and_held_out():
    frame = pl.DataFrame(
        _sage_rows("tombench", "sage:none", [True, False, False, False])
        + _sage_rows("tombench", "sage:full", [True, True, False, None])
        + _sage_rows("tombench", "sage:curation", [True, True, True, True])
        + _sage_rows("hi-tom", "sage:none", [True, True])
        + _sage_rows("hi-tom", "sage:full", [True, False]))
    t = hs.sage_transfer(frame)
    rows = {r["source"]: r for r in t.iter_rows(named=True)}
    assert list(rows) == ["tombench", "hi-tom"]  # in domain first, as the report
    assert rows["tombench"]["role"] == "in domain" and rows["hi-tom"]["role"] == "held out"
    assert rows["tombench"]["questions"] == 4
    assert rows["tombench"]["delta_pts"] == pytest.approx(25.0)  # 1/4 -> 2/4, unparsed wrong
    assert rows["hi-tom"]["delta_pts"] == pytest.approx(-50.0)
    assert rows["hi-tom"]["paper_delta_pts"] == pytest.approx(84.72 - 82.64)
    # Figure 26 draws ToMBench's rows only
    assert set(hs.figure26_frame(frame)["source"]) == {"tombench"}
    assert set(hs.figure26_frame(frame.filter(pl.col("source") == "hi-tom"))["source"]) == {
        "hi-tom"}
