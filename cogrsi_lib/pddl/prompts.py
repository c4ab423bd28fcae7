"""The prompts of PDDL-Mind's three LLM calls and their reply formats (PDDL-Mind §3).

Call 1 parses the initial state into a problem file (in the no-domain ablation: writes a
domain, then the problem); call 2 parses the narrative into candidate actions; call 3
answers the question from the verified trace (in the no-verification ablation: from the
parsed initial state and candidate actions, without executed states). Every prompt opens with
a ``Task:`` line naming the call, and wraps the story in ``[story]``/``[/story]``, so that a
scripted backend can tell the calls apart and find the story.

Each call's reply is declared beside its prompt:

- ``pddl.problem``: a regular expression of a problem file for the given domain, laid out as
  :data:`PROBLEM_LAYOUT` shows, every ``(:init ...)`` fact a predicate of the domain with its
  arity and every object of a type of the domain (which facts and objects is the model's);
- ``pddl.actions``: one ground action of the domain per line, each with its arity;
- ``pddl.domain_problem`` (no-domain ablation): a domain, a blank line and a problem, each one
  balanced s-expression (nested at most :data:`MAX_NESTING` deep): the form only, since the
  point of the ablation is that the model writes the domain;
- ``pddl.answer``: the reader's reasoned JSON answer (an option label, or free text).

The PDDL itself is then read strictly by the ``pddl`` package (:mod:`cogrsi_lib.pddl.parse`).
"""

from __future__ import annotations

from cogrsi_lib.llm.families import prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.pddl.domain import CompiledDomain

SYSTEM = (
    "You translate stories into PDDL, the planning domain definition language, and answer "
    "questions about what the people in them saw, heard and believe."
)

TASK_PROBLEM = "Task: problem file."
TASK_DOMAIN_PROBLEM = "Task: domain and problem file."
TASK_ACTIONS = "Task: actions."
TASK_ANSWER = "Task: answer."
TASK_STATE = "Task: state."

#: Conventions of the predefined domain every parsing prompt states.
COMMON_CONVENTIONS = """\
- Names are lower case; use the names of the story (places, people, containers, objects).
- Containers are objects with (container c) and (at c place); an object inside one: (in o c).
- An object can be taken out of (grab) or put into (drop) a container only while it is open \
(opened c): write (open ...) first unless the story says it is open, and (close ...) when the \
story closes it.
- Each spoken or whispered message is an utterance u; write what it claims as (says u o c); \
a private message or whisper is also (private u)."""

#: What each source's stories take for granted (the oracle's opening state is common ground and
#: its room's outside is a location; a benchmark's stories say who saw what themselves).
SOURCE_CONVENTIONS = {
    "oracle": """\
- The story happens in one room; anyone who is not in it is at the location `outside`.
- The opening of the story is common knowledge: for every agent a, every object o in a \
container c, and every property value: (seen a o c) and (noticed a o p v).""",
    "mmtom-qa": """\
- One person moves through the rooms of a home; each room is a location, and cabinets, \
fridges, tables and the like are containers in their room.
- Write (seen a o c) only where the story says the person saw or found o in c before its \
first event; nothing else is known at the start.""",
    "muma-tom": """\
- Several people act in the rooms of a home and talk; each room is a location, furniture and \
appliances are containers in their room, and what one says to another is an utterance (tell).
- Write (seen a o c) only where the story says a saw o in c before its first event.""",
    "fantom": """\
- The story is a conversation: it happens at the location `conversation`; someone who has \
left it, or not yet joined, is at the location `away`; joining and leaving are move actions.
- Every line someone says is an utterance told to the others present (tell); nobody has seen \
or heard anything at the start.""",
}
#: for a source without its own entry: assume nothing beyond what the story says
DEFAULT_CONVENTIONS = """\
- Places in the story are locations; write (seen a o c) only where the story says a saw o \
in c before its first event."""


