"""Items and a scripted, prompt-routing responder for the reader and baseline tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.reader import ReaderItem

STORY = (
    "1 Aria entered the front_yard.\n"
    "2 Aiden entered the front_yard.\n"
    "3 The grapefruit is in the green_bucket.\n"
    "4 Aiden exited the front_yard.\n"
    "5 Aria moved the grapefruit to the blue_container."
)
PERCEPTION_OK = "1: Aria\n2: Aria, Aiden\n3: Aria, Aiden\n4: Aria, Aiden\n5: Aria"
PERCEPTION_OK_JSON = (
    '{"1":["Aria"],"2":["Aria","Aiden"],"3":["Aria","Aiden"],"4":["Aria","Aiden"],"5":["Aria"]}'
)


def narrative(item_id: str = "q1", **kw) -> ReaderItem:
    base = dict(
        item_id=item_id,
        context=STORY,
        question="Where will Aiden look for the grapefruit?",
        options=("green_bucket", "blue_container"),
        gold="A",
        story_id="s1",
    )
    base.update(kw)
    return ReaderItem(**base)


CONVERSATION = (
    "Kobe: I just got back from Spain.\n"
    "Richard: Welcome back! How was it?\n"
    "Kobe: Great. I have to go now, bye.\n"
    "Richard: Lina, did you know Kobe adopted a dog there?\n"
    "Lina: No, I did not."
)
CONV_PERCEPTION = "\n".join(
    ["1: Kobe, Richard, Lina", "2: Kobe, Richard, Lina", "3: Kobe, Richard, Lina"]
    + ["4: Richard, Lina", "5: Richard, Lina"]
)
CONV_PERCEPTION_JSON = json.dumps(
    {str(i): ["Kobe", "Richard", "Lina"] for i in (1, 2, 3)}
    | {str(i): ["Richard", "Lina"] for i in (4, 5)}, separators=(",", ":"))


def conversation(item_id: str = "c1", **kw) -> ReaderItem:
    base = dict(
        item_id=item_id,
        context=CONVERSATION,
        question="Does Kobe know that Richard told Lina about the dog?",
        options=("yes", "no"),
        gold="B",
        story_id="conv1",
        kind="conversation",
        character="Kobe",
    )
    base.update(kw)
    return ReaderItem(**base)


_SHORT_ANSWER = re.compile(r"^(?P<why>.*?)\n?Answer: (?P<value>[^\n]+)$", re.S)
_SHORT_LINE = re.compile(r"^(\d+): (.*)$")


def as_reply(job: Job, text: str) -> str:
    """A test's shorthand as the reply its request's format asks for: ``"<why>\nAnswer: X"``
    as the answer or arbitration JSON, ``"1: Aria, Aiden\n2: none"`` as perception JSON
    (keys kept in order, duplicates included). Any other text is returned unchanged, as a
    malformed reply."""
    fmt = job.request.reply
    if fmt is None or fmt.kind != "json":
        return text
    props = list(fmt.schema()["properties"])
    if props[0] == "1":
        lines = [_SHORT_LINE.match(x) for x in text.splitlines()]
        if not lines or not all(lines):
            return text
        parts = []
        for m in lines:
            names = [] if m.group(2).strip() == "none" else [
                n.strip() for n in m.group(2).split(",")]
            parts.append(f'"{m.group(1)}":{json.dumps(names)}')
        return "{" + ",".join(parts) + "}"
    m = _SHORT_ANSWER.match(text)
    if m is None:
        return text
    value: object = m.group("value").strip()
    obj: dict[str, object] = {}
    if "choice" in props:
        obj["reason"] = m.group("why").strip()
        obj["choice"] = int(value) if str(value).isdigit() else value
        return json.dumps(obj)
    if "reasoning" in props:
        obj["reasoning"] = m.group("why").strip()
    obj["answer"] = value
    return json.dumps(obj)


def kind_of(job: Job) -> str:
    """Which call of the reader or a baseline a job is, read from its prompt."""
    t = prompt_text(job)
    if "list the characters who perceived" in t:
        return "perception"
    if "Two candidate answers" in t:
        return "arbitration"
    if "Your job is to output only" in t:
        return "perspective"
    marks = ("[witnessed by:", "[heard by:", "heard this]", "heard of the conversation:")
    if any(m in t for m in marks):
        return "annotated"
    if "past scenes in sequence" in t:
        return "filtered"
    if "Here is what" in t:
        return "perspective_answer"
    return "plain"


@dataclass
class Script:
    """Replies per call kind; lists are indexed by sample index, strings are constant."""

    perception: str | Callable[[Job], str] = PERCEPTION_OK
    annotated: Sequence[str] | str = "Answer: A"
    plain: Sequence[str] | str = "Answer: A"
    arbitration: str = "Answer: 1"
    other: str = "Answer: A"
    seen: list[tuple[str, Job]] = field(default_factory=list)

    def __call__(self, job: Job) -> str:
        k = kind_of(job)
        self.seen.append((k, job))
        val = (
            getattr(self, k, self.other)
            if k in ("perception", "annotated", "plain", "arbitration")
            else self.other
        )
        if callable(val):
            return val(job)
        if isinstance(val, str):
            return as_reply(job, val)
        return as_reply(job, val[job.index])

    def count(self, kind: str) -> int:
        return sum(k == kind for k, _ in self.seen)
