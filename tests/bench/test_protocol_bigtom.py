"""BigToM's official protocol against a transcription of its released evaluation.

Transcribed from cicl-stanford/procedural-evals-tom at commit
fe647d680bddb69f738519313bed625f9e93b549: ``code/src/evaluate_conditions.py`` (one
``random.seed(0)`` stream per condition file, one shuffle of [true, wrong] per row, the
lettered question, the key rule) and ``code/src/evaluate_llm.py`` (``chat-0shot`` messages
with ``code/prompt_instructions/evaluate.txt``).
"""

from __future__ import annotations

import random

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import bigtom
from cogrsi_lib.bench.report import evaluate

from .conftest import real

# ------------------------------------------------------------- transcription of the release


def rel_condition_run(rows: list[tuple[str, str, str, str]], replies: list[str]):
    """One condition file: (question shown, verdict or None when the grader would decide)."""
    random.seed(0)
    out = []
    for (_story, question, true_answer, wrong_answer), predicted in zip(rows, replies,
                                                                         strict=True):
        answers = [true_answer, wrong_answer]
        random.shuffle(answers)
        shown = f"{question}\nChoose one of the following:\na){answers[0]}\nb){answers[1]}"
        predicted = predicted.strip()
        key, negative = ("a)", "b)") if answers[0] == true_answer else ("b)", "a)")
        if key in predicted.lower():
            verdict = True
        elif negative in predicted.lower():
            verdict = False
        else:
            verdict = None
        out.append((shown, verdict))
    return out


VARIANTS = ["a)", "b)", "Answer: a) she believes so", "B) no", "(a)", "a) or b)", "b) a)",
            "I think a", "", " A)yes", "answer:b)"]


@pytest.fixture(scope="module")
def items():
    return real("bigtom")


def _condition(items, key):
    chosen = [it for it in items if bigtom.condition(it) == key]
    return sorted(chosen, key=bigtom.template_row)


@pytest.mark.parametrize("key", ["0_forward_belief_true_belief", "1_backward_belief_false_control",
                                 "1_percept_to_belief_true_belief"])
def test_option_order_prompt_and_verdicts_match_the_release(items, key):
    official = bench.get("bigtom").protocol("official")
    chosen = _condition(items, key)
    assert len(chosen) == 200
    rows = []
    for it in chosen:
        true, wrong = it.option_text(it.gold), next(t for lab, t in it.options if lab != it.gold)
        rows.append((it.context, it.question, true, wrong))
    replies = [VARIANTS[k % len(VARIANTS)] for k in range(len(rows))]
    for it, reply, (shown, verdict) in zip(chosen, replies, rel_condition_run(rows, replies),
                                           strict=True):
        view = official.present(it)[0]
        system, user = official.prompt(view)
        assert system == {"role": "system", "content": bigtom.INSTRUCTION}
        assert user["content"] == f"Story: {it.context}\nQuestion: {shown}"
        judgement = official.score(it, reply)
        if verdict is None:  # the release asked an LLM grader: malformed here
            assert judgement.malformed and not judgement.correct
        else:
            assert judgement.correct == verdict, (it.id, reply)


def test_release_order_agrees_with_the_uniform_order_on_about_half(items):
    official = bench.get("bigtom").protocol("official")
    same = sum(official.present(it)[0].options == it.options for it in items)
    assert same == 2468 and len(items) == 5000


def test_a_reply_naming_both_keys_is_right_officially_and_malformed_uniformly(items):
    it = items[0]
    official, uniform = (bench.get("bigtom").protocol(p) for p in ("official", "uniform"))
    assert it.gold == "b" and official.present(it)[0].gold == "a"
    assert official.score(it, "(a) or (b)").correct  # the true key is looked up first
    assert uniform.score(it, "(a) or (b)").malformed


def test_official_summary_reports_every_condition(items):
    replies = {it.id: "a)" for it in items}
    ev = evaluate("bigtom", items, replies, protocol="official")
    conditions = [k for k in ev.summary if k.startswith("condition:")]
    assert len(conditions) == 25
    assert ev.summary["score"] == pytest.approx(
        sum(ev.summary[k] for k in conditions) / 25)  # equal sizes: pooled = mean
