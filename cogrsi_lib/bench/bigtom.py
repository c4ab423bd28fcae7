"""BigToM (Gandhi et al., NeurIPS 2023 D&B): causal templates expanded into conditions.

Official format (cicl-stanford/procedural-evals-tom, ``data/bigtom/bigtom.csv``): one story
template per row, ``;``-separated, no header, 19 fields (``TEMPLATE_FIELDS`` then two
bookkeeping fields).  The repo's ``generate_conditions.py`` expands each template into
conditions {0,1: initial belief hidden/shown} x {forward_belief, forward_action,
backward_belief} x {true_belief, false_belief, true_control, false_control}, plus one
percept_to_belief item (initial belief shown, true belief): 25 items per template, 5,000 in
all.  :func:`expand_template` reproduces that expansion string for string.

Scoring (``evaluate_conditions.py``): two-way forced choice shown as ``a)``/``b)`` in
shuffled order; right iff the reply picks the true answer.

* Official protocol: the release's option order (one ``random.seed(0)`` stream per condition
  file, one shuffle per row: the same order for row k of every condition), its chat prompt
  (``chat-0shot``: ``evaluate.txt`` as system message) and its rule: the true answer's key
  (``a)``/``b)``) anywhere in the lower-cased reply makes it right, checked before the other
  key.  Accuracy per condition (the paper's unit) beside the pooled headline.
* Uniform protocol: each item's order from its own seeded generator (independent of which
  others are loaded); a reply naming both options is malformed.

BigToM-U (CogRSI App. G): :func:`bigtom_u_pairs` pairs the conditions that state the initial
belief into true/false-belief *flip* pairs and true/false-control *same* pairs.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol, view_of
from cogrsi_lib.bench.registry import (
    Benchmark,
    Source,
    accuracy_summary,
    item_units,
    register,
)
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, judge_option, mean_by, right
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

CSV_PATH = "data/bigtom/bigtom.csv"
TEMPLATE_FIELDS = (
    "Story", "Aware of event", "Not Aware of event", "Action aware", "Action not aware",
    "Belief Question", "Desire Question", "Action Question", "Belief Answer Aware",
    "Desire Answer Aware", "Action Answer Aware", "Belief Answer not Aware",
    "Desire Answer not Aware", "Action Answer not Aware", "Random Event",
    "Aware of random event", "Not aware of random event",
)
VARIABLES = ("forward_belief", "forward_action", "backward_belief")
CONDITIONS = ("true_belief", "false_belief", "true_control", "false_control")


def expand_template(t: dict[str, str]) -> list[tuple[int, str, str, str, str, str, str]]:
    """Conditions of one template: (init_belief, variable, condition, story, question,
    true answer, wrong answer), as ``generate_conditions.py`` writes them."""
    out = []
    parts = t["Story"].split(".")
    for init in (0, 1):
        for variable in VARIABLES:
            if variable == "forward_action":
                question = t["Action Question"]
                answers = [t["Action Answer Aware"], t["Action Answer not Aware"]]
            else:
                question = t["Belief Question"]
                answers = [t["Belief Answer Aware"], t["Belief Answer not Aware"]]
            aware = [t["Aware of event"], t["Not Aware of event"]]
            aware_random = [t["Aware of random event"], t["Not aware of random event"]]
            actions = [t["Action aware"], t["Action not aware"]]
            if init == 0:
                story = f"{parts[0]}.{parts[1]}.{parts[2]}.{parts[4]}."
                keep = 3
            else:
                story = f"{parts[0]}.{parts[1]}.{parts[2]}.{parts[3]}.{parts[4]}."
                keep = 4
            base = story.split(".") if variable == "backward_belief" else parts
            control = ".".join(base[:keep] + [" " + t["Random Event"]])
            for condition in CONDITIONS:
                if variable == "backward_belief":
                    tail = {"true_belief": (story, actions[0]), "false_belief": (story, actions[1]),
                            "true_control": (control, actions[1]),
                            "false_control": (control, actions[1])}[condition]
                else:
                    tail = {"true_belief": (story, aware[0]), "false_belief": (story, aware[1]),
                            "true_control": (control, aware_random[0]),
                            "false_control": (control, aware_random[1])}[condition]
                true, wrong = (answers if condition == "true_belief" else answers[::-1])
                out.append((init, variable, condition, f"{tail[0]} {tail[1]}", question,
                            true, wrong))
    percept_story = f"{parts[0]}.{parts[1]}.{parts[2]}."
    out.append((1, "percept_to_belief", "true_belief", percept_story, t["Belief Question"],
                t["Belief Answer Aware"], t["Belief Answer not Aware"]))
    return out


def read_templates(path: Path) -> list[dict[str, str]]:
    """The template rows of ``bigtom.csv`` as field dicts."""
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter=";"))
    templates = []
    for k, row in enumerate(rows, start=1):
        if not row:
            continue
        if len(row) < len(TEMPLATE_FIELDS):
            raise BenchmarkFormatError(path, f"row {k}", f"{len(row)} fields, expected "
                                                         f"{len(TEMPLATE_FIELDS) + 2}")
        t = dict(zip(TEMPLATE_FIELDS, row, strict=False))
        if t["Story"].count(".") < 5:
            raise BenchmarkFormatError(path, f"row {k}", "Story needs 5 sentences")
        for name, value in t.items():
            if not value.strip():
                raise BenchmarkFormatError(path, f"row {k}", f"empty field {name!r}")
        templates.append(t)
    return templates


def load(root: Path) -> list[Item]:
    """All 5,000 condition items of the 200 templates."""
    path = root / CSV_PATH
    items: list[Item] = []
    for k, t in enumerate(read_templates(path)):
        for init, variable, condition, story, question, true, wrong in expand_template(t):
            item_id = f"bigtom/{k:03d}/{init}_{variable}_{condition}"
            answers = [true, wrong]
            random.Random(item_id).shuffle(answers)
            options = (("a", answers[0]), ("b", answers[1]))
            items.append(Item(
                benchmark="bigtom",
                id=item_id,
                story_id=f"bigtom/{k:03d}",
                context=story,
                question=question,
                question_type=f"{variable}:{condition}",
                gold="a" if answers[0] == true else "b",
                options=options,
                source=f"{path.name}:row {k + 1}",
                extra={"init_belief": init, "variable": variable, "condition": condition},
            ))
    return validate_items(items, path)


def bigtom_u_pairs(
    items: Sequence[Item], variables: Sequence[str] = ("forward_belief", "backward_belief")
) -> list[tuple[str, str, str, str]]:
    """BigToM-U pairs: (pair id, kind, id of version 1, id of version 2).

    Conditions that state the initial belief (init_belief = 1); a *flip* pair is the true-
    and false-belief versions (the agent does or does not perceive the change), a *same* pair
    the true and false controls (the agent does or does not perceive an irrelevant event).
    With the default variables this gives 800 pairs from 200 scenarios (CogRSI App. G).
    """
    by_key = {(it.story_id, it.extra["variable"], it.extra["condition"]): it.id
              for it in items if it.benchmark == "bigtom" and it.extra["init_belief"] == 1}
    pairs = []
    for story, variable in sorted({(s, v) for s, v, _ in by_key if v in variables}):
        for kind, (c1, c2) in (("flip", ("true_belief", "false_belief")),
                               ("same", ("true_control", "false_control"))):
            pairs.append((f"{story}/{variable}/{kind}", kind, by_key[(story, variable, c1)],
                          by_key[(story, variable, c2)]))
    return pairs


# ------------------------------------------------------------------- official protocol

#: ``code/prompt_instructions/evaluate.txt``
INSTRUCTION = ("Answer the questions based on the context. Keep your answer concise, few "
               "words are enough, maximum one sentence. Answer as 'Answer:<option>)<answer>'.")


@cache
def release_true_first(row: int) -> bool:
    """Whether the release shows the true answer first on row ``row`` of a condition file:
    the row-th ``random.shuffle([true, wrong])`` of a ``random.seed(0)`` stream."""
    rng = random.Random(0)
    for _ in range(row + 1):
        answers = ["true", "wrong"]
        rng.shuffle(answers)
    return answers[0] == "true"


def template_row(item: Item) -> int:
    return int(item.story_id.rsplit("/", 1)[1])


def official_views(item: Item) -> list[Item]:
    """The item once, its options in the release's order for its row."""
    true_label = item.gold
    wrong_label = next(lab for lab in item.labels if lab != true_label)
    idx = {lab: k for k, (lab, _) in enumerate(item.options)}
    first, second = ((true_label, wrong_label) if release_true_first(template_row(item))
                     else (wrong_label, true_label))
    return [view_of(item, [idx[first], idx[second]])]


