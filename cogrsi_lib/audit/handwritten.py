"""Hand-written rules with known verdicts and two fixed translations each (CogRSI App. C, J105).

The paper fixed its sandbox, compile instructions and counterexample criterion on three
hand-written rules before the freeze.  These rules play that part here: the tests, the
stage's CI default and the speed benchmark audit them with a scripted translator backend
that returns the fixed code below (translator ``A`` and ``B`` read each rule a little
differently, as two models would).  ``expected`` is the verdict the oracle must give.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.llm.types import Job


@dataclass(frozen=True)
class HandwrittenRule:
    rule_id: str
    text: str
    expected: str
    code_a: str
    code_b: str
    note: str = ""

    def code(self, role: str) -> str:
        return self.code_a if role == "A" else self.code_b


IN_ROOM = HandwrittenRule(
    rule_id="in_room",
    text="When a character is in the room: the character knows what happens, so they think "
    "the object is where it really is.",
    expected="invalid",
    note="Being in the room is not seeing: asleep characters and lies break it (§1, §5.4).",
    code_a='''
def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    moves = [e for e in world.events if e.type == "move"]
    return all(q.chain[0] in world.present_at(e.index) for e in moves)


def predict(world, q):
    return world.location_at(len(world.events))
''',
    code_b='''
def applies(world, q):
    if q.kind != "location" or len(q.chain) != 1:
        return False
    last_move = None
    for e in world.events:
        if e.type == "move":
            last_move = e.index
    step = last_move if last_move is not None else len(world.events)
    return q.chain[0] in world.present_at(step)


def predict(world, q):
    return world.location_at(-1)
''',
)

NOTHING_REACHED = HandwrittenRule(
    rule_id="nothing_reached",
    text="When no move, peek or whisper of the story reached a character, and the object never "
    "lay in an open container: the character still thinks the object is where it started.",
    expected="valid",
    note="Correct in the access model (SEMANTICS.md v2): nothing reached the character, and "
    "no view of the object could have.",
    code_a='''
def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    a = q.chain[0]
    for e in world.events:
        if e.type in ("move", "peek", "whisper") and a in e.perceivers:
            return False
    steps = range(len(world.events) + 1)
    return all(world.location_at(i) not in world.open_containers for i in steps)


def predict(world, q):
    return world.initial_location
''',
    code_b='''
from typing import Any

KINDS = {"move", "peek", "whisper"}


def reached(world: Any, a: str) -> bool:
    return any(a in e.perceivers for e in world.events if e.type in KINDS)


def ever_in_view(world: Any) -> bool:
    return any(world.location_at(i) in world.open_containers
               for i in range(-len(world.events) - 1, 0))


def applies(world, q) -> bool:
    if q.kind != "location" or len(q.chain) != 1:
        return False
    return not reached(world, q.chain[0]) and not ever_in_view(world)


def predict(world, q) -> str:
    return world.location_at(0) if world.events else world.initial_location
''',
)

MISSED_MOVE = HandwrittenRule(
    rule_id="missed_move",
    text="When a character was absent or asleep during a move: the character still thinks the "
    "object is where it was before that move.",
    expected="invalid",
    note="Loose wording of the correct rule: a later peek or whisper, or a second missed "
    "move, gives a counterexample.",
    code_a='''
def missed(world, a):
    out = []
    for e in world.events:
        if e.type == "move":
            i = e.index
            if a not in world.present_at(i) or a in world.asleep_at(i):
                out.append(e)
    return out


def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    return bool(missed(world, q.chain[0]))


def predict(world, q):
    return missed(world, q.chain[0])[-1].origin
''',
    code_b='''
def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    a = q.chain[0]
    return any(a not in e.perceivers for e in world.events if e.type == "move")


def predict(world, q):
    a = q.chain[0]
    moves = [e for e in world.events if e.type == "move"]
    missed = [e for e in moves if a not in e.perceivers]
    return missed[-1].origin
''',
)

BOX_D = HandwrittenRule(
    rule_id="box_d",
    text="When a question asks whether A believes B knows the resulting state, and B was "
    "present when the event occurred: assume A believes B knows it.",
    expected="invalid",
    note="The kept rule of Box D (§5.4): B asleep in the room is a shared counterexample.",
    code_a='''
def applies(world, q):
    if q.kind != "location" or q.depth != 2:
        return False
    moves = [e for e in world.events if e.type == "move"]
    if not moves:
        return False
    return q.chain[1] in world.present_at(moves[-1].index)


def predict(world, q):
    return world.location_at(len(world.events))
''',
    code_b='''
def applies(world, q):
    if q.depth != 2 or q.kind != "location":
        return False
    b = q.chain[1]
    last = [e.index for e in world.events if e.type == "move"]
    return bool(last) and b in world.present_at(last[-1])


def predict(world, q):
    moves = [e for e in world.events if e.type == "move"]
    return moves[-1].to
''',
)

NEVER = HandwrittenRule(
    rule_id="asleep_outside",
    text="When a character is asleep while outside the room: the character thinks the object "
    "is in the first container.",
    expected="vacuous",
    note="Asleep implies present, so the condition never holds.",
    code_a='''
def applies(world, q):
    if q.depth != 1:
        return False
    a = q.chain[0]
    steps = range(len(world.events) + 1)
    return any(a in world.asleep_at(i) and a not in world.present_at(i)
               for i in steps)


def predict(world, q):
    return world.containers[0]
''',
    code_b='''
def applies(world, q):
    if len(q.chain) != 1:
        return False
    for i in range(len(world.events) + 1):
        if q.chain[0] in (world.asleep_at(i) - world.present_at(i)):
            return True
    return False


def predict(world, q):
    return q.candidates[0]
''',
)

DISTRACTED = HandwrittenRule(
    rule_id="distracted",
    text="When a character is distracted whenever something happens to the object: they keep "
    "believing it is where it started.",
    expected="ambiguous",
    note="'Distracted' is read as asleep by A and as absent by B: the readings rarely overlap.",
    code_a='''
def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    events = [e for e in world.events if e.type in ("move", "peek", "whisper")]
    return all(q.chain[0] in world.asleep_at(e.index) for e in events)


def predict(world, q):
    return world.initial_location
''',
    code_b='''
def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    events = [e for e in world.events if e.type in ("move", "peek", "whisper")]
    return all(q.chain[0] not in world.present_at(e.index) for e in events)


def predict(world, q):
    return world.initial_location
''',
)

SANDBOX_PROBE = HandwrittenRule(
    rule_id="sandbox_probe",
    text="When a character peeked: they know where the object is.",
    expected="ambiguous",
    note="Translation B tries to read a file; the sandbox records it and the rule is undecided.",
    code_a='''
def applies(world, q):
    return q.kind == "location" and q.depth == 1 and any(
        e.type == "peek" and e.actor == q.chain[0] for e in world.events)


def predict(world, q):
    return world.location_at(len(world.events))
''',
    code_b='''
SECRET = open("/etc/hostname").read()


def applies(world, q):
    return True


def predict(world, q):
    return SECRET
''',
)

RULES: tuple[HandwrittenRule, ...] = (
    IN_ROOM, NOTHING_REACHED, MISSED_MOVE, BOX_D, NEVER, DISTRACTED, SANDBOX_PROBE,
)  # fmt: skip
BY_ID = {r.rule_id: r for r in RULES}

NO_TRANSLATION = "I cannot translate this rule."


def fenced(code: str) -> str:
    """Code as a translation reply: one python block and nothing else."""
    return f"```python\n{code.strip()}\n```"


def scripted_translator(role: str, rules: Sequence[HandwrittenRule] = RULES,
                        extra: dict[str, str] | None = None) -> ScriptedBackend:
    """A backend that answers a translation prompt with the fixed code of ``role`` for the
    rule whose text it contains (``extra``: more ``text -> reply`` pairs, e.g. in tests)."""
    replies = {r.text: fenced(r.code(role)) for r in rules} | dict(extra or {})

    def respond(job: Job) -> str:
        prompt = prompt_text(job)
        matches = [t for t in replies if f"Rule:\n{t}\n" in prompt]
        return replies[max(matches, key=len)] if matches else NO_TRANSLATION

    return ScriptedBackend(respond, model=f"scripted-translator-{role}")
