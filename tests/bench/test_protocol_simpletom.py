"""SimpleToM's official protocol against a transcription of its released prompt.

Transcribed from yulinggu-cs/SimpleToM at 0f054a75c83dbab45276696503a0324f881634b3:
``inference/run_inference.py`` (system message; ``question_prompt`` called without chain of
thought, extra question or extra choices) and ``inference/utils.py`` (``question_prompt``,
``make_mcq``).  The release's data are not here: the records are the synthetic fixture in
the hub's format.
"""

from __future__ import annotations

import json
import re

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import simpletom
from cogrsi_lib.bench.protocol import PROMPT_NOT_REPRODUCED


def rel_make_mcq(question: str, choices: list[str]) -> str:
    text = " \n".join(f"({lab}) {c}" for lab, c in zip("ABCDE", choices, strict=False))
    return f"{question} \n{text}"


def rel_question_prompt(record: dict) -> str:
    choices = record["choices"]["text"]
    labels = " or ".join(["(A)", "(B)", "(C)", "(D)"][:len(choices)])
    quoted = re.sub(r"(\(.\))", r'"\1"', labels)
    extra = ""  # no extra question
    return ("Given the following story, answer the question by giving the correct answer "
            f"choice, {labels}.\n\nStory:\n{record['story']}\n{extra}\n"
            f"Question: {rel_make_mcq(record['question'], choices)}\n\n"
            f"What is the correct answer? Respond with just {quoted}\n")


@pytest.fixture(scope="module")
def records(fixtures) -> dict[str, dict]:
    out = {}
    for folder in simpletom.QUESTION_SETS:
        path = fixtures / "simpletom" / folder / "test.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                out[f"simpletom/{rec['id']}"] = rec
    return out


def test_official_prompt_is_the_released_question_prompt(fixtures, records):
    items = bench.load("simpletom", fixtures / "simpletom")
    official = bench.get("simpletom").protocol("official")
    assert {it.id for it in items} == set(records)
    for it in items:
        system, user = official.prompt(it)
        assert system == {"role": "system", "content": "You are a helpful assistant."}
        assert user == {"role": "user", "content": rel_question_prompt(records[it.id])}


def test_official_protocol_declares_the_released_prompt(fixtures):
    official = bench.get("simpletom").protocol("official")
    assert PROMPT_NOT_REPRODUCED not in official.deviations
    assert "question_prompt" in official.release
    assert not any(d.aspect == "prompt" for d in official.deviations)
    item = bench.load("simpletom", fixtures / "simpletom")[0]
    form = official.answer(item)
    for reply in form.choices():  # every reply the asked form allows is read
        assert official.judge(item, reply).parsed == reply.strip("()")
    assert bench.get("simpletom").protocol("uniform").prompt is None
