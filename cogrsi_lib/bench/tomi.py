"""ToMi (Le et al., EMNLP 2019): bAbI-style stories, one question per example.

Official format (facebookresearch/ToMi, ``tomi_balanced_story_types/fb_all_<split>.txt`` and
``.trace``): blocks of numbered lines ``N sentence.``, numbering restarting at 1; the last
line is ``N question?<TAB>answer<TAB>supporting id``; the ``.trace`` file has one CSV line
per example whose last two fields are the question type and the story type.  Each story
repeats once per question (6 per story in the test split), so the sampling unit is the
story text.  A test-only benchmark of CogRSI (Table 17).

Scoring: exact match of the answer token (the repo ships no scorer).  A reply is right iff
the only location of the story it names is the gold one (``blue_container`` and "blue
container" are the same token).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from cogrsi_lib.bench.protocol import Deviation
from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, contains_phrase, right

SPLIT_DIR = "tomi_balanced_story_types"
_LINE = re.compile(r"^(\d+) (.*)$")
_LOCATION = re.compile(r"\b(?:in|to|entered|exited) the (\w+)")


def story_key(lines: list[str]) -> str:
    """A stable id for a story's text."""
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()[:12]


def _blocks(path: Path) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each example block."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 1
    with path.open(encoding="utf-8") as f:
        for lineno, raw in enumerate(f, start=1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            match = _LINE.match(line)
            if match is None:
                raise BenchmarkFormatError(path, f"line {lineno}", "expected 'N sentence'")
            if match.group(1) == "1" and current:
                blocks.append((start, current))
                current = []
            if not current:
                start = lineno
            current.append(line)
    if current:
        blocks.append((start, current))
    return blocks


def load_split(root: Path, split: str = "test") -> list[Item]:
    """Load ``fb_all_<split>.txt`` with its ``.trace`` (question and story types)."""
    txt = root / SPLIT_DIR / f"fb_all_{split}.txt"
    trace = root / SPLIT_DIR / f"fb_all_{split}.trace"
    blocks = _blocks(txt)
    traces = [t.strip() for t in trace.read_text(encoding="utf-8").splitlines() if t.strip()]
    if len(traces) != len(blocks):
        raise BenchmarkFormatError(trace, None, f"{len(traces)} trace lines for "
                                                f"{len(blocks)} examples in {txt.name}")
    items: list[Item] = []
    for k, ((lineno, lines), trace_line) in enumerate(zip(blocks, traces, strict=True)):
        record = f"example {k + 1} (line {lineno})"
        fields = lines[-1].split("\t")
        if len(fields) != 3:
            raise BenchmarkFormatError(txt, record, "question line needs 'question<TAB>answer"
                                                    "<TAB>support'")
        question = _LINE.match(fields[0]).group(2)  # type: ignore[union-attr]
        answer = fields[1].strip()
        parts = trace_line.split(",")
        if len(parts) < 3:
            raise BenchmarkFormatError(trace, f"line {k + 1}", "expected events,qtype,storytype")
        story = lines[:-1]
        key = story_key(story)
        items.append(Item(
            benchmark="tomi",
            id=f"tomi/{split}/{k:05d}",
            story_id=f"tomi/{split}/{key}",
            context="\n".join(story),
            question=question,
            question_type=parts[-2],
            gold=answer,
            source=f"{txt.name}:{record}",
            extra={"story_type": parts[-1], "events": parts[:-2], "split": split,
                   "locations": story_locations(story),
                   "choices": _choices(story_locations(story), answer)},
        ))
    return validate_items(items, txt)


def _choices(locations: list[str], answer: str) -> list[str]:
    """The story's locations as the answer set (none when the gold is not among them)."""
    return locations if answer in locations else []


def story_locations(lines: list[str]) -> list[str]:
    """Containers and rooms a ToMi story names (``in/to/entered/exited the X``)."""
    seen: list[str] = []
    for line in lines:
        for loc in _LOCATION.findall(line.lower()):
            if loc not in seen:
                seen.append(loc)
    return seen


def judge(item: Item, response: str) -> Judgement:
    """Right iff the only story location the reply names is the gold token (a name inside a
    longer named one, "pantry" in "blue_pantry", does not count separately)."""
    locations = list(item.extra.get("locations", []))
    if item.gold not in locations:
        locations.append(item.gold)
    named = [loc for loc in locations if contains_phrase(response, loc)]
    # "blue_pantry" also contains the room "pantry": keep only the longest names
    named = [loc for loc in named
             if not any(o != loc and contains_phrase(o, loc) for o in named)]
    parsed = named[0] if len(named) == 1 else None
    return right(parsed, parsed == item.gold)


def load(root: Path) -> list[Item]:
    """The test split (5,994 examples over 999 stories)."""
    return load_split(root, "test")


BENCHMARK = register(Benchmark(
    name="tomi",
    title="ToMi",
    suites=("test_only",),
    unit="story",
    data_dir="tomi",
    required=(f"{SPLIT_DIR}/fb_all_test.txt", f"{SPLIT_DIR}/fb_all_test.trace"),
    load=load,
    judge=judge,
    sources=(Source(
        url="https://github.com/facebookresearch/ToMi/raw/"
            "dea2bca9b366c41cdab0bd717353cc02453e193e/tomi_balanced_story_types.zip",
        dest="tomi_balanced_story_types.zip", extract_to=SPLIT_DIR),),
    paper="Le et al., EMNLP 2019",
    release="facebookresearch/ToMi (no scorer released; the answer token)",
    uniform_deviations=(
        Deviation("answer set", "free-text answer", "asked as a choice among the question's closed "
                  "answer set (item.choices); the chosen text is judged by the release's rule"),
    ),
))
