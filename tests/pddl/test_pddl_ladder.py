"""The three-call pipeline and its diagnostic ladder on a scripted backend, with real PDDL
(PDDL-Mind §3 "Diagnostic variants", §4)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cogrsi_lib import bench
from cogrsi_lib.llm import CachedBackend, ScriptedBackend
from cogrsi_lib.llm.fake import json_reply
from cogrsi_lib.llm.types import Job
from cogrsi_lib.oracle.world import Event, Question, World
from cogrsi_lib.pddl import prompts as P
from cogrsi_lib.pddl.examples import Example, benchmark_examples, oracle_examples
from cogrsi_lib.pddl.ladder import VARIANTS, LadderConfig, make_backend, run_ladder
from cogrsi_lib.pddl.oracle_map import gold_pddl
from cogrsi_lib.pddl.scripted import ScriptedPDDLMind

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"
PERFECT = {"p_malformed": 0.0, "p_drop": 0.0, "p_bad_domain": 0.0}


@pytest.fixture(scope="module")
def examples() -> list[Example]:
    return oracle_examples(8, seed=3, questions_per_story=2)


def _task(job: Job) -> str:
    return job.request.messages[-1].content.splitlines()[0]


def test_exactly_three_calls_per_example_and_variant(examples) -> None:
    backend = make_backend("scripted", examples)
    records = run_ladder(backend, examples)
    assert records.height == len(examples) * len(VARIANTS)
    assert records["calls"].to_list() == [3] * records.height
    assert backend.calls == 3 * records.height
    for rec in records.iter_rows(named=True):
        roles = json.loads(rec["usage_json"])["by_role"]
        assert sorted(roles) == ["actions", "answer", "problem"]
        assert all(r["calls"] == 1 for r in roles.values())
        assert rec["prompt_tokens"] == sum(r["prompt_tokens"] for r in roles.values())
        # every call's messages and reply are kept, by call
        prompt, reply = json.loads(rec["prompt"]), json.loads(rec["reply"])
        assert sorted(prompt) == sorted(reply) == ["actions", "answer", "problem"]
        assert [m["role"] for m in prompt["answer"]] == ["system", "user"]
        assert prompt["answer"][1]["content"].splitlines()[0] == P.TASK_ANSWER
        assert all(len(texts) == 1 for texts in reply.values())
    # each record carries its story, question and lettered options, as the reader's do
    by_id = {ex.id: ex for ex in examples}
    for rec in records.iter_rows(named=True):
        ex = by_id[rec["item_id"]]
        assert rec["story"] == ex.story and rec["question"] == ex.question and ex.story
        assert json.loads(rec["options_json"]) == [text for _, text in ex.options]
        assert [label for label, _ in ex.options][:2] == ["A", "B"]
    tasks = [_task(j) for j in backend.jobs]
    n = len(examples)
    assert tasks.count(P.TASK_ANSWER) == 3 * n
    assert tasks.count(P.TASK_ACTIONS) == 3 * n
    assert tasks.count(P.TASK_DOMAIN_PROBLEM) == n and tasks.count(P.TASK_PROBLEM) == 2 * n


def test_what_each_variant_shows_the_answering_call(examples) -> None:
    ex = examples[:1]
    seen: dict[str, str] = {}

    def responder(job: Job) -> str:
        text = job.request.messages[-1].content
        if _task(job) == P.TASK_ANSWER:
            seen[str(len(seen))] = text
        return script(job)

    script = ScriptedPDDLMind(ex, **PERFECT)
    for variant in VARIANTS:
        seen.clear()
        run_ladder(ScriptedBackend(responder), ex, LadderConfig(variants=(variant,)))
        prompt = seen["0"]
        assert ex[0].question in prompt and ex[0].story in prompt
        if variant == "no_verification":
            assert "Parsed actions (not executed, not checked)" in prompt
            assert "Verified state trace" not in prompt and "Final state:" not in prompt
        else:
            assert "Verified state trace" in prompt and "Final state:" in prompt


def test_the_predefined_domain_is_in_the_parsing_prompts_except_for_no_domain(examples) -> None:
    backend = make_backend("scripted", examples[:1])
    run_ladder(backend, examples[:1])
    for job in backend.jobs:
        text = job.request.messages[-1].content
        if _task(job) == P.TASK_PROBLEM:
            assert "(define (domain pddl-mind)" in text and P.conventions("oracle") in text
        if _task(job) == P.TASK_ACTIONS:
            assert "while it is open (opened c)" in text
        if _task(job) == P.TASK_DOMAIN_PROBLEM:
            assert "(define (domain" not in text


def test_a_perfect_parser_gives_correct_traces_and_reasoning_errors_only(examples) -> None:
    backend = make_backend("scripted", examples, script=PERFECT)
    rec = run_ladder(backend, examples, LadderConfig(variants=("full", "no_domain")))
    assert rec["problem_status"].unique().to_list() == ["ok"]
    assert rec["n_rejected"].sum() == 0
    assert rec["trace_correct"].all()
    assert set(rec.filter(~pl.col("correct"))["failure"].to_list()) <= {"reasoning"}
    assert rec.filter(pl.col("correct"))["failure"].unique().to_list() == ["none"]


def test_a_sight_only_answerer_fails_a_whispered_belief_as_a_reasoning_error() -> None:
    world = World(agents=("Anne", "Sally"), containers=("basket", "box", "tray"),
                  object="marble", location="basket", present=frozenset({"Anne", "Sally"}),
                  events=(Event("whisper", "Anne", listener="Sally", location="tray"),))
    q = Question("location", ("Sally",))
    ex = Example(id="w", source="oracle", story_id="w", story="Anne whispered to Sally.",
                 question="Where does Sally think the marble is?",
                 options=(("A", "basket"), ("B", "box"), ("C", "tray")), gold="C",
                 category="location/first-order", false_belief=True,
                 gold_pddl=gold_pddl(world), oracle_question=q)
    rec = run_ladder(make_backend("scripted", [ex], script=PERFECT), [ex],
                     LadderConfig(variants=("full",)))
    row = rec.row(0, named=True)
    assert row["answer"] == "A" and not row["correct"]  # it read (seen sally marble basket)
    assert row["trace_correct"] is True and row["failure"] == "reasoning"


def test_parse_failures_are_recorded_never_raised() -> None:
    ex = oracle_examples(2, seed=1, questions_per_story=1)
    replies = {
        P.TASK_PROBLEM: "(define (problem x) (:domain pddl-mind) (:objects a - agent",
        P.TASK_DOMAIN_PROBLEM: "My domain: (define (domain d) (:types",
        P.TASK_ACTIONS: "First Anne leaves, then (move anne",
        P.TASK_ANSWER: "I am not sure.",
    }
    backend = ScriptedBackend(lambda job: replies[_task(job)])
    rec = run_ladder(backend, ex)
    assert rec.height == 3 * len(ex) and rec["calls"].to_list() == [3] * rec.height
    full = rec.filter(pl.col("system") == "full").row(0, named=True)
    assert full["problem_status"] == "failed" and "Unexpected" in full["problem_message"]
    assert full["actions_status"] == "failed" and full["actions_message"]
    assert full["parse_status"] == "unparsed" and full["parse_reason"]
    assert full["failure"] == "answer format"
    assert json.loads(full["reply"])["answer"] == ["I am not sure."]
    assert full["trace_correct"] is False and full["trace_diff"] == "no trace"
    nodom = rec.filter(pl.col("system") == "no_domain").row(0, named=True)
    assert nodom["domain_status"] == "failed" and nodom["problem_status"] == "skipped"
    answer_prompts = [j.request.messages[-1].content for j in backend.jobs
                      if _task(j) == P.TASK_ANSWER]
    assert any("No state trace: the problem did not parse" in p for p in answer_prompts)
    assert any("No state trace: the domain did not parse" in p for p in answer_prompts)


def test_dropped_actions_make_parsing_state_errors_with_rejections(examples) -> None:
    script = {"p_malformed": 0.0, "p_drop": 1.0, "p_bad_domain": 0.0}
    rec = run_ladder(make_backend("scripted", examples, script=script), examples,
                     LadderConfig(variants=("full",)))
    with_moves = rec.filter(pl.col("n_rejected") > 0)
    assert with_moves.height > 0
    reasons = [r for cell in with_moves["rejected_json"] for r in json.loads(cell)]
    assert any("precondition (holding" in r for r in reasons)
    assert not with_moves["trace_correct"].any()
    wrong = with_moves.filter(~pl.col("correct"))
    assert set(wrong["failure"].to_list()) <= {"parsing/state"}


def test_a_cached_rerun_counts_its_calls_as_cached(tmp_path, examples) -> None:
    ex = examples[:2]
    first = run_ladder(CachedBackend(make_backend("scripted", ex), tmp_path), ex)
    again = run_ladder(CachedBackend(make_backend("scripted", ex), tmp_path), ex)
    assert again["cached_calls"].to_list() == [3] * again.height
    assert again["calls"].to_list() == [3] * again.height
    drop = ["cached_calls", "usage_json", "latency_s"]
    assert again.drop(drop).equals(first.drop(drop))
    # full and no_verification share calls 1 and 2: the first run already reuses them
    assert first["cached_calls"].sum() > 0


def test_benchmark_items_are_scored_by_their_own_rule() -> None:
    roots = {n: str(FIXTURES / n) for n in ("fantom", "mmtom-qa", "muma-tom")}
    samples = benchmark_examples(list(roots), 3, roots=roots)
    assert [s.available for s in samples] == [True, True, True]
    exs = [e for s in samples for e in s.examples]
    by_id = {e.id: e for e in exs}

    def gold_reply(job: Job) -> str:
        text = job.request.messages[-1].content
        if _task(job) != P.TASK_ANSWER:
            return "no"
        mc = P.OPTIONS_HEADER in text  # an item and its multiple-choice twin share the text
        ex = next(e for e in exs if e.question in text and e.story in text
                  and bool(e.options) == mc)
        return json_reply(job, {"reasoning": "", "answer": ex.gold})

    rec = run_ladder(ScriptedBackend(gold_reply), exs, LadderConfig(variants=("full",)))
    assert rec.height == len(exs)
    for row in rec.iter_rows(named=True):
        ex = by_id[row["item_id"]]
        assert row["source"] == ex.source and row["category"] == ex.item.question_type
        assert row["problem_status"] == "failed"
        if ex.options:
            assert row["correct"], row
        assert row["trace_correct"] is None
        assert row["failure"] in ("none", "parsing/state")


def test_missing_benchmarks_are_reported_not_loaded(tmp_path) -> None:
    got = benchmark_examples(["fantom"], 5, roots={"fantom": str(tmp_path)})
    assert not got[0].available and got[0].examples == ()
    assert "fantom_v1.json" in got[0].note


def test_unknown_variants_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        LadderConfig(variants=("full", "no_parse"))


def test_each_source_gets_its_own_conventions() -> None:
    oracle, fantom, other = (P.conventions(s) for s in ("oracle", "fantom", "tomi"))
    assert "common knowledge" in oracle and "`outside`" in oracle
    assert "common knowledge" not in fantom and "`conversation`" in fantom
    assert "common knowledge" not in other and "only where the story says" in other
    for c in (oracle, fantom, other):
        assert P.COMMON_CONVENTIONS in c



def _items(counts: dict[str, int]) -> list:
    from cogrsi_lib.bench.schema import Item

    out = []
    for qtype, n in counts.items():
        for i in range(n):
            out.append(Item(benchmark="mmtom-qa", id=f"{qtype}-{i}", story_id=f"s-{qtype}-{i}",
                            context="c", question="q", question_type=qtype, gold="a",
                            options=(("a", "x"), ("b", "y"))))
    return out


def test_stratified_sampling_takes_n_per_question_type_at_random() -> None:
    from cogrsi_lib.pddl.examples import stratified

    items = _items({"1.1": 5, "1.2": 2, "2.1": 10})
    got = stratified(items, 3, seed=0)
    counts = {t: sum(it.question_type == t for it in got) for t in ("1.1", "1.2", "2.1")}
    assert counts == {"1.1": 3, "1.2": 2, "2.1": 3}
    assert [items.index(it) for it in got] == sorted(items.index(it) for it in got)
    assert stratified(items, 3, seed=0) == got
    draws = {tuple(it.id for it in stratified(items, 3, seed=s)) for s in range(6)}
    assert len(draws) > 1  # random, not the first n in file order


def test_fantom_is_restricted_and_sampled_by_whole_sets() -> None:
    samples = benchmark_examples(["fantom"], 1, roots={"fantom": str(FIXTURES / "fantom")})
    exs = samples[0].examples
    assert exs and all(e.category.startswith(("tom:answerability", "tom:info_accessibility"))
                       for e in exs)
    everything = bench.load("fantom", FIXTURES / "fantom")
    for unit in {e.item.group_id for e in exs}:
        want = {it.id for it in everything if it.group_id == unit
                and it.question_type.startswith(("tom:answerability", "tom:info_accessibility"))}
        assert want == {e.item.id for e in exs if e.item.group_id == unit}
    assert "per question type" in samples[0].note


def test_the_all_metric_needs_every_question_of_a_unit() -> None:
    from cogrsi_lib.pddl.report import all_table

    rec = pl.DataFrame({"model": ["m"] * 5, "source": ["fantom"] * 5, "system": ["full"] * 5,
                        "unit": ["s1", "s1", "s2", "s2", "s3"],
                        "correct": [True, True, True, False, True],
                        "score": [1.0, 1.0, 1.0, 0.0, 1.0]})
    row = all_table(rec).row(0, named=True)
    assert row["accuracy"] == 0.8 and row["units"] == 3 and row["all"] == 2 / 3


def test_the_variants_run_as_one_stream_with_each_variant_s_own_records(examples) -> None:
    """Every example's next call goes out as soon as the one it reads is back (one stream
    for all variants: three batches, not three per variant), and each variant's records
    are the ones it gives run alone."""
    some = examples[:3]
    backend = make_backend("scripted", some, script=PERFECT)
    together = run_ladder(backend, some)
    assert backend.batches == [len(some) * len(VARIANTS)] * 3
    for variant in VARIANTS:
        alone = run_ladder(make_backend("scripted", some, script=PERFECT), some,
                           LadderConfig(variants=(variant,)))
        mine = together.filter(pl.col("system") == variant)
        assert mine.drop("latency_s").equals(alone.drop("latency_s"))
