"""MMToM-QA (Jin et al., ACL 2024), text-only version: belief and goal inference.

The release's text questions are shipped whole in ``data/benchmarks/mmtom-qa`` (the file the
authors' code reads: chuanyangjin/MMToM-QA, ``Benchmark/questions.json``, one JSON object per
line; origin and counts in its SOURCE.md), and a cut of it in ``tests/fixtures/bench_real``.
Each line has ``question`` (the whole text input: "What's inside the apartment: ... Actions taken by
X: ... Question: ... (a) ... (b) ... Please respond with either a or b."), ``answer``
(``a``/``b``), ``question_type`` (1.1-1.3 belief, 2.1-2.4 goal inference), ``episode``,
``start_time``, ``end_time``, ``test`` and ``answer_list``.  CogRSI and PDDL-Mind run it as
text only (CogRSI App. E.2); the sampling unit is the episode.

Scoring (``BIP-ALM/testing_gpt.py``): the first character of the stripped, lower-cased reply
must equal the answer letter.
"""

from __future__ import annotations

import re
from pathlib import Path

from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, read_jsonl, validate_items
from cogrsi_lib.bench.scoring import Judgement, right

JSON_PATH = "Benchmark/questions.json"
FIELDS = ("question", "answer", "question_type", "episode")
_OPTION = re.compile(r"\(([a-z])\)\s*(.*?)(?=\s*\([a-z]\)|\s*Please respond|$)", re.S)
TYPE_NAMES = {"1.1": "true belief, short-term", "1.2": "false belief, short-term",
              "1.3": "belief tracking, long-term", "2.1": "goal given true belief",
              "2.2": "goal given false belief", "2.3": "goal given updated belief",
              "2.4": "goal given future actions"}


def split_question(text: str) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """(context, question, options) of one MMToM-QA text input."""
    head, sep, tail = text.rpartition("Question:")
    if not sep:
        raise ValueError("no 'Question:'")
    first = re.search(r"\([a-z]\)", tail)
    if first is None:
        raise ValueError("no options")
    options = tuple((m.group(1), m.group(2).strip()) for m in _OPTION.finditer(tail))
    return head.strip(), tail[:first.start()].strip(), options


def load(root: Path) -> list[Item]:
    path = root / JSON_PATH
    items: list[Item] = []
    for lineno, record, rec in read_jsonl(path, FIELDS):
        try:
            context, question, options = split_question(rec["question"])
        except ValueError as err:
            raise BenchmarkFormatError(path, record, f"cannot split question ({err})"
                                       ) from err
        qtype = str(rec["question_type"])
        items.append(Item(
            benchmark="mmtom-qa",
            id=f"mmtom-qa/{lineno:04d}",
            story_id=f"mmtom-qa/episode{rec['episode']}",
            context=context,
            question=question,
            question_type=qtype,
            gold=str(rec["answer"]).strip().lower(),
            options=options,
            source=f"{path.name}:{record}",
            extra={"type_name": TYPE_NAMES.get(qtype, ""), "episode": rec["episode"],
                   "end_time": rec.get("end_time"), "test": rec.get("test"),
                   "full_text": rec["question"]},
        ))
    return validate_items(items, path)


def judge(item: Item, response: str) -> Judgement:
    reply = response.strip("\n").strip(" ").lower()  # as the release strips, in that order
    parsed = reply[0] if reply and reply[0] in item.labels else None
    return right(parsed, parsed == item.gold)


BENCHMARK = register(Benchmark(
    name="mmtom-qa",
    title="MMToM-QA",
    suites=("test_only", "pddl_mind"),
    unit="episode",
    data_dir="mmtom-qa",
    required=(JSON_PATH,),
    load=load,
    judge=judge,
    sources=(Source(
        url="https://raw.githubusercontent.com/chuanyangjin/MMToM-QA/"
            "2945b4a389eb598da1aab7a53d3eac18e7952590/Benchmark/questions.json",
        dest=JSON_PATH,
        sha256="54a6b908f793f660554f31bc60ae04d58c289f057229f50f74ed696589c45ede"),),
    paper="Jin et al., ACL 2024",
    release="BIP-ALM (testing_gpt.py: first character of the reply)",
))
