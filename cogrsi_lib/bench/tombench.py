"""ToMBench (Chen et al., ACL 2024): 20 bilingual tasks, 2- or 4-way multiple choice.

Official format (zhchen18/ToMBench, ``data/<Task>.jsonl``): one item per line with keys
``"能力\\nABILITY"``, ``"序号\\nINDEX"``, Chinese ``故事/问题/选项A..D``, English
``STORY/QUESTION/OPTION-A..D`` and ``"答案\\nANSWER"``.  Traps handled here: two-choice
items carry a bare ``NaN`` token for the missing options (not strict JSON; Python's parser
reads it as a float), one answer is ``"A. "`` rather than ``"A"``, the options of 40 Strange
Story Task items carry their own letter (``"A. Yes"``; removed as ``run_api.py`` removes it,
:func:`option_text`), and ``INDEX`` is neither unique in a file nor within a story.

As in CogRSI App. E.2, items with repeated ids are disambiguated (the id is the task and the
line number; the original INDEX is kept in ``extra``) and options with empty text (NaN, None,
blank) are removed before any draw.  The sampling unit is the story (task + story text).

Scoring (repo ``get_results.py``): the reply's ``[[X]]`` (or ``[X]``, or else its last
capital A-D) is the choice; accuracy per task and per ability.

* Official protocol (``run_api.py`` + ``get_results.py``): the English prompt, each item
  asked :data:`TRY_TIMES` = 5 times with its options shuffled, each reply's letter mapped
  back to the original option and the most common one (ties: the earliest try) compared
  with the answer; a reply with no letter counts as "A".  Two-choice items get the
  two-option prompt (the release's test picks the four-option one for them and fails).
  Headline: mean of the per-task accuracies.  Every difference is a row of :data:`OFFICIAL`.
* Uniform protocol: one ask in the loaded order; a reply with no letter is malformed and
  wrong; headline: accuracy over items.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Sequence
from pathlib import Path

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol, view_of
from cogrsi_lib.bench.registry import Benchmark, Source, register, units_by
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, majority_vote, mean_by, right
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

DATA = "data"
TASKS = (
    "Ambiguous Story Task", "Completion of Failed Actions", "Discrepant Desires",
    "Discrepant Emotions", "Discrepant Intentions", "Emotion Regulation", "False Belief Task",
    "Faux-pas Recognition Test", "Hidden Emotions", "Hinting Task Test",
    "Knowledge-Attention Links", "Knowledge-Pretend Play Links", "Moral Emotions",
    "Multiple Desires", "Percepts-Knowledge Links", "Persuasion Story Task",
    "Prediction of Actions", "Scalar Implicature Test", "Strange Story Task",
    "Unexpected Outcome Test",
)
K_ABILITY, K_INDEX, K_ANSWER = "能力\nABILITY", "序号\nINDEX", "答案\nANSWER"
LETTERS = ("A", "B", "C", "D")
_ANSWER = re.compile(r"^\s*([A-D])\s*[.)]?\s*$")


def _blank(value: object) -> bool:
    """NaN, None or whitespace: an option with no text."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def option_text(label: str, value: object) -> str:
    """An option's text as ``run_api.py`` shows it: every ``"X. "`` of option X removed (40
    Strange Story Task items store ``"A. Yes"``, which the release's prompt, adding its own
    ``"A. "``, would show as ``"A. A. Yes"``), then surrounding spaces stripped."""
    return str(value).replace(f"{label}. ", "").strip()


def _slug(task: str) -> str:
    return task.lower().replace(" ", "-")


