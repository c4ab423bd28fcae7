"""PDDL-Mind Table 2's cost-efficient baselines, on the ladder's examples and records
(PDDL-Mind §4, "PDDL-Mind vs. cost-efficient methods").

- ``cot``: chain of thought, one greedy call: the ladder's answering prompt with the story as
  its only evidence (the same reasoned answer format as call 3).
- ``dwm``: DWM (Huang et al., 2024, discrete world models): the story cut into consecutive
  parts (:data:`DWM_PARTS`, fewer for a shorter story); for each part, one call describes the
  world's state after it, shown the story so far and the earlier descriptions; then the
  answering call is shown the descriptions in order. With three parts that is PDDL-Mind's
  count of four calls per example. The state prompt's wording is this package's (the seed
  does not give DWM's own prompts), and a description is free text, capped by the stage's
  ``state_max_tokens``.

Each is a flow (:mod:`cogrsi_lib.llm.flow`) over the ladder's :class:`~cogrsi_lib.pddl.ladder`
run record, so its rows land in the ladder's table with ``system`` naming the baseline, no
parsed PDDL and no trace (their failure class is ``unverified``).
"""

from __future__ import annotations

from collections.abc import Sequence

from cogrsi_lib.pddl import prompts as P

#: Table 2's baselines, in its column order before PDDL-Mind
BASELINES = ("cot", "dwm")
#: how many parts DWM cuts a story into (its calls: one per part, then the answer)
DWM_PARTS = 3


def parts(story: str, n: int = DWM_PARTS) -> list[str]:
    """The story's lines in at most ``n`` consecutive, nearly equal parts (none empty)."""
    lines = [line for line in story.splitlines() if line.strip()]
    k = max(1, min(n, len(lines)))
    size, extra = divmod(len(lines), k)
    out, start = [], 0
    for i in range(k):
        end = start + size + (i < extra)
        out.append("\n".join(lines[start:end]))
        start = end
    return out


def state_prompt(story_so_far: str, states: Sequence[str], words: int) -> str:
    """DWM's call for the state after the last part shown."""
    earlier = (P.STATE_EARLIER.format(states=numbered(states)) if states
               else P.STATE_FIRST)
    return P.STATE.format(task=P.TASK_STATE, story=story_so_far, earlier=earlier, words=words)


def numbered(states: Sequence[str]) -> str:
    return "\n".join(f"After part {i}: {s.strip() or '(no description)'}"
                     for i, s in enumerate(states, 1))


def states_evidence(states: Sequence[str]) -> str:
    """What DWM's answering call is shown besides the story and the question."""
    return P.EVIDENCE_STATES.format(states=numbered(states))
