"""A scripted stand-in for the backbone, for tests and dry runs of the loops (no model).

:class:`ScriptedWorld` is a responder for :class:`~cogrsi_lib.llm.fake.ScriptedBackend`.
It recognises each call of the reader and the loops from its prompt and answers:

- perception: the oracle's own perceivers of each line when the item records them;
- answering samples: the gold option with a probability that depends on the question's group,
  the item, and the rules of :data:`BANK` that the principle in the prompt contains (some
  help, some hurt, some do nothing), decided by a hash of the sample's seed, so every
  principle and sample draws its own noise, as a real reader does;
- arbitration: the first candidate;
- the builder: JSON replies built from :data:`BANK` (add, revise, retire, or a rewritten
  principle), with a share of malformed, over-long and story-naming replies;
- GEPA's reflection: a fenced principle built from :data:`BANK`.

Replies take the form each request's reply format declares
(:func:`~cogrsi_lib.llm.fake.json_reply`). Nothing here is a claim about a real model: it
exists so that the engine, the logs, the registration and the reports run end to end in
seconds.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cogrsi_lib.llm.fake import ScriptedBackend, json_reply, prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.loops.builder import BUILDER_MARKER
from cogrsi_lib.reader.items import ReaderItem


@dataclass(frozen=True)
class BankRule:
    """A rule the scripted builder can write and its effect on answer probability by group
    (keys are substrings of a question's group)."""

    condition: str
    rule: str
    effects: Mapping[str, float]

    def text(self) -> str:
        return f"When {self.condition}: {self.rule}"


#: Four entries use the wording of the audit's hand-written rules (``cogrsi_lib.audit``), so
#: an audited arm meets known verdicts: in the room (invalid), absent or asleep during a move
#: (invalid), nothing reached the character (valid), peeked (ambiguous).
BANK: tuple[BankRule, ...] = (
    BankRule("a character was absent or asleep during a move",
             "the character still thinks the object is where it was before that move.",
             {"first-order/false-belief": 0.30, "true-belief": -0.05}),
    BankRule("a character was privately told where the object is",
             "they believe what they were told, true or not, until they see otherwise.",
             {"false-belief": 0.12}),
    BankRule("a question asks what one character thinks another thinks",
             "only count events that both of them perceived together.",
             {"second-order": 0.22}),
    BankRule("a character is in the room",
             "the character knows what happens, so they think the object is where it really "
             "is.", {"true-belief": 0.08, "false-belief": -0.18}),
    BankRule("a property of the object changes",
             "only characters who are present and awake notice the change.",
             {"property/first-order": 0.15}),
    BankRule("the story is long",
             "read every line before answering.", {}),
    BankRule("a character peeked",
             "they know where the object is.", {"location": 0.04}),
    BankRule("several characters are present",
             "prefer the answer most characters would give.", {"second-order": -0.08}),
    BankRule("no move, peek or whisper of the story reached a character, and the object never "
             "lay in an open container",
             "the character still thinks the object is where it started.",
             {"location/first-order/false-belief": 0.20}),
)

LONG_RULE = " ".join(["they keep track of every single event and every single movement"] * 6)


def _u(*parts: object) -> float:
    """A uniform number in [0, 1) from a hash of ``parts``."""
    h = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


_PRINCIPLE = re.compile(r"Principle:\n(.*?)\n\n", re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_NUMBERED = re.compile(r"^\d+\. (.*)$", re.M)


class ScriptedWorld:
    """The responder (see the module docstring). ``items``: every item the reader may see."""

    def __init__(self, items: Iterable[ReaderItem], *, base: float = 0.5, spread: float = 0.5,
                 bad_reply_share: float = 0.25, bank: tuple[BankRule, ...] = BANK) -> None:
        self.by_question: dict[str, list[ReaderItem]] = {}
        self.by_lines: dict[tuple[str, ...], ReaderItem] = {}
        for it in items:
            self.by_question.setdefault(it.question, []).append(it)
            self.by_lines.setdefault(tuple(it.lines()), it)
        self.base, self.spread = base, spread
        self.bad_reply_share = bad_reply_share
        self.bank = bank
        self.calls: dict[str, int] = {}

    # ------------------------------------------------------------ dispatch
    def __call__(self, job: Job) -> str:
        text = prompt_text(job)
        if "list the characters who perceived" in text:
            kind, reply = "perception", self._perception(job, text)
        elif "Two candidate answers" in text:
            kind = "arbitration"
            reply = json_reply(job, {"reason": "The first fits the story.", "choice": 1})
        elif BUILDER_MARKER in text:
            kind, reply = "builder", self._builder(job, text, job.seed)
        elif "I provided an assistant with the following instructions" in text:
            kind, reply = "reflection", self._reflection(job.seed)
        else:
            kind, reply = "answer", self._answer(job, text, job.seed)
        self.calls[kind] = self.calls.get(kind, 0) + 1
        return reply

    def backend(self, model: str = "scripted-world") -> ScriptedBackend:
        return ScriptedBackend(self, model=model)

    # ------------------------------------------------------------- reader
    def _find(self, text: str) -> ReaderItem | None:
        for q in _QUESTION.findall(text):
            for it in self.by_question.get(q.strip(), ()):
                if all(line in text for line in it.lines()):
                    return it
        # perception prompts carry no question, only the numbered lines
        lines = tuple(m.group(1) for m in _NUMBERED.finditer(text))
        return self.by_lines.get(lines)

    def _perception(self, job: Job, text: str) -> str:
        it = self._find(text)
        if it is None:
            return "malformed"
        lines = it.lines()
        per = it.meta.get("perceivers")
        names = [n for n in it.meta.get("names", ()) if re.search(rf"\b{re.escape(n)}\b",
                                                                 it.context)]
        out = {}
        for i, line in enumerate(lines, start=1):
            out[str(i)] = list(per[i - 1]) if per and len(per) == len(lines) else [
                n for n in names if n in line]
        return json_reply(job, out)

    def effect(self, principle: str, group: str) -> float:
        """The summed effect of the bank rules ``principle`` contains on ``group``."""
        total = 0.0
        for b in self.bank:
            if b.rule in principle:
                total += sum(v for k, v in b.effects.items() if k in group)
        return total

    def probability(self, item: ReaderItem, principle: str) -> float:
        group = str(item.meta.get("group", ""))
        p = self.base + self.spread * (_u("item", item.item_id) - 0.5)
        if "true-belief" in group:
            p += 0.2
        p += self.effect(principle, group)
        return min(0.97, max(0.03, p))

    def _answer(self, job: Job, text: str, seed: int) -> str:
        it = self._find(text)
        if it is None or not it.options or it.gold is None:
            return "I am not sure."
        m = _PRINCIPLE.search(text)
        principle = m.group(1) if m else ""
        gold = it.gold_key()
        labels = list(it.labels or ())
        pick = gold
        if _u("sample", seed) >= self.probability(it, principle):
            wrong = [lab for lab in labels if lab != gold]
            pick = wrong[int(_u("wrong", seed) * len(wrong))]
        return json_reply(job, {"reasoning": "Reasoning done.", "answer": pick})

    # ------------------------------------------------------------ builder
    def _pick(self, seed: int, salt: str) -> BankRule:
        return self.bank[int(_u(salt, seed) * len(self.bank))]

    def _builder(self, job: Job, text: str, seed: int) -> str:
        single = "Write a new principle" in text
        r = _u("kind", seed)
        if r < self.bad_reply_share:
            return self._bad_reply(job, text, seed, single)
        if single:
            a, b = self._pick(seed, "p1"), self._pick(seed, "p2")
            body = a.text() if a == b else f"{a.text()} {b.text()}"
            return json_reply(job, {"diagnosis": "The reader ignored who saw what.",
                                    "principle": body})
        entries = len(re.findall(r"^\(\d+\) When ", text, re.M))
        rule = self._pick(seed, "rule")
        op, entry = "add", None
        if entries and (r > 0.85 or entries >= 5):
            op, entry = ("retire" if r > 0.93 else "revise"), 1 + int(_u("e", seed) * entries)
        reply = {"diagnosis": "The reader credited characters with events they missed.",
                 "operation": op, "entry": entry, "condition": rule.condition, "rule": rule.rule}
        if op == "retire":
            reply.update(condition="", rule="")
        return json_reply(job, reply)

    def _bad_reply(self, job: Job, text: str, seed: int, single: bool) -> str:
        kind = int(_u("bad", seed) * 3)
        if kind == 0:
            return "I think the reader should pay more attention to who was in the room."
        name = next(iter(re.findall(r"\b(?!When\b|The\b|Story\b|Question\b|Failure\b|"
                                    r"Options\b|Reply\b|Write\b|Current\b|Propose\b|Each\b)"
                                    r"[A-Z][a-z]{2,}\b", text.split("Failure 1", 1)[-1])),
                    "Nobody")
        rule = LONG_RULE if kind == 1 else f"assume {name} saw everything that happened."
        if single:
            return json_reply(job, {"diagnosis": "Missed events.", "principle": rule})
        return json_reply(job, {"diagnosis": "Missed events.", "operation": "add", "entry": None,
                                "condition": "a character is present", "rule": rule})

    def _reflection(self, seed: int) -> str:
        a, b = self._pick(seed, "g1"), self._pick(seed, "g2")
        body = a.text() if a == b else f"{a.text()}\n{b.text()}"
        return f"Here is a better instruction.\n```\n{body}\n```"
