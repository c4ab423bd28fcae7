"""Small hand-written PDDL problems of the predefined domain for the tests."""

from __future__ import annotations

from cogrsi_lib.pddl.domain import predefined_domain
from cogrsi_lib.pddl.parse import GroundAction, parse_problem_text
from cogrsi_lib.pddl.problem import Task

# Anne and Sally in the kitchen, Bob asleep there; the marble in the basket; a box and an open
# tray; the marble is red (a visible colour); one public and one private utterance.
KITCHEN = """\
(define (problem kitchen)
  (:domain pddl-mind)
  (:objects
    anne sally bob - agent
    kitchen outside - loc
    marble basket box tray - obj
    u1 u2 - utterance
    color - prop
    red blue - value)
  (:init
    (at anne kitchen) (at sally kitchen) (at bob kitchen) (asleep bob)
    (container basket) (container box) (container tray) (opened tray)
    (at basket kitchen) (at box kitchen) (at tray kitchen)
    (in marble basket)
    (seen anne marble basket) (seen sally marble basket) (seen bob marble basket)
    (has marble color red) (visible color)
    (noticed anne marble color red) (noticed sally marble color red)
    (noticed bob marble color red)
    (says u1 marble box) (says u2 marble tray) (private u2))
  (:goal (and)))
"""


def kitchen() -> Task:
    task = parse_problem_text(KITCHEN, predefined_domain())
    assert isinstance(task, Task), task
    assert task.issues == ()
    return task


def acts(*lines: str) -> list[GroundAction]:
    """Actions written as ``"move anne kitchen outside"``."""
    out = []
    for line in lines:
        name, *args = line.split()
        out.append(GroundAction(name, tuple(args)))
    return out


def holds(state: frozenset, text: str) -> bool:
    return tuple(text.strip("()").split()) in state
