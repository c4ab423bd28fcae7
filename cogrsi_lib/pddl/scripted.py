"""A scripted stand-in for the model in PDDL-Mind's three calls (tests, CI notebook runs).

It is not a model and its numbers say nothing about one; it exists so that every path of the
ladder (parse failures, rejected actions, wrong traces, reasoning errors, answer parsing) runs
for real, in seconds, with real PDDL. For an oracle story it knows the gold problem and
actions and, deterministically per story (a hash of the story and ``seed``), writes:

* call 1: the gold problem, or (share ``p_malformed``) its first half, which does not parse;
  in the no-domain ablation the predefined domain, or (share ``p_bad_domain``) a domain in
  which asleep agents perceive too (the "being in the room is seeing" rule, CogRSI §5.4),
  then the problem;
* call 2: the gold actions, or (share ``p_drop``) the gold actions without the first grab, so
  that its drop is rejected and the trace goes wrong;
* call 3: a *sight-only* answer read off the evidence: for reality, the container of
  ``(in o c)``; for a belief chain, what its last agent last saw (``seen``) or noticed
  (``noticed``) in the final state, ignoring what anyone heard and the rest of the chain; from
  unverified evidence it follows the object through the listed drops and changes instead.

For any other story (benchmark items) calls 1 and 2 are refusals (parse failures) and call 3
names the first option. Table 2's baselines (:mod:`cogrsi_lib.pddl.baselines`) get the first
option too (their prompts have no trace to read), and a DWM state call gets the part's last
line.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from cogrsi_lib.llm.fake import json_reply
from cogrsi_lib.llm.types import Job
from cogrsi_lib.pddl import prompts as P
from cogrsi_lib.pddl.domain import domain_text
from cogrsi_lib.pddl.examples import Example
from cogrsi_lib.pddl.oracle_map import GoldPDDL, pddl_name, value_name

_STORY = re.compile(r"\[story\]\n(.*?)\n\[/story\]", re.S)
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
_OPTION = re.compile(r"^([A-Za-z0-9]{1,3})\. (.*)$", re.M)
_FACT = re.compile(r"\(([a-z][^()]*)\)")


def asleep_perceive(text: str) -> str:
    """The domain with every "awake" condition on perceivers removed."""
    return text.replace(" (not (asleep ?x))", "")


class ScriptedPDDLMind:
    """The responder of a :class:`cogrsi_lib.llm.fake.ScriptedBackend` (see module docstring)."""

    def __init__(self, examples: Sequence[Example], p_malformed: float = 0.15,
                 p_drop: float = 0.2, p_bad_domain: float = 0.3, seed: int = 0):
        self.gold: dict[str, GoldPDDL] = {}
        self.examples: dict[tuple[str, str], Example] = {}
        for ex in examples:
            if ex.gold_pddl is not None:
                self.gold[ex.story] = ex.gold_pddl
            self.examples[(ex.story, ex.question)] = ex
        self.p_malformed, self.p_drop, self.p_bad_domain = p_malformed, p_drop, p_bad_domain
        self.seed = seed

    def _u(self, story: str, what: str) -> float:
        h = hashlib.sha256(f"{self.seed}|{what}|{story}".encode()).hexdigest()
        return int(h[:8], 16) / 0xFFFFFFFF

    def __call__(self, job: Job) -> str:
        prompt = job.request.messages[-1].content
        m = _STORY.search(prompt)
        story = m.group(1) if m else ""
        gold = self.gold.get(story)
        head = prompt.splitlines()[0] if prompt else ""
        if head == P.TASK_ANSWER:
            pick, why = self._answer(prompt, story, gold)
            return json_reply(job, {"reasoning": why, "answer": pick})
        if head == P.TASK_STATE:  # DWM: the last line of the part, as its state
            last = story.strip().splitlines()[-1:] or ["nothing happened"]
            return f"After this part: {last[0]}"
        if gold is None:
            return "I cannot write this story in PDDL."
        if head == P.TASK_PROBLEM:
            return self._problem(gold, story)
        if head == P.TASK_DOMAIN_PROBLEM:
            dom = domain_text(comments=False)
            if self._u(story, "domain") < self.p_bad_domain:
                dom = asleep_perceive(dom)
            return f"{dom}\n\n{self._problem(gold, story)}"
        if head == P.TASK_ACTIONS:
            actions = list(gold.actions)
            if self._u(story, "drop") < self.p_drop:
                grabs = [i for i, a in enumerate(actions) if a.name == "grab"]
                if grabs:
                    del actions[grabs[0]]
            return "\n".join(str(a) for a in actions)
        return "I do not know this task."

    def _problem(self, gold: GoldPDDL, story: str) -> str:
        text = gold.problem_text
        if self._u(story, "malformed") < self.p_malformed:
            return text[: len(text) // 2]
        return text

    def _answer(self, prompt: str, story: str, gold: GoldPDDL | None) -> tuple[str, str]:
        """(the answer, the reasoning) of call 3."""
        qm = _QUESTION.search(prompt)
        ex = self.examples.get((story, qm.group(1) if qm else ""))
        options = _OPTION.findall(prompt.split(P.OPTIONS_HEADER, 1)[-1]) \
            if P.OPTIONS_HEADER in prompt else []
        first = options[0][0] if options else "unknown"
        if ex is None or gold is None or ex.oracle_question is None:
            return first, ""
        pick = self._pick(prompt, ex, gold)
        for label, text in options:
            if pick is not None and pick in (pddl_name(text), value_name(text)):
                return label, f"Reading the evidence, the answer is {text}."
        return first, ""

    def _pick(self, prompt: str, ex: Example, gold: GoldPDDL) -> str | None:
        q = ex.oracle_question
        assert q is not None
        o = gold.obj
        p = gold.prop.get(q.property or "")
        if "Final state:" in prompt:
            final = prompt.split("Final state:", 1)[1].split("\nQuestion:", 1)[0]
            facts = [f.split() for f in _FACT.findall(final)]
            if not q.chain:
                hits = [f[2] for f in facts if f[:2] == ["in", o]] if q.kind == "location" \
                    else [f[3] for f in facts if f[:3] == ["has", o, p]]
            else:
                a = gold.agent[q.chain[-1]]
                hits = [f[3] for f in facts if f[:3] == ["seen", a, o]] \
                    if q.kind == "location" \
                    else [f[4] for f in facts if f[:4] == ["noticed", a, o, p]]
            return hits[0] if hits else None
        if "Parsed actions" in prompt:
            init, acts = prompt.split("Parsed actions", 1)
            where = [f.split() for f in _FACT.findall(init)]
            if q.kind == "location":
                pick = next((f[2] for f in where if f[:2] == ["in", o]), None)
                for f in (f.split() for f in _FACT.findall(acts)):
                    if f[0] == "drop" and len(f) == 5 and f[2] == o:
                        pick = f[3]
                return pick
            pick = next((f[3] for f in where if f[:3] == ["has", o, p]), None)
            for f in (f.split() for f in _FACT.findall(acts)):
                if f[0] == "change" and len(f) == 7 and f[2] == o and f[3] == p:
                    pick = f[5]
            return pick
        return None
