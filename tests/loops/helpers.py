"""A table-driven system, a pool of items and a group-routing builder for the loop tests."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence

from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.loops.builder import BUILDER_MARKER
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import principle_id
from cogrsi_lib.reader.records import ItemRecord, new_record

Correct = Callable[[str, ReaderItem], bool]


class _Answering:
    def __init__(self, owner: TableSystem, principle: str) -> None:
        self.owner, self.principle, self.name = owner, principle, "table"

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        out = []
        for it in items:
            self.owner.calls.append((self.principle, it.item_id))
            rec = new_record("table", it, principle_id(self.principle))
            gold = it.gold_key()
            labels = list(it.labels or ())
            ans = gold if self.owner.correct(self.principle, it) else next(
                lab for lab in labels if lab != gold)
            rec.answer, rec.answer_text, rec.status = ans, it.option_text(ans), "ok"
            out.append(rec)
        return out


class TableSystem:
    """A PrincipleSystem whose correctness is a function of (principle, item)."""

    def __init__(self, correct: Correct) -> None:
        self.correct = correct
        self.calls: list[tuple[str, str]] = []

    def with_principle(self, principle: str | None) -> _Answering:
        return _Answering(self, principle or "")


def pool(n_stories: int = 120, per_story: int = 2, groups: Sequence[str] = ("g1", "g2", "g3")
         ) -> list[ReaderItem]:
    """Two-option items; the group is in the meta and in the question text."""
    out = []
    for s in range(n_stories):
        for q in range(per_story):
            g = groups[(s + q) % len(groups)]
            out.append(ReaderItem(
                item_id=f"s{s:03d}-q{q}", story_id=f"s{s:03d}",
                context=f"Mia put the coin in box {s}.\nNoah left.", question=f"[{g}] Where {q}?",
                options=("box", "bag"), gold="A", meta={"group": g, "names": ["Mia", "Noah"]}))
    return out


def add_reply(condition: str, rule: str) -> str:
    return json.dumps({"diagnosis": "d", "operation": "add", "entry": None,
                       "condition": condition, "rule": rule})


def group_of(job: Job) -> str | None:
    m = re.search(r"\[(g\d+)\]", prompt_text(job))
    return m.group(1) if m else None


def routing_builder(replies: Mapping[str, str], default: str = "not json") -> ScriptedBackend:
    """Builder backend: the reply for the group of the failures shown."""

    def respond(job: Job) -> str:
        assert BUILDER_MARKER in prompt_text(job)
        return replies.get(group_of(job) or "", default)

    return ScriptedBackend(respond)


def hashed_builder(texts: Sequence[str]) -> ScriptedBackend:
    """Builder backend whose reply depends only on the prompt (so reruns agree)."""

    def respond(job: Job) -> str:
        h = int(hashlib.sha256(prompt_text(job).encode()).hexdigest()[:8], 16)
        return texts[h % len(texts)]

    return ScriptedBackend(respond)