def official_prompt(view: Item) -> list[Message]:
    """``chat-0shot`` with ``--mcq``: the instruction, then story and lettered question."""
    question = (f"{view.question}\nChoose one of the following:\n"
                f"a){view.option_text('a')}\nb){view.option_text('b')}")
    return [{"role": "system", "content": INSTRUCTION},
            {"role": "user", "content": f"Story: {view.context}\nQuestion: {question}"}]


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.bigtom", "regex")


def official_answer(view: Item) -> ReplyFormat:
    """The form the instruction asks for: ``Answer:<option>)<answer>`` on one line."""
    return ReplyFormat.regex(OFFICIAL_FAMILY, r"Answer: ?[ab]\)[^\n]{1,80}")


def official_judge(view: Item, response: str) -> Judgement:
    """The release's rule: the true key in the reply wins, then the other key; a reply with
    neither went to an LLM grader in the release and is malformed (wrong) here."""
    reply = response.strip().lower()
    other = next(lab for lab in view.labels if lab != view.gold)
    if f"{view.gold})" in reply:
        return right(view.gold, True)
    if f"{other})" in reply:
        return right(other, False)
    return right(None, False)


def condition(item: Item) -> str:
    return f"{item.extra['init_belief']}_{item.question_type.replace(':', '_')}"


