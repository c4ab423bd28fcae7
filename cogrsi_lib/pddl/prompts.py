"""The prompts of PDDL-Mind's three LLM calls, as data (PDDL-Mind §3).

Call 1 parses the initial state into a problem file (in the no-domain ablation: writes a
domain, then the problem); call 2 parses the narrative into candidate actions; call 3
answers the question from the verified trace (in the no-verification ablation: from the
parsed initial state and candidate actions, without executed states). Every prompt opens with
a ``Task:`` line naming the call, and wraps the story in ``[story]``/``[/story]``, so that a
scripted backend can tell the calls apart and find the story.
"""

from __future__ import annotations

SYSTEM = (
    "You translate stories into PDDL, the planning domain definition language, and answer "
    "questions about what the people in them saw, heard and believe."
)

TASK_PROBLEM = "Task: problem file."
TASK_DOMAIN_PROBLEM = "Task: domain and problem file."
TASK_ACTIONS = "Task: actions."
TASK_ANSWER = "Task: answer."

#: Conventions of the predefined domain the parser must follow (the oracle's opening state is
#: common ground, the room's outside is a location).
CONVENTIONS = """\
Conventions:
- Names are lower case; use the names of the story (the room, people, containers, objects).
- Anyone who is not in a room is at the location `outside`.
- Containers are objects with (container c) and (at c room); an object inside one: (in o c).
- The opening of the story is common knowledge: for every agent a, every object o in a \
container c, and every property value: (seen a o c) and (noticed a o p v).
- Each whispered or spoken message is an utterance u; write what it claims as (says u o c); \
a private message or whisper is also (private u)."""

PROBLEM = """\
{task}

Here is a PDDL domain:
```pddl
{domain}
```

{conventions}

[story]
{story}
[/story]

Write the PDDL problem file of this story for the domain above: declare every agent, \
location, object (containers too), utterance, property and value in (:objects ...), and write \
the state before the story's first event in (:init ...). Use (:goal (and)). Reply with the \
problem file only."""

DOMAIN_PROBLEM = """\
{task}

[story]
{story}
[/story]

Write a PDDL domain for stories like this one: types, predicates, and actions with \
parameters, preconditions and effects for every kind of event in the story, including who is \
where, who sees what and who hears what. Then write the problem file of this story in your \
domain: its objects and the state before the first event in (:init ...), with (:goal (and)). \
Reply with the domain file, then the problem file."""

ACTIONS = """\
{task}

The PDDL domain:
```pddl
{domain}
```

The problem file of the story:
```pddl
{problem}
```

[story]
{story}
[/story]

List the story's events as ground actions of the domain, in the order they happen, one per \
line, for example (move anne kitchen outside). Use only objects of the problem file. Reply \
with the actions only, one per line."""

ANSWER = """\
{task}

[story]
{story}
[/story]

{evidence}

Question: {question}
{options}
Think step by step, then end with a final line of the form "Answer: <answer>"."""

OPTIONS_HEADER = "Options:"
OPTIONS_INSTRUCTION = "Answer with the letter of one option."

#: How the evidence of call 3 is introduced, per kind of evidence.
EVIDENCE_VERIFIED = """\
Verified state trace: each action below was checked against its preconditions and its effects \
were applied; actions whose preconditions failed were left out.
{trace}"""

EVIDENCE_UNVERIFIED = """\
Parsed initial state (not checked):
{init}

Parsed actions (not executed, not checked):
{actions}"""

EVIDENCE_MISSING = "No state trace: {why}"
