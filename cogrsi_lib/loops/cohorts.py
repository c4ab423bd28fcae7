"""Cohort sampling by story (CogRSI App. C.2).

"Every cohort takes one question from each of a set of unused stories ... once every story
has been used, a new pass reshuffles the stories and takes from each a question not used
before." A :class:`CohortSampler` walks a seeded permutation of the stories, taking from each
the next of its questions (in a seeded order) that no cohort has used; a question is never
used twice, and no cohort holds two questions of one story. Its state is plain JSON, so a
loop saved after round r resumes with exactly the draws an uninterrupted run makes.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from cogrsi_lib.reader.items import ReaderItem


class PoolExhausted(RuntimeError):
    """The development pool cannot fill a cohort (too few stories with unused questions)."""


class CohortSampler:
    """Draw cohorts of questions, one per story, never reusing a question."""

    def __init__(self, items: Sequence[ReaderItem], seed: int) -> None:
        self.seed = seed
        self.items = {it.item_id: it for it in items}
        if len(self.items) != len(items):
            raise ValueError("item ids must be unique")
        by_story: dict[str, list[str]] = {}
        for it in items:
            by_story.setdefault(it.story, []).append(it.item_id)
        self.questions: dict[str, list[str]] = {}
        for story in sorted(by_story):
            ids = sorted(by_story[story])
            random.Random(f"cogrsi-cohorts/{seed}/story/{story}").shuffle(ids)
            self.questions[story] = ids
        self.next_q: dict[str, int] = {s: 0 for s in self.questions}
        self.pass_no = 0
        self.order: list[str] = []
        self.pos = 0
        self.drawn = 0
        self._new_pass(first=True)

    def _remaining(self, story: str) -> int:
        return len(self.questions[story]) - self.next_q[story]

    def _new_pass(self, first: bool = False) -> None:
        if not first:
            self.pass_no += 1
        order = [s for s in sorted(self.questions) if self._remaining(s) > 0]
        random.Random(f"cogrsi-cohorts/{self.seed}/pass/{self.pass_no}").shuffle(order)
        self.order, self.pos = order, 0

    def draw(self, n: int) -> list[ReaderItem]:
        """The next cohort of ``n`` questions from ``n`` different stories.

        A story whose turn comes while it is already in the cohort is skipped in this pass
        (it has questions left, so the next pass includes it again)."""
        out: list[str] = []
        in_cohort: set[str] = set()
        while len(out) < n:
            if self.pos >= len(self.order):
                self._new_pass()
                if not [s for s in self.order if s not in in_cohort]:
                    raise PoolExhausted(
                        f"a cohort of {n} needs {n} stories with unused questions; "
                        f"{len(out)} found after {self.drawn} draws")
            story = self.order[self.pos]
            self.pos += 1
            if self._remaining(story) <= 0 or story in in_cohort:
                continue
            qid = self.questions[story][self.next_q[story]]
            self.next_q[story] += 1
            in_cohort.add(story)
            out.append(qid)
        self.drawn += len(out)
        return [self.items[q] for q in out]

    def state(self) -> dict[str, Any]:
        """Plain JSON state (the pool itself is not stored, only how far it was used)."""
        return {"seed": self.seed, "pass_no": self.pass_no, "order": list(self.order),
                "pos": self.pos, "drawn": self.drawn,
                "next_q": {s: k for s, k in self.next_q.items() if k}}

    def restore(self, state: Mapping[str, Any]) -> None:
        """Continue from a saved :meth:`state` over the same pool."""
        if int(state["seed"]) != self.seed:
            raise ValueError(f"state of seed {state['seed']}, sampler of seed {self.seed}")
        unknown = set(state["next_q"]) - set(self.questions) | (
            set(state["order"]) - set(self.questions))
        if unknown:
            raise ValueError(f"state names stories not in the pool: {sorted(unknown)[:3]}")
        self.pass_no = int(state["pass_no"])
        self.order = list(state["order"])
        self.pos = int(state["pos"])
        self.drawn = int(state["drawn"])
        self.next_q = {s: int(state["next_q"].get(s, 0)) for s in self.questions}


def schedule(items: Sequence[ReaderItem], seed: int, rounds: int, discovery: int, trial: int,
             n_trials: int, final: int) -> dict[str, Any]:
    """Every cohort a loop of ``rounds`` rounds draws, then its final cohort (shared by every
    arm of a seed: the draws do not depend on what a loop admits)."""
    s = CohortSampler(items, seed)
    out: dict[str, Any] = {"rounds": []}
    for _ in range(rounds):
        out["rounds"].append({"discovery": s.draw(discovery),
                              "trials": [s.draw(trial) for _ in range(n_trials)]})
    out["final"] = s.draw(final)
    return out
