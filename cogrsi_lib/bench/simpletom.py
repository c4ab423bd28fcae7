"""SimpleToM (Gu et al., ICLR 2026): explicit vs. applied ToM on short stories.

No sample could be obtained here (the release is on the Hugging Face hub,
``allenai/SimpleToM``), so this loader is written against the hub files' documented format and
tested on a synthetic fixture in it (``tests/fixtures/bench/simpletom``).  The release has one
``test.jsonl`` per question set: ``mental-state-qa`` (is the character aware of the key
information?), ``behavior-qa`` (what will the character do next?) and ``judgment-qa`` (is the
behaviour reasonable?).  Each line has ``id`` (e.g. ``gen1169_sev3_aware``: the story id and
a question-set suffix, ``aware``/``action``/``judge``), ``story``, ``question``,
``scenario_name``, ``choices`` (``{"text": [...], "label": ["A", "B"]}``) and ``answerKey``.

Scoring (the authors' ``inference/utils.py``, ``process_answer``): drop "answer:", then the
first ``(A)``-style mark decides; else a unique ``(A``; else a unique bare capital letter;
anything else is not an answer.  CogRSI scores behaviour and judgment (App. E.2, Table 10):
the headline is their mean.  Mental-state awareness is reported separately; its gold answer
is "No" throughout, so a constant "No" scores 100% on it (CogRSI Table 22 note).

* Official protocol: the released prompt (``inference/utils.py``, ``question_prompt``, as
  ``inference/run_inference.py`` calls it without chain of thought, behind its system
  message), scored by ``process_answer``.
* Uniform protocol: the package's prompt, the same scorer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol
from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, read_jsonl, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, mean_by, right
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

QUESTION_SETS = {"mental-state-qa": "mental-state", "behavior-qa": "behavior",
                 "judgment-qa": "judgment"}
SCORED = ("behavior", "judgment")
FIELDS = ("id", "story", "question", "scenario_name", "choices", "answerKey")


def load(root: Path) -> list[Item]:
    """The three question sets (``<set>/test.jsonl``)."""
    items: list[Item] = []
    for folder, qtype in QUESTION_SETS.items():
        path = root / folder / "test.jsonl"
        for _lineno, record, rec in read_jsonl(path, FIELDS):
            choices = rec["choices"]
            if (not isinstance(choices, dict) or len(choices.get("text", [])) !=
                    len(choices.get("label", []))):
                raise BenchmarkFormatError(path, record, "choices need equal-length "
                                                         "'text' and 'label' lists")
            story_key = rec["id"].rsplit("_", 1)[0]
            items.append(Item(
                benchmark="simpletom",
                id=f"simpletom/{rec['id']}",
                story_id=f"simpletom/{story_key}",
                context=rec["story"],
                question=rec["question"],
                question_type=qtype,
                gold=str(rec["answerKey"]),
                options=tuple(zip(choices["label"], choices["text"], strict=True)),
                source=f"{folder}/test.jsonl:{record}",
                extra={"scenario_name": rec["scenario_name"], "source_id": rec["id"]},
            ))
    return validate_items(items, root)


def process_answer(reply: str, labels: Sequence[str] = ("A", "B", "C", "D")) -> str | None:
    """The authors' ``process_answer`` (letters only; ``None`` when no single letter)."""
    text = re.sub(r"(?ims)answer:?", "", reply).strip()
    for label in labels:
        if f"({label})" in text:
            return label
    for pattern in ("({}", "{}"):
        found = [label for label in labels if pattern.format(label) in text]
        if found:
            return found[0] if len(found) == 1 else None
    return None


def judge(item: Item, response: str) -> Judgement:
    parsed = process_answer(response)  # the authors look for A-D whatever the options
    return right(parsed, parsed == item.gold)


