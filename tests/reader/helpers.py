"""Items and a scripted, prompt-routing responder for the reader and baseline tests."""

from __future__ import annotations

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
            return val
        return val[job.index]

    def count(self, kind: str) -> int:
        return sum(k == kind for k, _ in self.seen)
