"""A scripted "model" with known behaviour, to show the scorecard's machinery (plan §3).

It is a responder for :class:`cogrsi_lib.llm.ScriptedBackend`: it recognises each prompt
of this package (bare, recursive-perspective, epistemic store, the reader's answer format,
prediction prompts), finds the registered item the prompt is about, and answers with a
policy whose effect on every metric is known in advance.  Nothing here is a measurement
of a real model; it exists so that tests and the CI notebook can check that each metric,
gate and curve reports what the policy implies.

Policies:

* belief and behaviour questions (Suites A-B): a :class:`Skill` per prompt kind.  The
  skill answers the oracle's belief of the chain cut to ``depth_limit`` agents (H2, depth
  collapse), answers reality on every ``leak_period``-th false-belief item (H1, leakage)
  and on every ``gap_period``-th behaviour question (H5, knowing-doing gap); items are
  picked by a stable hash of their id.  Under the store prompt it writes the oracle's
  entries for the chains up to ``depth_limit`` with their source lines, and nothing deeper.
* strategic questions (Suite C): normative and equilibrium questions are answered right;
  predictive ones with the answer named by ``strategic_prediction`` (default the
  equilibrium's: H6, rationality projection).
* tasks (Suite D): asked directly, it answers its preferred option per task class (every
  ``noise_period``-th task the next one); asked to predict, it answers the most frequent of
  the last ``window`` observed answers (ties: the most recent), or its own preference when
  there are none.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cogrsi_lib.llm.fake import ScriptedBackend, json_reply, prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.nested.heuristics import oracle_answer
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.nested.reply import ANSWER_FORMAT
from cogrsi_lib.oracle.render import render
from cogrsi_lib.oracle.state import Chain, replay
from cogrsi_lib.oracle.world import World
from cogrsi_lib.reader.prompts import DIRECT, REASONED
from cogrsi_lib.scorecard import perspective, store_system
from cogrsi_lib.scorecard.answers import NUMBER_FORMAT
from cogrsi_lib.scorecard.applied import AppliedItem
from cogrsi_lib.scorecard.selfpred import (
    PREDICT_MARKER,
    Task,
    observed_answers,
    predicted_task_text,
)
from cogrsi_lib.scorecard.strategic import StrategicItem

#: the reader's answering prompts (the baselines of the scorecard use them)
READER_FAMILIES = (REASONED, DIRECT)
_OPTION = re.compile(r"^([A-Z])\. (.+)$", re.M)
UNSURE = "I am not sure."


def stable_hash(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


@dataclass(frozen=True)
class Skill:
    """How the scripted model answers belief questions under one prompt."""

    depth_limit: int = 4
    leak_period: int = 0
    gap_period: int = 0
    confidence: float = 0.8

    def answer(self, case: ToMCase) -> tuple[str, float]:
        """The answer and its confidence (lower past the depth limit)."""
        ans = oracle_answer(case.world, case.chain[:self.depth_limit])
        reality = oracle_answer(case.world, ())
        false_belief = oracle_answer(case.world, case.chain) != reality
        if self.leak_period and false_belief and stable_hash(case.base_id) % self.leak_period == 0:
            ans = reality
        if (self.gap_period and case.behaviour
                and stable_hash(case.base_id, "gap") % self.gap_period == 0):
            ans = reality
        conf = self.confidence if len(case.chain) <= self.depth_limit else self.confidence - 0.2
        return ans, round(max(conf, 0.05), 4)


DEFAULT_SKILLS: dict[str, Skill] = {
    "bare": Skill(depth_limit=2, leak_period=4, gap_period=3, confidence=0.7),
    "perspective": Skill(depth_limit=3, leak_period=8, confidence=0.75),
    "store": Skill(depth_limit=4, confidence=0.9),
}


@dataclass(frozen=True)
class ToMCase:
    """A registered belief or behaviour question."""

    base_id: str
    world: World
    chain: Chain
    behaviour: bool = False


def source_line(world: World, event: int) -> int:
    """The story line (1-based) that tells ``event``; the opening location line for -1."""
    lines = render(world).lines
    if event < 0:
        opening = f"The {world.object} is in the {world.location}."
        return next(i for i, ln in enumerate(lines, 1) if ln.event is None
                    and ln.text.endswith(opening))
    return next(i for i, ln in enumerate(lines, 1) if ln.event == event)


@dataclass
class ScriptedModel:
    """The responder; register items, then use :meth:`backend`."""

    name: str = "scripted"
    skills: Mapping[str, Skill] = field(default_factory=lambda: dict(DEFAULT_SKILLS))
    strategic_prediction: str = "equilibrium"
    preferences: Mapping[str, int] = field(
        default_factory=lambda: {"colour": 0, "number": 1, "place": 2})
    noise_period: int = 0
    window: int = 10
    _cases: dict[str, list[tuple[str, object]]] = field(default_factory=dict, repr=False)

    def backend(self) -> ScriptedBackend:
        return ScriptedBackend(self, model=self.name)

    def skill(self, prompt: str) -> Skill:
        """The skill under ``prompt`` (bare, perspective, store); the bare one if not set."""
        return self.skills.get(prompt, self.skills["bare"])

    # -- registry ---------------------------------------------------------------------
    def _add(self, context: str, question: str, case: object) -> None:
        self._cases.setdefault(question, []).append((context, case))

    def add_nested(self, items: Iterable[NestedItem]) -> ScriptedModel:
        for it in items:
            self._add(it.story, it.question, ToMCase(it.id, it.world, it.chain))
        return self

    def add_applied(self, items: Iterable[AppliedItem]) -> ScriptedModel:
        for it in items:
            b = it.belief
            self._add(b.story, it.behaviour_question, ToMCase(b.id, b.world, b.chain, True))
        return self

    def add_strategic(self, items: Iterable[StrategicItem]) -> ScriptedModel:
        for it in items:
            self._add(it.context, it.question, it)
        return self

    def add_tasks(self, tasks: Iterable[Task]) -> ScriptedModel:
        for t in tasks:
            self._add(t.context, t.question, t)
        return self

    def find(self, text: str) -> object | None:
        """The registered item whose context and question both occur in ``text``."""
        best, size = None, -1
        for question, cases in self._cases.items():
            if question not in text:
                continue
            for context, case in cases:
                if context in text and len(context) + len(question) > size:
                    best, size = case, len(context) + len(question)
        return best

    # -- replies ----------------------------------------------------------------------
    def __call__(self, job: Job) -> str:
        text = prompt_text(job)
        kind = "reader" if job.request.family in READER_FAMILIES else prompt_kind(text)
        # a prediction prompt lists earlier tasks too: look only at the one to predict
        case = self.find(predicted_task_text(text) if kind == "predict" else text)
        if case is None or kind is None:
            return UNSURE
        if isinstance(case, ToMCase):
            return self._tom(case, kind, job)
        if isinstance(case, StrategicItem):
            return self._strategic(case, kind, job)
        if isinstance(case, Task):
            return self._task(case, kind, text, job)
        return UNSURE

    def _tom(self, case: ToMCase, kind: str, job: Job) -> str:
        if kind == "perspective":
            skill = self.skill("perspective")
            ans, conf = skill.answer(case)
            lines = [f"WORLD: {oracle_answer(case.world, ())}"]
            for agent in dict.fromkeys(case.chain):
                lines.append(f"{perspective.slot_key(agent)}_OBSERVED: "
                             f"{oracle_answer(case.world, (agent,))}")
            for k in range(2, len(case.chain) + 1):
                name = "_MODEL_OF_".join(perspective.slot_key(a) for a in case.chain[:k])
                held = oracle_answer(case.world, case.chain[:k][:skill.depth_limit])
                lines.append(f"{name}: {held}")
            return "\n".join([*lines, f"ANSWER: {ans}", f"CONFIDENCE: {conf}"])
        if kind == "store":
            return self._store(case)
        ans, conf = self.skill("bare").answer(case)
        return _format(job, kind, ans, conf)

    def _store(self, case: ToMCase) -> str:
        skill = self.skill("store")
        state = replay(case.world, max(len(case.chain), 1))
        entries = []
        for k in range(1, min(len(case.chain), skill.depth_limit) + 1):
            belief = state.belief(case.chain[:k], "location")
            entries.append({"subject": list(case.chain[:k]), "location": str(belief.value),
                            "confidence": skill.confidence,
                            "source": source_line(case.world, belief.source)})
        own, conf = self.skill("bare").answer(case)
        return json.dumps({"entries": entries, "answer": own, "confidence": conf})

    def _strategic(self, item: StrategicItem, kind: str, job: Job) -> str:
        if item.kind == "predictive":
            return _format(job, kind, item.baseline(self.strategic_prediction), 0.6,
                           numeric=item.options is None)
        return _format(job, kind, item.gold, 0.9, numeric=item.options is None)

    def preferred(self, task: Task) -> str:
        pref = self.preferences.get(task.task_class, 0)
        if self.noise_period and stable_hash(self.name, task.id) % self.noise_period == 0:
            pref += 1
        return task.options[pref % len(task.options)]

    def _task(self, task: Task, kind: str, text: str, job: Job) -> str:
        if kind != "predict":
            return _format(job, kind, self.preferred(task), 0.5)
        seen = [a for a in observed_answers(text) if a in task.options][-self.window:]
        if not seen:
            return _format(job, "direct", self.preferred(task), 0.5)
        counts = Counter(seen)
        top = max(counts.values())
        guess = next(a for a in reversed(seen) if counts[a] == top)
        return _format(job, "direct", guess, round(top / len(seen), 4))


def prompt_kind(text: str) -> str | None:
    """Which of this package's prompts ``text`` is (None: not one of them)."""
    if PREDICT_MARKER in text:
        return "predict"
    if perspective.MARKER in text:
        return "perspective"
    if "Reply with exactly these two lines" in text and "ANSWER:" in text:
        return "perspective_no_state"
    if store_system.MARKER in text:
        return "store"
    if ANSWER_FORMAT in text or NUMBER_FORMAT in text:
        return "direct"
    return None


def _format(job: Job, kind: str, answer: str, confidence: float, numeric: bool = False) -> str:
    if kind == "perspective_no_state":
        return f"ANSWER: {answer}\nCONFIDENCE: {confidence}"
    if kind == "reader":  # the reader's prompts answer by the option's label
        labels = {text: lab for lab, text in _OPTION.findall(prompt_text(job))}
        return json_reply(job, {"reasoning": "Scripted.", "answer": labels.get(answer, answer)})
    value: object = answer
    if numeric:
        x = float(answer)
        value = int(x) if x.is_integer() else x
    return json.dumps({"answer": value, "confidence": confidence})