def official_summarize(items: Sequence[Item], judgements: Sequence[Judgement]
                       ) -> dict[str, float]:
    """Pooled accuracy (headline) and accuracy per condition (init belief x variable x
    condition, the paper's unit) and per question type."""
    out = accuracy_summary(items, judgements)
    out.update({f"condition:{k}": v for k, v in mean_by(items, judgements, condition).items()})
    return out


RELEASE = ("cicl-stanford/procedural-evals-tom@fe647d6 (code/src/evaluate_conditions.py, "
           "evaluate_llm.py)")

OFFICIAL = Protocol(
    "official", official_judge, official_summarize, item_units, prompt=official_prompt,
    views=official_views, answer=official_answer, release=RELEASE,
    deviations=(
        Deviation("parsing", "a reply naming neither key is graded True/False by an LLM "
                  "(text-davinci-003)", "malformed and wrong"),
        Deviation("headline", "accuracy reported per condition",
                  "score = accuracy pooled over the conditions drawn; condition:* per "
                  "condition"),
    ),
)

UNIFORM_DEVIATIONS = (
    Deviation("option order", "row k of every condition file: the k-th shuffle of one "
              "random.seed(0) stream", "seeded by each item's id (2,468 of 5,000 items in "
              "the release's order)"),
    Deviation("parsing", "the true key anywhere in the reply wins, even beside the other",
              "a reply naming both options in the same form is "
              "malformed"),
    Deviation("headline", "accuracy per condition", "accuracy pooled over the conditions "
              "drawn; condition:* per condition beside it"),
)


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured."""
    item = Item("bigtom", "example", "example/0", EXAMPLE_STORY,
                "Where does Sally believe the ball is?", "belief:false", "a",
                options=(("a", "The ball is in the basket."), ("b", "The ball is in the box.")),
                extra={"init_belief": "0"})
    # the format's longest reply (91 characters) fits even at one character per token
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=96, structured=True)


BENCHMARK = register(Benchmark(
    name="bigtom",
    title="BigToM",
    suites=("main",),
    unit="story",
    data_dir="bigtom",
    required=(CSV_PATH,),
    load=load,
    judge=judge_option,
    summarize=official_summarize,
    sources=(Source(
        url="https://raw.githubusercontent.com/cicl-stanford/procedural-evals-tom/"
            "fe647d680bddb69f738519313bed625f9e93b549/data/bigtom/bigtom.csv",
        dest=CSV_PATH,
        sha256="a14884fbff5b61d3fa194ab166764b553ab795fcb1359e69d1282eadf3011a46"),),
    paper="Gandhi et al., NeurIPS 2023 D&B",
    official=OFFICIAL,
    uniform_deviations=UNIFORM_DEVIATIONS,
))
