"""MuMA-ToM (Shi et al., 2025), text-only version: multi-agent belief and social goals.

The release's text files are shipped whole in ``data/benchmarks/muma-tom`` (SCAI-JHU/MuMA-ToM,
``Files/questions.json`` and ``Files/texts.json``, at the commit after its label corrections;
origin and counts in its SOURCE.md), and a cut in ``tests/fixtures/bench_real``.  ``questions.json``
maps an episode id to ``description`` (the text, stored as a Python bytes literal
``"b'...'"``), ``questions`` (number -> question text whose lines ``A) ...``, ``B) ...``,
``C) ...`` are the options), ``answers`` (number -> the correct option line, ``"B) ..."``)
and ``labels`` (number -> ``belief``, ``social_goal`` or ``belief_of_goal``).
``texts.json`` maps the episode id to the plain text, which is preferred when present.

Scoring: option match on the letter (accuracy per question type); the sampling unit is the
episode.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import judge_option

QUESTIONS = "Files/questions.json"
TEXTS = "Files/texts.json"
_OPTION_LINE = re.compile(r"^([A-Z])\)\s*(.+)$")


def description_text(raw: str) -> str:
    """Decode the ``"b'...'"`` description (a bytes literal) to text."""
    if raw.startswith(("b'", 'b"')):
        value = ast.literal_eval(raw)
        return value.decode("utf-8") if isinstance(value, bytes) else str(value)
    return raw


def split_options(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(question stem, options) from a MuMA-ToM question text."""
    stem, options = [], []
    for line in text.splitlines():
        m = _OPTION_LINE.match(line.strip())
        if m:
            options.append((m.group(1), m.group(2).strip()))
        elif not options:
            stem.append(line)
    return "\n".join(stem).strip(), tuple(options)


def load(root: Path) -> list[Item]:
    path = root / QUESTIONS
    try:
        episodes = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise BenchmarkFormatError(path, None, f"not JSON ({err})") from err
    texts_path = root / TEXTS
    texts = json.loads(texts_path.read_text(encoding="utf-8")) if texts_path.exists() else {}
    items: list[Item] = []
    for episode, rec in episodes.items():
        for name in ("description", "questions", "answers", "labels"):
            if name not in rec:
                raise BenchmarkFormatError(path, episode, f"missing field {name!r}")
        context = texts.get(episode) or description_text(rec["description"])
        for number, qtext in rec["questions"].items():
            record = f"{episode} question {number}"
            if number not in rec["answers"] or number not in rec["labels"]:
                raise BenchmarkFormatError(path, record, "no answer or label")
            stem, options = split_options(qtext)
            gold = _OPTION_LINE.match(rec["answers"][number].strip())
            if gold is None:
                raise BenchmarkFormatError(path, record, f"answer {rec['answers'][number]!r} "
                                                         "is not an option line")
            items.append(Item(
                benchmark="muma-tom",
                id=f"muma-tom/{episode}/{number}",
                story_id=f"muma-tom/{episode}",
                context=context,
                question=stem,
                question_type=rec["labels"][number],
                gold=gold.group(1),
                options=options,
                source=f"{path.name}:{record}",
                extra={"episode": episode},
            ))
    return validate_items(items, path)


_RAW = "https://raw.githubusercontent.com/SCAI-JHU/MuMA-ToM/a62569aff7c99c60f37b037537a26fac5125b49c"

BENCHMARK = register(Benchmark(
    name="muma-tom",
    title="MuMA-ToM",
    suites=("test_only", "pddl_mind"),
    unit="episode",
    data_dir="muma-tom",
    required=(QUESTIONS,),
    load=load,
    judge=judge_option,
    sources=(Source(url=f"{_RAW}/{QUESTIONS}", dest=QUESTIONS, sha256=(
        "c38b858f7a7c9416da1ada21b393b601bb87132881020965d06e8037360cacb0")),
             Source(url=f"{_RAW}/{TEXTS}", dest=TEXTS, sha256=(
        "f986f65aab8d6abb9de91a93031f44307c7b82c57bddb07ef9ec420372587d1f"))),
    paper="Shi et al., 2025 (arXiv:2408.12574)",
    release="MuMA-ToM (no scorer checked here: option letter)",
))
