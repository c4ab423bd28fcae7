"""PDDL-Mind Table 2's baselines (cogrsi_lib/pddl/baselines.py): chain of thought in one
call, DWM's state calls each shown the ones before, and Table 2's layout."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.llm import ScriptedBackend
from cogrsi_lib.pddl import prompts as P
from cogrsi_lib.pddl import report
from cogrsi_lib.pddl.baselines import DWM_PARTS, parts
from cogrsi_lib.pddl.examples import oracle_examples
from cogrsi_lib.pddl.ladder import SYSTEMS, LadderConfig, make_backend, run_ladder


@pytest.fixture(scope="module")
def examples():
    return oracle_examples(4, seed=3, questions_per_story=2)


@given(st.lists(st.text(alphabet="ab c", min_size=1, max_size=8), max_size=12))
def test_parts_keep_every_line_in_order_in_at_most_three_nearly_equal_parts(lines) -> None:
    story = "\n".join(lines)
    kept = [line for line in lines if line.strip()]
    got = parts(story)
    assert "\n".join(got).splitlines() == kept or (not kept and got == [""])
    assert len(got) == max(1, min(DWM_PARTS, len(kept)))
    sizes = [len(p.splitlines()) for p in got] if kept else [0]
    assert max(sizes) - min(sizes) <= 1


def test_cot_is_one_call_and_dwm_states_each_part_before_answering(examples) -> None:
    seen: list[str] = []

    def respond(job) -> str:
        prompt = job.request.messages[-1].content
        seen.append(prompt)
        if prompt.startswith(P.TASK_STATE):
            return f"state {prompt.count('After part') + 1}"
        return json.dumps({"reasoning": "r", "answer": "A"})

    rec = run_ladder(ScriptedBackend(respond), examples,
                     LadderConfig(variants=("cot", "dwm"), state_max_tokens=60))
    cot, dwm = (rec.filter(pl.col("system") == s) for s in ("cot", "dwm"))
    assert cot["calls"].to_list() == [1] * len(examples)
    assert dwm["calls"].to_list() == [DWM_PARTS + 1] * len(examples)  # stories of 3+ lines
    for row in dwm.iter_rows(named=True):
        prompts, replies = json.loads(row["prompt"]), json.loads(row["reply"])
        assert list(prompts) == ["state_1", "state_2", "state_3", "answer"]
        assert replies["state_3"] == ["state 3"]  # shown states 1 and 2
        answer = prompts["answer"][1]["content"]
        assert all(f"After part {k}: state {k}" in answer for k in (1, 2, 3))
        assert row["domain_status"] == row["problem_status"] == "n/a"
        assert row["trace_correct"] is None and row["failure"] in ("none", "unverified")
    # the story alone: the full story, no trace, no parsed state
    cot_prompt = json.loads(cot.row(0, named=True)["prompt"])["answer"][1]["content"]
    assert P.EVIDENCE_NONE in cot_prompt and "Verified state trace" not in cot_prompt


def test_table2_puts_cot_dwm_and_pddl_mind_side_by_side_per_category(examples) -> None:
    rec = run_ladder(make_backend("scripted", examples), examples,
                     LadderConfig(variants=SYSTEMS))
    t = report.table2(rec)
    assert t.columns == ["model", "source", "category", "n", "cot", "dwm", "full",
                         "calls_cot", "calls_dwm", "calls_full"]
    assert t["n"].sum() == len(examples)
    assert (t["calls_cot"] == 1).all() and (t["calls_dwm"] == 4).all()
    assert (t["calls_full"] == 3).all()
    full = rec.filter(pl.col("system") == "full")
    for row in t.iter_rows(named=True):
        mine = full.filter(pl.col("category") == row["category"])["score"].mean()
        assert row["full"] == pytest.approx(mine)


def test_an_unknown_system_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        LadderConfig(variants=("cot", "tot"))