def conventions(source: str) -> str:
    """The conventions block of the parsing prompts for stories of ``source``."""
    extra = SOURCE_CONVENTIONS.get(source, DEFAULT_CONVENTIONS)
    return f"Conventions:\n{COMMON_CONVENTIONS}\n{extra}"


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
the state before the story's first event in (:init ...). Use (:goal (and)). {reply}"""

DOMAIN_PROBLEM = """\
{task}

[story]
{story}
[/story]

Write a PDDL domain for stories like this one: types, predicates, and actions with \
parameters, preconditions and effects for every kind of event in the story, including who is \
where, who sees what and who hears what. Then write the problem file of this story in your \
domain: its objects and the state before the first event in (:init ...), with (:goal (and)). \
{reply}"""

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

{conventions}

[story]
{story}
[/story]

List the story's events as ground actions of the domain, in the order they happen, one per \
line, for example (move anne kitchen outside). Use only objects of the problem file. {reply}"""

ANSWER = """\
{task}

[story]
{story}
[/story]

{evidence}

Question: {question}
{options}
Think step by step, then answer. {reply}"""

OPTIONS_HEADER = "Options:"
OPTIONS_INSTRUCTION = "Answer with the label of one option."

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

#: Table 2's baselines (:mod:`cogrsi_lib.pddl.baselines`): chain of thought answers from the
#: story alone; DWM answers from the model's own state description after each part.
EVIDENCE_NONE = "Reason from the story alone."
EVIDENCE_STATES = """The state of the world after each part of the story, as described before:
{states}"""

STATE = """{task}

[story]
{story}
[/story]

{earlier}
Describe the state of the world after the last line of the story: where each person and \
object is, and what each person has seen or been told. Plain sentences, at most {words} \
words."""
STATE_FIRST = "This is the first part of the story."
STATE_EARLIER = "The state after the earlier parts, as described before:\n{states}"


# -- reply formats ---------------------------------------------------------------------------
# their example requests: cogrsi_lib/pddl/ladder.py, beside the prompts of the ladder's calls
PROBLEM_FAMILY = prompt_family("pddl.problem", "regex")
ACTIONS_FAMILY = prompt_family("pddl.actions", "regex")
DOMAIN_PROBLEM_FAMILY = prompt_family("pddl.domain_problem", "regex")
ANSWER_FAMILY = prompt_family("pddl.answer", "json")
#: a PDDL name as the parsing prompts ask for it (lower case, at most 16 characters)
NAME = r"[a-z][a-z0-9_-]{0,15}"
#: the most names on one line of (:objects ...) (one line per type of the domain)
MAX_NAMES = 8
#: tokens a :data:`NAME` costs with its leading space, as written in practice: a 16-character
#: name of word pieces and hyphens takes 7 or 8 in SmolLM2's tokenizer ("kalimaria-kalim-",
#: "oven-oven-oven-o"); only a run of unrelated letters takes more (one per character)
NAME_TOKENS = 8
#: tokens of a line's frame: its indent, parentheses or separator, and newline
LINE_FRAME_TOKENS = 4


def text_tokens(text: str) -> int:
    """Tokens the domain's own words (a predicate, an action, a type) cost at most in
    practice: half a token per character, plus one (English words take about a quarter)."""
    return len(text) // 2 + 1


def line_tokens(head: str, arity: int) -> int:
    """Tokens of one reply line: ``head`` (a predicate, action or type) and ``arity`` names."""
    return LINE_FRAME_TOKENS + text_tokens(head) + arity * NAME_TOKENS


def problem_head_tokens(domain: CompiledDomain) -> int:
    """Tokens a problem file spends outside ``(:init ...)`` at most: its frame (the layout
    without its placeholders) and one full ``(:objects ...)`` line per type of the domain."""
    frame = PROBLEM_LAYOUT.replace("<name> <name> ... - <type>", "").replace(
        "(<predicate> <name> ...)", "").replace("...", "").replace("<domain>", domain.name)
    objects = sum(line_tokens(t, MAX_NAMES) for t in domain.parents)
    return len(frame) // 2 + NAME_TOKENS + objects


