"""Pair variants and the access facts that tell their two versions apart (CogRSI App. C).

A variant names two *conditions* of one target character, ``a/b`` (``watch/leave``: the
target watches the move in version a and is out of the room in version b).  Each
condition is a short script of oracle events over three roles and three containers:

* roles: ``T`` the target (the character asked about), ``M`` the mover (in a chat, the
  speaker who claims the move), ``R`` who tells the target privately afterwards (the
  mover in a narrative, a third chat member in a conversation);
* containers: ``old`` (where the object starts), ``new`` (where the move puts it) and
  ``other`` (the third container, named only by a lie).

The two scripts of a variant hold the same events wherever they can, so that the versions
differ in one access fact of the target: where the target was during the move
(``at_move``: awake, absent or asleep), what the target was told afterwards (``told``) or
whether the target looked afterwards (``looked``).  ``watch`` is written as "left and came
back *before* the move" against ``leave``'s "left and came back *after* it", so the two
stories tell the same events in another order.  Gold answers never come from here: the
oracle computes them from the events (:mod:`cogrsi_lib.pairs.generate`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from cogrsi_lib.oracle.state import OracleState
from cogrsi_lib.oracle.world import Event, World

FORMS = ("narrative", "dialogue")
KINDS = ("flip", "same")
ACCESS_FACTS = ("at_move", "told", "looked")

Step = tuple[str, ...]
"""One scripted event: ("leave", role), ("enter", role), ("sleep", role), ("wake", role),
("move", role, place), ("whisper", speaker role, listener role, place), ("peek", role)."""

# -- scripts ---------------------------------------------------------------------------------
_MOVE: Step = ("move", "M", "new")
BACK_BEFORE: tuple[Step, ...] = (("leave", "T"), ("enter", "T"), _MOVE)
AWAY: tuple[Step, ...] = (("leave", "T"), _MOVE, ("enter", "T"))
WOKE_BEFORE: tuple[Step, ...] = (("sleep", "T"), ("wake", "T"), _MOVE)
ASLEEP: tuple[Step, ...] = (("sleep", "T"), _MOVE, ("wake", "T"))
TOLD: tuple[Step, ...] = (*AWAY, ("whisper", "R", "T", "new"))
LIED: tuple[Step, ...] = (*AWAY, ("whisper", "R", "T", "other"))
LIED_THEN_LOOK: tuple[Step, ...] = (*LIED, ("peek", "T"))
LOOK: tuple[Step, ...] = (*AWAY, ("peek", "T"))
WATCHED_AND_TOLD: tuple[Step, ...] = (*BACK_BEFORE, ("whisper", "R", "T", "new"))

# Narrative condition -> the same condition in a conversation (Table 9 pools them).
POOLED = {"hear": "watch", "away": "leave", "muted": "asleep", "relayed": "told",
          "misled": "lied"}


@dataclass(frozen=True)
class Condition:
    """One version's access condition: its label and its event script."""

    name: str
    script: tuple[Step, ...]

    @property
    def pooled(self) -> str:
        """The narrative name of this condition (hear -> watch, muted -> asleep, ...)."""
        return POOLED.get(self.name, self.name)


@dataclass(frozen=True)
class Variant:
    """A pair variant: two conditions of the target and the kind the oracle must confirm."""

    form: str
    a: Condition
    b: Condition
    kind: str

    @property
    def name(self) -> str:
        return f"{self.a.name}/{self.b.name}"


def _v(form: str, a: tuple[str, tuple[Step, ...]], b: tuple[str, tuple[Step, ...]],
       kind: str) -> Variant:
    return Variant(form, Condition(*a), Condition(*b), kind)


# CogRSI App. C: narrative flip and same pairs, in the paper's order.
NARRATIVE_VARIANTS: tuple[Variant, ...] = (
    _v("narrative", ("watch", BACK_BEFORE), ("leave", AWAY), "flip"),
    _v("narrative", ("watch", WOKE_BEFORE), ("asleep", ASLEEP), "flip"),
    _v("narrative", ("told", TOLD), ("leave", AWAY), "flip"),
    _v("narrative", ("look", LOOK), ("leave", AWAY), "flip"),
    _v("narrative", ("told", TOLD), ("lied", LIED), "flip"),
    _v("narrative", ("look", LIED_THEN_LOOK), ("lied", LIED), "flip"),
    _v("narrative", ("leave", AWAY), ("asleep", ASLEEP), "same"),
    _v("narrative", ("watch", WATCHED_AND_TOLD), ("told", TOLD), "same"),
)

