"""Hi-ToM (He et al., Findings of EMNLP 2023): higher-order beliefs, 15-way choice.

Official format (ying-hui-he/Hi-ToM_dataset, ``Hi-ToM_data.json``): ``{"data": [...]}``,
records with ``prompting_type`` (CoTP | VP), ``deception``, ``story_length`` (1-3),
``question_order`` (0-4), ``sample_id``, ``story`` (numbered lines; the VP copy starts with
an instruction line), ``question``, ``choices`` (one string ``"A. x, B. y, ..., O. z"``) and
``answer`` (a container token).  The 1,200 records are 600 questions, each given once per
prompting style; a system brings its own prompt, so :func:`load` keeps one copy (the VP
records by default).  A story is shared by its five questions (orders 0-4): 120 stories.

Scoring (paper; the repo ships no scorer): multiple choice, right iff the reply names the
gold option (its letter or its container); accuracy per ToM order, with/without deception.
The headline is the mean of the per-order accuracies (:func:`summarize`).

* Official protocol: the released vanilla prompt (``Hi-ToM_prompts/*/MC``, rebuilt from the
  JSON record byte for byte), whose closing note of assumptions (agents may lie; trust
  whoever left the room later) is what fixes the answers of the deception stories.
* Uniform protocol: the package's prompt, which does not carry that note.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol
from cogrsi_lib.bench.registry import Benchmark, Source, register, units_by
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, judge_option, mean_by
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

JSON_PATH = "Hi-ToM_data.json"
FIELDS = ("prompting_type", "deception", "story_length", "question_order", "sample_id",
          "story", "question", "choices", "answer")
_CHOICE = re.compile(r"(?:^|,\s*)([A-Z])\.\s+")
_NUMBERED = re.compile(r"^\d+ ")


def parse_choices(text: str) -> tuple[tuple[str, str], ...]:
    """``"A. x, B. y"`` -> ``(("A", "x"), ("B", "y"))``."""
    marks = list(_CHOICE.finditer(text))
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        out.append((m.group(1), text[m.end():end].strip().rstrip(",").strip()))
    return tuple(out)


def story_lines(story: str) -> list[str]:
    """The numbered story lines (drops the VP instruction line and blank lines)."""
    return [line for line in story.splitlines() if _NUMBERED.match(line)]


def load(root: Path, prompting_type: str = "VP") -> list[Item]:
    """Hi-ToM questions of one prompting copy (``"VP"``, ``"CoTP"`` or ``"all"``)."""
    path = root / JSON_PATH
    try:
        records = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (KeyError, TypeError, json.JSONDecodeError) as err:
        raise BenchmarkFormatError(path, None, f"expected {{'data': [...]}} ({err})") from err
    items: list[Item] = []
    for k, rec in enumerate(records):
        record = f"data[{k}]"
        missing = [f for f in FIELDS if f not in rec]
        if missing:
            raise BenchmarkFormatError(path, record, f"missing field(s) {', '.join(missing)}")
        if prompting_type != "all" and rec["prompting_type"] != prompting_type:
            continue
        options = parse_choices(rec["choices"])
        if len(options) < 2:
            raise BenchmarkFormatError(path, record, f"cannot read choices {rec['choices']!r}")
        gold = [label for label, text in options if text == rec["answer"]]
        if len(gold) != 1:
            raise BenchmarkFormatError(path, record, f"answer {rec['answer']!r} is not exactly "
                                                     "one of the choices")
        lines = story_lines(rec["story"])
        if not lines:
            raise BenchmarkFormatError(path, record, "story has no numbered lines")
        key = hashlib.sha1("\n".join(lines).encode()).hexdigest()[:12]
        items.append(Item(
            benchmark="hi-tom",
            id=f"hi-tom/{rec['prompting_type']}/{rec['sample_id']:04d}",
            story_id=f"hi-tom/{key}",
            context="\n".join(lines),
            question=rec["question"],
            question_type=f"order_{rec['question_order']}",
            gold=gold[0],
            options=options,
            source=f"{path.name}:{record}",
            extra={"deception": bool(rec["deception"]), "story_length": rec["story_length"],
                   "prompting_type": rec["prompting_type"], "sample_id": rec["sample_id"],
                   "answer_text": rec["answer"]},
        ))
    return validate_items(items, path)


def summarize(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Accuracy per ToM order (``type:order_k``, what the paper reports), per order with
    and without deception (``tell:order_k``, ``no_tell:order_k``) and over all questions;
    the headline is the mean of the per-order accuracies (:data:`units`: one row per
    question, in its order's cell).  Every story asks each order once, so over whole
    stories the headline equals the accuracy over all questions."""
    per_order = mean_by(items, judgements, lambda it: it.question_type)
    out = {"score": sum(per_order.values()) / len(per_order) if per_order else float("nan"),
           "accuracy": accuracy(judgements)}
    out.update({f"type:{k}": v for k, v in per_order.items()})
    for deception, name in ((False, "no_tell"), (True, "tell")):
        pairs = [(it, j) for it, j in zip(items, judgements, strict=True)
                 if it.extra["deception"] == deception]
        by_order = mean_by([it for it, _ in pairs], [j for _, j in pairs],
                           lambda it: it.question_type)
        out.update({f"{name}:{k}": v for k, v in by_order.items()})
    return out