#: the deepest nesting of the no-domain ablation's s-expressions (the predefined domain has 8)
MAX_NESTING = 8
PROBLEM_LAYOUT = """\
(define (problem <name>)
  (:domain <domain>)
  (:objects
    <name> <name> ... - <type>
    ...
  )
  (:init
    (<predicate> <name> ...)
    ...
  )
  (:goal (and)))"""


def lines_for(max_tokens: int, per_line: int) -> int:
    """How many lines of ``per_line`` tokens a reply capped at ``max_tokens`` may hold, with
    room left for the end-of-reply token: a bound, so that a model repeating itself must
    stop and close the reply before the cap cuts it. At least 4, so a cap too small for the
    domain still leaves a usable reply (the reply may then be cut: raise the cap)."""
    return max(4, (max_tokens - 1) // per_line)


def problem_format(domain: CompiledDomain, max_tokens: int = 768) -> ReplyFormat:
    """Call 1's reply for the given domain (see the module docstring)."""
    types = "|".join(sorted(domain.parents))
    facts = "|".join(f"{p}" + f" {NAME}" * len(args)
                     for p, args in sorted(domain.predicates.items()))
    names = rf"{NAME}( {NAME}){{0,{MAX_NAMES - 1}}}"
    fact = max(line_tokens(p, len(args)) for p, args in domain.predicates.items())
    n_facts = lines_for(max_tokens - problem_head_tokens(domain), fact)
    pattern = (
        rf"\(define \(problem {NAME}\)\n  \(:domain {domain.name}\)\n"
        rf"  \(:objects\n(    {names} - ({types})\n){{1,{len(domain.parents)}}}  \)\n"
        rf"  \(:init\n(    \(({facts})\)\n){{0,{n_facts}}}  \)\n"
        r"  \(:goal \(and\)\)\)"
    )
    return ReplyFormat.regex(PROBLEM_FAMILY, pattern)


def actions_format(domain: CompiledDomain, max_tokens: int = 768) -> ReplyFormat:
    """Call 2's reply: ground actions of the domain, one per line, each with its arity."""
    acts = "|".join(f"{a}" + f" {NAME}" * len(schema.params)
                    for a, schema in sorted(domain.actions.items()))
    line = max(line_tokens(a, len(schema.params)) for a, schema in domain.actions.items())
    most = lines_for(max_tokens, line) - 1
    return ReplyFormat.regex(ACTIONS_FAMILY, rf"\(({acts})\)(\n\(({acts})\)){{0,{most}}}")


#: the most items of one list of the no-domain ablation's s-expressions (a problem's
#: (:init ...) is the longest: 22 facts in the default oracle stories)
MAX_ITEMS = 48


def sexp_pattern(depth: int = MAX_NESTING, items: int = MAX_ITEMS) -> str:
    """One balanced s-expression nested at most ``depth`` deep, at most ``items`` items per
    list (tokens of at most 32 characters, spaces, newlines): so that a model repeating
    itself must close its lists."""
    tok = r"[^ \n();]{1,32}"
    more = f"{{0,{items - 1}}}"
    s = rf"\([ \n]*({tok}([ \n]+{tok}){more})?[ \n]*\)"
    for _ in range(depth - 1):
        item = f"({tok}|{s})"
        s = rf"\([ \n]*({item}([ \n]+{item}){more})?[ \n]*\)"
    return s


def domain_problem_format() -> ReplyFormat:
    """The no-domain ablation's call 1: a domain, a blank line, a problem."""
    sexp = sexp_pattern()
    return ReplyFormat.regex(DOMAIN_PROBLEM_FAMILY, f"{sexp}\n\n{sexp}")


def format_hint(fmt: ReplyFormat) -> str:
    """The reply instruction of a PDDL format, for its prompt."""
    if fmt.family == PROBLEM_FAMILY:
        return f"Reply with the problem file only, laid out exactly like this:\n{PROBLEM_LAYOUT}"
    if fmt.family == ACTIONS_FAMILY:
        return "Reply with the actions only, one per line, nothing else."
    return ("Reply with the domain file, one blank line, then the problem file: plain PDDL, "
            "nothing else.")