# CogRSI App. C: dialogue flip and same pairs (a group chat; the move is a speaker's claim).
DIALOGUE_VARIANTS: tuple[Variant, ...] = (
    _v("dialogue", ("hear", BACK_BEFORE), ("away", AWAY), "flip"),
    _v("dialogue", ("hear", WOKE_BEFORE), ("muted", ASLEEP), "flip"),
    _v("dialogue", ("relayed", TOLD), ("away", AWAY), "flip"),
    _v("dialogue", ("relayed", TOLD), ("misled", LIED), "flip"),
    _v("dialogue", ("away", AWAY), ("muted", ASLEEP), "same"),
    _v("dialogue", ("hear", WATCHED_AND_TOLD), ("relayed", TOLD), "same"),
)

VARIANTS: dict[str, tuple[Variant, ...]] = {
    "narrative": NARRATIVE_VARIANTS,
    "dialogue": DIALOGUE_VARIANTS,
}


def variant(form: str, name: str) -> Variant:
    """The variant ``name`` (e.g. ``"watch/leave"``) of ``form``."""
    for v in VARIANTS[form]:
        if v.name == name:
            return v
    raise KeyError(f"no {form} variant {name!r}")


def script_events(script: tuple[Step, ...], roles: dict[str, str],
                  places: dict[str, str]) -> tuple[Event, ...]:
    """The oracle events of ``script`` with roles and places filled in."""
    out = []
    for step in script:
        kind, actor = step[0], roles[step[1]]
        if kind == "move":
            out.append(Event("move", actor, to=places[step[2]]))
        elif kind == "whisper":
            out.append(Event("whisper", actor, listener=roles[step[2]], location=places[step[3]]))
        else:
            out.append(Event(kind, actor))
    return tuple(out)


# -- access facts, read off the oracle's replay ------------------------------------------------
@dataclass(frozen=True)
class AccessFacts:
    """What the target had access to, as the oracle's replay shows it.

    ``at_move``: the target's state during the (only) move: awake, absent or asleep;
    ``saw_move``: the oracle counts the target among the move's perceivers;
    ``told``: the last location whispered to the target after the move (None: none);
    ``looked``: the target peeked into the container after the move.
    """

    at_move: str
    saw_move: bool
    told: str | None
    looked: bool

    def differing(self, other: AccessFacts) -> tuple[str, ...]:
        """The access facts (of :data:`ACCESS_FACTS`) on which two versions differ."""
        return tuple(f for f in ACCESS_FACTS if getattr(self, f) != getattr(other, f))

    def describe(self, target: str, reality: str, form: str = "narrative") -> str:
        """One line, e.g. "Mia was out during the move; then told jar (false); then looked"."""
        where = _WHERE[form][self.at_move]
        parts = [f"{target} {where}"]
        if self.told is not None:
            truth = "true" if self.told == reality else "false"
            parts.append(f"then {_TOLD[form]} {self.told} ({truth})")
        if self.looked:
            parts.append("then looked")
        return "; ".join(parts)


_WHERE = {
    "narrative": {"awake": "was present and awake during the move",
                  "absent": "was out during the move",
                  "asleep": "was asleep in the room during the move"},
    "dialogue": {"awake": "was in the chat and reading when the move was claimed",
                 "absent": "had left the chat when the move was claimed",
                 "asleep": "had muted the chat when the move was claimed"},
}
_TOLD = {"narrative": "told", "dialogue": "privately relayed"}


def access_facts(world: World, target: str) -> AccessFacts:
    """Replay ``world`` with the oracle and read the target's access facts around its move."""
    names = [f.name for f in fields(AccessFacts)]
    moves = [i for i, e in enumerate(world.events) if e.type == "move"]
    if len(moves) != 1:
        raise ValueError(f"a pair world has exactly one move, not {len(moves)}")
    move = moves[0]
    state = OracleState.initial(world, max_depth=1)
    facts: dict[str, object] = {"told": None, "looked": False}
    for i, e in enumerate(world.events):
        if i == move:
            facts["at_move"] = ("absent" if target not in state.present
                                else "asleep" if target in state.asleep else "awake")
        who = state.apply(e, i)
        if i == move:
            facts["saw_move"] = target in who
        elif i > move and e.type == "whisper" and e.listener == target:
            facts["told"] = e.location
        elif i > move and e.type == "peek" and e.actor == target:
            facts["looked"] = True
    return AccessFacts(**{n: facts[n] for n in names})  # type: ignore[arg-type]
