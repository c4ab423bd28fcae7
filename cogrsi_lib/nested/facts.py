"""What the oracle says about one belief chain, and the two selection facts (plan §5.6).

A location question with chain ``(X1, ..., Xk)`` is an R_k question; R0 asks about
reality.  Two facts are kept apart, never folded into one boolean:

* ``false_belief``: the chain's answer differs from reality;
* ``differs_from_prefixes``: it differs from the answer of every shallower belief
  prefix ``chain[:j]``, ``1 <= j < k``.

A chain is *adversarial* when both hold and *true-belief* when its answer equals
reality; a false belief that echoes a prefix is neither and is never selected, and neither
is a chain with no belief at all (``opening: unknown``): it has no forced-choice answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogrsi_lib.oracle.state import Chain, OracleState, chains, replay
from cogrsi_lib.oracle.world import World

REALITY = "reality"
ADVERSARIAL = "adversarial"
TRUE_BELIEF = "true_belief"
PARTITIONS = (REALITY, ADVERSARIAL, TRUE_BELIEF)


@dataclass(frozen=True)
class ChainFacts:
    """The answer of one chain of one world, its prefixes' answers and its access facts."""

    world: World
    chain: Chain
    answer: str | None
    reality: str
    prefix_answers: tuple[str | None, ...]
    source: int
    via: str

    @property
    def depth(self) -> int:
        return len(self.chain)

    @property
    def false_belief(self) -> bool:
        """Plan §5.6, first half: the answer differs from reality (a held belief only)."""
        return self.answer is not None and self.answer != self.reality

    @property
    def differs_from_prefixes(self) -> bool:
        """Plan §5.6, second half: differs from every shallower belief prefix's answer."""
        return all(self.answer != p for p in self.prefix_answers)

    @property
    def partition(self) -> str | None:
        """REALITY for R0, ADVERSARIAL, TRUE_BELIEF, or None (false but echoes a prefix)."""
        if not self.chain:
            return REALITY
        if self.answer is None or None in self.prefix_answers:
            return None
        if self.false_belief and self.differs_from_prefixes:
            return ADVERSARIAL
        if not self.false_belief:
            return TRUE_BELIEF
        return None


def chain_facts(state: OracleState, chain: Chain) -> ChainFacts:
    """The facts of ``chain`` in a replayed ``state`` (the empty chain is reality)."""
    world = state.world
    reality = state.location
    if not chain:
        moves = [i for i, e in enumerate(world.events[: state.applied]) if e.type == "move"]
        return ChainFacts(world, (), reality, reality, (), moves[-1] if moves else -1, REALITY)
    belief = state.belief(chain, "location")
    prefixes = tuple(_held(state.belief(chain[:j], "location").value)
                     for j in range(1, len(chain)))
    return ChainFacts(world, chain, _held(belief.value), reality, prefixes, belief.source,
                      belief.via)


def _held(value: object) -> str | None:
    return None if value is None else str(value)


def world_facts(world: World, max_depth: int = 4) -> list[ChainFacts]:
    """Facts for reality and every chain up to ``max_depth``, shortest first."""
    state = replay(world, max_depth)
    return [chain_facts(state, c) for c in [(), *chains(world.agents, max_depth)]]
