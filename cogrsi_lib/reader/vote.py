"""Vote and arbitration rule of the grounded reader (CogRSI §4.1, Proposition 3, G.6).

Pure functions over parsed sample answers (``None`` is an unparsed sample, which never votes):

- The vote leader is the most frequent answer over all samples; ties go to the answer with
  more annotated votes, then to the one that appeared first (annotated samples before plain).
- Arbitration runs when the two readings' majorities conflict (each reading has a strict
  plurality and they differ), or when the vote splits closely (leader minus runner-up at most
  ``close_margin``; only where close-split arbitration applies, which excludes dialogue
  questions, G.2 Table 23). It picks between two candidates: the two readings' majorities on
  a conflict, else the two leading answers.
- Proposition 3: an answer held by ``supermajority`` (5) or more samples is never overturned:
  arbitration does not run and the leader stands, whatever an arbiter would say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

SUPERMAJORITY = 5
CLOSE_MARGIN = 1


def ranked(annotated: Sequence[str | None], plain: Sequence[str | None]) -> list[tuple[str, int]]:
    """Answers with their vote counts, best first, with the module's tie-break."""
    order: dict[str, int] = {}
    for a in [*annotated, *plain]:
        if a is not None and a not in order:
            order[a] = len(order)
    total = Counter(a for a in [*annotated, *plain] if a is not None)
    ann = Counter(a for a in annotated if a is not None)
    return sorted(total.items(), key=lambda kv: (-kv[1], -ann[kv[0]], order[kv[0]]))


def majority(answers: Sequence[str | None]) -> str | None:
    """The strict plurality of one reading (``None`` on a tie or with no parsed answer)."""
    c = Counter(a for a in answers if a is not None).most_common()
    if not c or (len(c) > 1 and c[0][1] == c[1][1]):
        return None
    return c[0][0]


@dataclass(frozen=True)
class VoteOutcome:
    """The vote and whether (and between what) to arbitrate."""

    counts: tuple[tuple[str, int], ...]
    leader: str | None
    annotated_majority: str | None
    plain_majority: str | None
    arbitrate: bool
    reason: str
    candidates: tuple[str, str] | None = None
    unparsed: int = 0

    @property
    def margin(self) -> int:
        if not self.counts:
            return 0
        second = self.counts[1][1] if len(self.counts) > 1 else 0
        return self.counts[0][1] - second


def decide(
    annotated: Sequence[str | None],
    plain: Sequence[str | None],
    *,
    supermajority: int = SUPERMAJORITY,
    close_margin: int = CLOSE_MARGIN,
    close_split: bool = True,
    conflict: bool = True,
) -> VoteOutcome:
    """Tally the samples and decide whether one arbitration call is needed."""
    counts = ranked(annotated, plain)
    unparsed = sum(a is None for a in [*annotated, *plain])
    a_maj, p_maj = majority(annotated), majority(plain)
    base = {
        "counts": tuple(counts),
        "annotated_majority": a_maj,
        "plain_majority": p_maj,
        "unparsed": unparsed,
    }
    if not counts:
        return VoteOutcome(leader=None, arbitrate=False, reason="no_parsed_sample", **base)
    leader, top = counts[0]
    if top >= supermajority:
        return VoteOutcome(leader=leader, arbitrate=False, reason="supermajority", **base)
    if conflict and a_maj is not None and p_maj is not None and a_maj != p_maj:
        return VoteOutcome(
            leader=leader, arbitrate=True, reason="conflict", candidates=(a_maj, p_maj), **base
        )
    if close_split and len(counts) > 1 and top - counts[1][1] <= close_margin:
        return VoteOutcome(
            leader=leader,
            arbitrate=True,
            reason="close_split",
            candidates=(leader, counts[1][0]),
            **base,
        )
    reason = "unanimous" if len(counts) == 1 else "clear"
    return VoteOutcome(leader=leader, arbitrate=False, reason=reason, **base)


def settle(outcome: VoteOutcome, choice: str | None) -> str | None:
    """The final answer: the arbiter's choice when arbitration ran and the choice is one of the
    two candidates; otherwise the vote leader (an unparsed or off-list choice changes nothing)."""
    if outcome.arbitrate and outcome.candidates and choice in outcome.candidates:
        return choice
    return outcome.leader
