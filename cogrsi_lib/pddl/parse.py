"""Strict parsing of model output into PDDL, with the ``pddl`` package (PyPI) as the parser.

PDDL-Mind §3 "State and action extraction": the model writes a problem file and a list of
candidate actions (in the no-domain ablation, also a domain). A reply is read as follows and
nothing is guessed:

* a domain or problem is the first balanced ``(define (domain ...`` / ``(define (problem ...``
  form in the reply (text around it, such as a code fence, is ignored); a reply without one,
  or whose form the parser refuses, is a :class:`ParseFailure` carrying the parser's message;
* the actions are the content of the first fenced code block if there is one, else the whole
  reply, read by the ``pddl`` plan parser: one ``(name arg ...)`` per line, ``;`` comments
  allowed, nothing else. Actions that parse but do not fit the domain (unknown name, wrong
  arity, unknown object) are not parse failures: the executor rejects them one by one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from lark import Lark
from lark.exceptions import LarkError
from pddl.exceptions import PDDLError
from pddl.parser import GRAMMAR_FILE, PARSERS_DIRECTORY
from pddl.parser.base import BaseParser
from pddl.parser.domain import DomainParser
from pddl.parser.plan import PlanParser
from pddl.parser.problem import ProblemParser

from cogrsi_lib.pddl.domain import CompiledDomain, DomainError, compile_domain
from cogrsi_lib.pddl.problem import Task, compile_problem

T = TypeVar("T")
MAX_MESSAGE = 600
_PARSE_ERRORS = (LarkError, PDDLError, DomainError, ValueError, TypeError, KeyError,
                 AssertionError, RecursionError)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class ParseFailure:
    """Model output that is not valid PDDL: which part, and the parser's message."""

    part: str  # "domain", "problem" or "actions"
    message: str

    def __str__(self) -> str:
        return f"{self.part}: {self.message}"


@dataclass(frozen=True)
class GroundAction:
    """A candidate action as the model wrote it (names lower-cased)."""

    name: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return "(" + " ".join([self.name, *self.args]) + ")"


@lru_cache(maxsize=4)
def _lark(start: str) -> Lark:
    """The ``pddl`` package's grammar, compiled once (compiling costs far more than a parse)."""
    return Lark(GRAMMAR_FILE.read_text(), parser="lalr", import_paths=[PARSERS_DIRECTORY],
                start=start)


def _run(parser_cls: type[BaseParser[T]], text: str) -> T:
    """Parse with ``parser_cls``'s grammar and a fresh transformer.

    The package's parsers keep their transformer (which holds per-file state, such as the
    requirements of the last domain) inside the compiled parser, so one instance must not
    read two files; a fresh transformer over the shared grammar is equivalent and cheap.
    """
    tree = _lark(parser_cls.start_symbol).parse(text)
    return parser_cls.transformer_cls().transform(tree)


def _message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def extract_define(reply: str, kind: str) -> str | None:
    """The first ``(define (<kind> ...`` form of ``reply``, up to its closing parenthesis
    (to the end of the reply when it never closes, so the parser reports the problem)."""
    m = re.search(r"\(\s*define\s*\(\s*" + re.escape(kind) + r"\b", reply, re.I)
    if m is None:
        return None
    depth = 0
    i = m.start()
    in_comment = False
    while i < len(reply):
        ch = reply[i]
        if in_comment:
            in_comment = ch != "\n"
        elif ch == ";":
            in_comment = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return reply[m.start(): i + 1]
        i += 1
    return reply[m.start():]


def parse_domain_text(text: str) -> CompiledDomain | ParseFailure:
    """A domain file (or a reply holding one), parsed and compiled."""
    body = extract_define(text, "domain")
    if body is None:
        return ParseFailure("domain", "no (define (domain ...)) form in the reply")
    try:
        return compile_domain(_run(DomainParser, body), body)
    except _PARSE_ERRORS as exc:
        return ParseFailure("domain", _message(exc))


def parse_problem_text(text: str, domain: CompiledDomain) -> Task | ParseFailure:
    """A problem file (or a reply holding one), parsed and checked against ``domain``."""
    body = extract_define(text, "problem")
    if body is None:
        return ParseFailure("problem", "no (define (problem ...)) form in the reply")
    try:
        return compile_problem(_run(ProblemParser, body), domain)
    except _PARSE_ERRORS as exc:
        return ParseFailure("problem", _message(exc))


def parse_actions_text(text: str) -> tuple[GroundAction, ...] | ParseFailure:
    """Candidate actions, one ``(name arg ...)`` per line (see the module docstring)."""
    fenced = _FENCE.search(text)
    body = (fenced.group(1) if fenced else text).strip()
    if not body:
        return ParseFailure("actions", "no actions in the reply")
    try:
        plan = _run(PlanParser, body)
    except _PARSE_ERRORS as exc:
        return ParseFailure("actions", _message(exc))
    return tuple(
        GroundAction(str(name).lower(), tuple(str(a.name).lower() for a in args))
        for name, args in plan.actions
    )