def load_task(path: Path, language: str = "en") -> list[Item]:
    """One task file (``language`` ``"en"`` or ``"zh"``)."""
    task = path.stem
    keys = (("STORY", "QUESTION", "OPTION-{}") if language == "en" else ("故事", "问题", "选项{}"))
    items: list[Item] = []
    stories: dict[str, int] = {}
    with path.open(encoding="utf-8") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            record = f"line {lineno}"
            try:
                rec = json.loads(line)  # accepts the bare NaN token
            except json.JSONDecodeError as err:
                raise BenchmarkFormatError(path, record, f"not JSON ({err})") from err
            for key in (K_ABILITY, K_INDEX, K_ANSWER, keys[0], keys[1]):
                if key not in rec:
                    raise BenchmarkFormatError(path, record, f"missing field {key!r}")
            answer = _ANSWER.match(str(rec[K_ANSWER]))
            if answer is None:
                raise BenchmarkFormatError(path, record, f"answer {rec[K_ANSWER]!r} is not A-D")
            options = tuple((lab, option_text(lab, rec[keys[2].format(lab)])) for lab in LETTERS
                            if not _blank(rec.get(keys[2].format(lab))))
            if len(options) < 2:
                raise BenchmarkFormatError(path, record, "fewer than two non-empty options")
            story = str(rec[keys[0]])
            number = stories.setdefault(story, len(stories))
            items.append(Item(
                benchmark="tombench",
                id=f"tombench/{_slug(task)}/{lineno:04d}",
                story_id=f"tombench/{_slug(task)}/s{number:03d}",
                context=story,
                question=str(rec[keys[1]]),
                question_type=str(rec[K_ABILITY]).strip(),
                gold=answer.group(1),
                options=options,
                source=f"{path.name}:{record}",
                extra={"task": task, "source_index": rec[K_INDEX], "language": language},
            ))
    return validate_items(items, path)


def load(root: Path, language: str = "en") -> list[Item]:
    """All 20 tasks (2,860 items)."""
    items: list[Item] = []
    for task in TASKS:
        items += load_task(root / DATA / f"{task}.jsonl", language)
    return items


def extract_answer(reply: str) -> str | None:
    """``[[X]]``, else ``[X]``, else the last capital A-D of the reply, else ``None``."""
    for pattern in ("[[{}]]", "[{}]"):
        for letter in LETTERS:
            if pattern.format(letter) in reply:
                return letter
    for char in reversed(reply):
        if char in LETTERS:
            return char
    return None


def judge(item: Item, response: str) -> Judgement:
    parsed = extract_answer(response)
    if parsed is not None and parsed not in item.labels:
        parsed = None
    return right(parsed, parsed == item.gold)