#: Headline rows: one per question, in its ToM order's cell.
units = units_by(lambda it: it.question_type)


INSTRUCTION = ("Read the following story and answer the multiple-choice question. Please "
               "provide answer without explanations.")
#: The note closing every released prompt (``Hi-ToM_prompts``; its wording kept as released).
NOTE = (
    "Note: You should assume the following. (1) An agent witnesses everything and every "
    "movements before exiting a location. (2) An agent A can infer another agent B's mental "
    "state only if A and B have been in the same location, or have private or public "
    "interactions. (3) Note that every agent tend to lie. What a character tells others "
    "doesn't affect his actual belief. An agent tend to trust a agent that exited the room "
    "later than himself. The exit order is known to all agents. (4) Agents in private "
    "communications know that others won't hear them, but they know that anyone can hear any "
    "public claims.")


def official_text(item: Item) -> str:
    """The released vanilla (MC) prompt of ``item``, as in ``Hi-ToM_prompts``."""
    choices = ", ".join(f"{lab}. {text}" for lab, text in item.options)
    return (f"{INSTRUCTION}\nStory:\n{item.context}\nQuestion: {item.question}\n"
            f"Choices: {choices}\n\n{NOTE}\n")


def official_prompt(item: Item) -> list[Message]:
    return [{"role": "user", "content": official_text(item)}]


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.hi-tom", "choice")


def official_answer(item: Item) -> ReplyFormat:
    """An answer without explanation: one of the choices as shown (``K. green_drawer``)."""
    return ReplyFormat.choice(OFFICIAL_FAMILY,
                              [f"{lab}. {text}" for lab, text in item.options])


RELEASE = "ying-hui-he/Hi-ToM_dataset@56dda76 (Hi-ToM_prompts, MC)"

#: Where the headline (both protocols) differs from what the paper reports.
HEADLINE = Deviation(
    "headline", "the paper reports accuracy per ToM order (0-4), with and without deception",
    "score = mean of the five per-order accuracies (headline rows in one cell per order; "
    "over whole stories, which ask every order once, the accuracy over all questions); "
    "type:order_k per order, tell:order_k and no_tell:order_k with and without deception, "
    "beside it",
)

OFFICIAL = Protocol(
    "official", judge_option, summarize, units, prompt=official_prompt,
    answer=official_answer, release=RELEASE,
    deviations=(
        Deviation("scoring", "no scorer released (the paper: accuracy of the chosen option)",
                  "the reply's option letter or container text must name the answer"),
        HEADLINE,
    ),
)

UNIFORM_DEVIATIONS = (
    Deviation("note", "every prompt ends with a note of assumptions (agents may lie; trust "
              "whoever left the room later) that decides the deception stories' answers",
              "the note is absent from the items and from the package's prompt"),
    HEADLINE,
)


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured, at reader_eval's default cap."""
    item = Item("hi-tom", "example", "example", EXAMPLE_STORY,
                "Where does Sally think the ball is?", "order_1", "A",
                options=(("A", "basket"), ("B", "box")))
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=48, structured=True)


BENCHMARK = register(Benchmark(
    name="hi-tom",
    title="Hi-ToM",
    suites=("main",),
    unit="story",
    data_dir="hi-tom",
    required=(JSON_PATH,),
    load=load,
    judge=judge_option,
    summarize=summarize,
    units=units,
    sources=(Source(
        url="https://raw.githubusercontent.com/ying-hui-he/Hi-ToM_dataset/"
            "56dda76fbbbcd510d51e91837fe19b7df2108562/Hi-ToM_data.json",
        dest=JSON_PATH,
        sha256="1c4077bbcdf815b91dbb791b60dbce3920a98bd63317954ebf94a532d43cd573"),),
    paper="He et al., Findings of EMNLP 2023",
    official=OFFICIAL,
    uniform_deviations=UNIFORM_DEVIATIONS,
))