def summarize(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Headline: mean of behaviour and judgment accuracy; every set's accuracy beside it."""
    per = mean_by(items, judgements, lambda it: it.question_type)
    out = {f"type:{k}": v for k, v in per.items()}
    scored = [per[k] for k in SCORED if k in per]
    out["score"] = sum(scored) / len(scored) if scored else float("nan")
    out["accuracy"] = accuracy(judgements)
    return out


def units(items: Sequence[Item], judgements: Sequence[Judgement]) -> pl.DataFrame:
    """Behaviour and judgment questions, one cell each (headline = mean of cell means)."""
    rows = [(it, j) for it, j in zip(items, judgements, strict=True)
            if it.question_type in SCORED]
    return pl.DataFrame(
        {"unit_id": [it.id for it, _ in rows], "cluster": [it.story_id for it, _ in rows],
         "cell": [it.question_type for it, _ in rows], "value": [j.value for _, j in rows]},
        schema={"unit_id": pl.Utf8, "cluster": pl.Utf8, "cell": pl.Utf8, "value": pl.Float64},
    )


# ------------------------------------------------------------------- official protocol

#: ``inference/run_inference.py``: the system message of every question.
SYSTEM = "You are a helpful assistant."


def _marks(item: Item) -> list[str]:
    """The release letters the choices by position, ``(A)``, ``(B)``, ... (not by label)."""
    return [f"({'ABCD'[k]})" for k in range(len(item.options))]


def official_text(item: Item) -> str:
    """``question_prompt`` with the defaults ``run_inference.py`` uses (no extra question,
    no "either"/"neither" choice, no chain of thought): the story, the question with its
    lettered choices one per line, and the letters to reply with."""
    marks = _marks(item)
    choices = " \n".join(f"{mark} {text}" for mark, (_, text) in
                         zip(marks, item.options, strict=True))
    quoted = " or ".join(f'"{mark}"' for mark in marks)
    return (f"Given the following story, answer the question by giving the correct answer "
            f"choice, {' or '.join(marks)}.\n\nStory:\n{item.context}\n\n"
            f"Question: {item.question} \n{choices}\n\n"
            f"What is the correct answer? Respond with just {quoted}\n")


def official_prompt(item: Item) -> list[Message]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": official_text(item)}]


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.simpletom", "choice")


def official_answer(item: Item) -> ReplyFormat:
    """The reply the prompt asks for: just one of the lettered marks, e.g. ``(A)``."""
    return ReplyFormat.choice(OFFICIAL_FAMILY, _marks(item))


RELEASE = ("yulinggu-cs/SimpleToM@0f054a7 (inference/run_inference.py, inference/utils.py: "
           "question_prompt, process_answer)")

_HUB = "https://huggingface.co/datasets/allenai/SimpleToM/resolve/main"

#: Where the scorer (both protocols) differs from the release.
SCORER_DEVIATIONS = (
    Deviation(
        "headline",
        "accuracy per question type",
        "score = mean of behaviour and judgment accuracy (CogRSI App. E.2); each type reported",
    ),
)

OFFICIAL = Protocol(
    "official", judge, summarize, units, prompt=official_prompt, answer=official_answer,
    release=RELEASE, deviations=SCORER_DEVIATIONS,
)


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured, at reader_eval's default cap."""
    item = Item("simpletom", "example", "example", EXAMPLE_STORY,
                "Is Sally likely to be aware that the ball is in the box?", "mental-state", "B",
                options=(("A", "Yes"), ("B", "No")))
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=48, structured=True)


BENCHMARK = register(Benchmark(
    name="simpletom",
    title="SimpleToM",
    suites=("main",),
    unit="story",
    data_dir="simpletom",
    required=tuple(f"{folder}/test.jsonl" for folder in QUESTION_SETS),
    load=load,
    judge=judge,
    summarize=summarize,
    units=units,
    sources=tuple(Source(url=f"{_HUB}/{folder}/test.jsonl", dest=f"{folder}/test.jsonl")
                  for folder in QUESTION_SETS),
    paper="Gu et al., ICLR 2026",
    sample="synthetic",
    official=OFFICIAL,
    uniform_deviations=SCORER_DEVIATIONS,
))