def summarize(items: list[Item], judgements: list[Judgement]) -> dict[str, float]:
    """Accuracy (headline), per ability (question type) and per task."""
    out = {"score": accuracy(judgements), "accuracy": accuracy(judgements)}
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    out.update({f"task:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.extra["task"]).items()})
    return out


# ------------------------------------------------------------------- official protocol

TRY_TIMES = 5
#: ``prompts.py``: SystemEvaluatePrompt_en (typos kept) and UserEvaluatePrompt{4,2}Choices_en
SYSTEM_EN = (
    "Below is a multiple-choice question with a story and serveral answer options. Based on "
    "the content of the story and the given question, please infer the most likely answer and "
    "output the answer index.\nNote:\n(1) Please only output the most likely answer index in "
    "the format: [[Answer Index]], for example, if the most likely answer option is "
    "'A. Handbag', then output '[[A]]';\n(2) You must choose one of the given answer options "
    "'A, B, C, D' as the most likely answer, regardless of whether the story provides enough "
    "information. If you think there is not enough information in the story to choose an "
    "answer, please randomly output one of \"[[A]]\", \"[[B]]\", \"[[C]]\", or \"[[D]]\";\n"
    "(3) Please only output the most likely answer index based on the given information, and "
    "do not output any other content.")


def official_prompt(view: Item) -> list[Message]:
    """The release's system and user messages for one (shuffled) view."""
    choices = "\n".join(f"{lab}. {text}" for lab, text in view.options)
    user = (f"[Story]\n{view.context}\n\n[Question]\n{view.question}\n\n"
            f"[Candidate Answers]\n{choices}")
    return [{"role": "system", "content": SYSTEM_EN}, {"role": "user", "content": user}]


def official_views(item: Item) -> list[Item]:
    """:data:`TRY_TIMES` shuffles of the options (seeded by item id and try)."""
    out = []
    for k in range(TRY_TIMES):
        order = list(range(len(item.options)))
        random.Random(f"{item.id}/{k}").shuffle(order)
        out.append(view_of(item, order, k))
    return out


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.tombench", "regex")


def official_answer(view: Item) -> ReplyFormat:
    """The form the system prompt asks for: ``[[X]]`` with X one of the view's letters."""
    return ReplyFormat.regex(OFFICIAL_FAMILY,
                             r"\[\[(" + "|".join(view.labels) + r")\]\]")


def official_extract(reply: str) -> str:
    """``get_results.extract_answer``: as :func:`extract_answer`, but "A" when no letter."""
    return extract_answer(reply) or "A"


def official_judge(view: Item, response: str) -> Judgement:
    """One try: the letter read by the release (a letter that is not an option of a
    two-choice item maps to nothing and is wrong)."""
    letter = official_extract(response)
    parsed = letter if letter in view.labels else None
    return right(parsed, parsed == view.gold)


def official_combine(item: Item, tries: Sequence[Judgement]) -> Judgement:
    """The most common mapped answer over the tries (ties: the earliest try's) against the
    gold."""
    vote = majority_vote([j.parsed or "" for j in tries])
    return right(str(vote) or None, vote == item.gold)


def official_summarize(items: Sequence[Item], judgements: Sequence[Judgement]
                       ) -> dict[str, float]:
    """Per task and per ability accuracy (``get_results.py``); headline: mean over tasks
    (its headline rows: one per item, in its task's cell)."""
    tasks = mean_by(items, judgements, lambda it: it.extra["task"])
    out = {"score": sum(tasks.values()) / len(tasks) if tasks else float("nan"),
           "accuracy": accuracy(judgements)}
    out.update({f"task:{k}": v for k, v in tasks.items()})
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    return out


RELEASE = "zhchen18/ToMBench@4f491f0 (run_api.py, prompts.py, get_results.py)"

OFFICIAL = Protocol(
    "official", official_judge, official_summarize, units_by(lambda it: it.extra["task"]),
    prompt=official_prompt,
    views=official_views, combine=official_combine, answer=official_answer, release=RELEASE,
    deviations=(
        Deviation("language", "run_api.py defaults to Chinese (--language zh)",
                  "English prompt and items (the paper reports both)"),
        Deviation("option order", "one random.seed(42) stream over files in os.listdir order "
                  "(not reproducible across machines)",
                  "each try's order seeded by the item id and try number"),
        Deviation("parsing", "the gold answer compared as stored: the one answer 'A. ' can "
                  "never match", "gold answers stripped to their letter", broken=True),
        Deviation("two choices", "the four-option prompt is chosen when 选项C != None, which "
                  "the NaN of the 483 two-choice items satisfies: format_prompt_4 calls "
                  ".replace on NaN and the run stops",
                  "two-choice items asked with the two-option prompt", broken=True),
        Deviation("option mapping", "a shown option is mapped back to the first original "
                  "option with the same text: where two options share a text (2 Unexpected "
                  "Outcome Test items), votes for either count for the first",
                  "mapped back by position: each shown option to its own original"),
        Deviation("majority", "ties go to the answer first written to the results file; 32 "
                  "threads write in completion order, so a tie can fall either way",
                  "ties go to the answer of the earliest try"),
        Deviation("ability", "per-ability accuracy keyed by the ability as stored: one item's "
                  "'Knowledge: Information-knowledge links ' (trailing space) is reported as "
                  "an ability of its own", "ability names stripped: that item counts with "
                  "the other 199 of its ability"),
        Deviation("headline", "get_results.py writes per-task and per-ability accuracy",
                  "score = mean of the per-task accuracies; both reported"),
    ),
)

UNIFORM_DEVIATIONS = (
    Deviation("repetitions", "5 tries with shuffled options, majority vote",
              "one try in the loaded order"),
    Deviation("parsing", "a reply with no letter counts as 'A'",
              "a reply with no letter is malformed and wrong"),
    Deviation("headline", "per-task and per-ability accuracy", "accuracy over items"),
)

_RAW = "https://raw.githubusercontent.com/zhchen18/ToMBench/4f491f0784ed31ef93a8837615fbc48f885cf78d"
#: sha256 of each task file at that commit (the copies in data/ are byte-identical)
SHA256 = {
    "Ambiguous Story Task": "c99f365b6d3d0e982228623d4328afbafe11cf9a8da3a2838ed6c846e4f154d0",
    "Completion of Failed Actions":
        "cb68348ef3eb53d7c6bf0e426b9279856264748b94f181ce042c91dcf56ba5af",
    "Discrepant Desires": "73093d99923efac243e3610c393613c000b5dc04f88771c39a3b641b993a6b70",
    "Discrepant Emotions": "100b7f05ba5b76aeaa8d2daf3897c90c6a4f08dc23b75a0dd87be0e82db11bf4",
    "Discrepant Intentions": "d72c8353aa5b65f35073d72808996b6f8e980f7683539e25510a251ed8f1dac2",
    "Emotion Regulation": "553d0ee61733cddfa3a9c531c3f7306c40929edc9f0e1e1dda7088ed8804c96c",
    "False Belief Task": "1a5c38362c4c883b219381e24d7b51c1f60abd959f39b6dc3e977ca11d7abff8",
    "Faux-pas Recognition Test": "374272690aedfe34529cb83fc4368a38960da288fb8d787a7bf50aba65dd349c",
    "Hidden Emotions": "57d0882eafddca8fb8d81148bf4291db0c5c6bbdd3a8ad5004c445d249b05124",
    "Hinting Task Test": "fd3a930403c7e0514e8730c48030da17d8bcd8a453e96001ca0795cbaee61afa",
    "Knowledge-Attention Links": "9ea4c7bfc2086d4ebaa2a31cc1993ea2774f72e642d7415dbb9c9c0e21ead94f",
    "Knowledge-Pretend Play Links":
        "67e3d451089db0a3ac4a7702f4c6c58c2909dbe338aa53bda5e00e4cf9396242",
    "Moral Emotions": "fac3eb293d2901b35274eab8244515b7e138e9cb3311037d5c4a0bda3810dd51",
    "Multiple Desires": "7a49186ab802a2a199806ca191160019ae21d9ff85db9203799fb36b8960a914",
    "Percepts-Knowledge Links": "dda5b279b926eef0e0c440cef4ef68cbebbf82fc6c7b109b213c15c2f9d94804",
    "Persuasion Story Task": "aefef5b6beb7097370cf3bc0c6503ed8caa495530297a4b184c4c31002e23169",
    "Prediction of Actions": "23c56589e459d253bafc2cdc0ea786fba1912c8bf388861a96042666f10b8a47",
    "Scalar Implicature Test": "4264d1842f556f8bcfd7fd56c5058aa8c55f6001931d27d253a85d7ecc19247e",
    "Strange Story Task": "f0a1c6e12b9d9b8b5c936ea3383b24100ef28ed6610078c1fc7bd6769d7ef914",
    "Unexpected Outcome Test": "f4ee872c98e17480272c40d5406a8eca31eed29b455f4155b9684328bf6dbf9c",
}


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured, at reader_eval's default cap."""
    item = Item("tombench", "example", "example", EXAMPLE_STORY,
                "Where will Sally look for the ball?", "False Belief Task", "A",
                options=(("A", "basket"), ("B", "box"), ("C", "drawer"), ("D", "bag")),
                extra={"task": "False Belief Task"})
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=48, structured=True)


BENCHMARK = register(Benchmark(
    name="tombench",
    title="ToMBench",
    suites=("main",),
    unit="story",
    data_dir="tombench",
    required=tuple(f"{DATA}/{t}.jsonl" for t in TASKS),
    load=load,
    judge=judge,
    summarize=summarize,
    sources=tuple(Source(url=f"{_RAW}/{DATA}/{t.replace(' ', '%20')}.jsonl",
                         dest=f"{DATA}/{t}.jsonl", sha256=SHA256[t]) for t in TASKS),
    paper="Chen et al., ACL 2024",
    official=OFFICIAL,
    uniform_deviations=UNIFORM_DEVIATIONS,
))
