"""Strict parsing of answers (DESIGN.md: "a malformed reply is recorded as such and counted").

Every answering prompt asks for a final line ``Answer: <answer>``. A reply parses when it has
at least one such line and all of them agree. With options, the answer must name one option:
its label (``B``, ``(B)``, ``B.``, ``B) text`` where ``text`` matches option B; labels default
to ``A``, ``B``, ... and are matched ignoring case) or the exact text of one option (case and
surrounding punctuation aside). Anything else is ``unparsed``,
with the raw text kept; it is never mapped to the nearest option.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "unparsed"]

ANSWER_LINE = re.compile(r"^\W*(?:final\s+)?answer\W*?\s*[:：]\s*(?P<value>.*?)\s*$", re.I | re.M)
_LABEL = re.compile(r"^\(?\s*(?P<label>[A-Za-z0-9]{1,3})\s*(?:[).:\]]\s*(?P<rest>.*)|\s*)$")
_PUNCT_EDGES = string.punctuation.replace("_", "") + " \t\"'“”‘’`*"
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.I)


@dataclass(frozen=True)
class ParsedAnswer:
    """The outcome of parsing one reply: ``value`` is the vote key (an option letter or the
    normalised free-text answer), ``None`` when ``status == "unparsed"``."""

    status: Status
    value: str | None
    raw: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def option_letters(n: int) -> list[str]:
    if n > 26:
        raise ValueError("at most 26 options")
    return list(string.ascii_uppercase[:n])


def normalise_free_text(text: str) -> str:
    """Case, underscores, surrounding punctuation, a leading article and spacing aside."""
    t = text.strip().strip(_PUNCT_EDGES).replace("_", " ")
    t = re.sub(r"\s+", " ", t).lower()
    t = _ARTICLES.sub("", t)
    return t.strip(_PUNCT_EDGES)


def _answer_values(reply: str) -> list[str]:
    return [m.group("value") for m in ANSWER_LINE.finditer(reply)]


def _match_option(
    value: str, options: Sequence[str], labels: Sequence[str]
) -> tuple[str | None, str]:
    norm_opts = [normalise_free_text(o) for o in options]
    by_label = {lab.lower(): i for i, lab in enumerate(labels)}
    m = _LABEL.match(value.strip().strip("*`"))
    if m:
        i = by_label.get(m.group("label").lower())
        rest = (m.group("rest") or "").strip()
        if i is not None:
            if not rest or normalise_free_text(rest) == norm_opts[i]:
                return labels[i], ""
            return None, f"label {labels[i]} with text that is not option {labels[i]}"
        if not rest and len(m.group("label")) == 1 and normalise_free_text(value) not in norm_opts:
            return None, f"{m.group('label')} is not an option label"
    nv = normalise_free_text(value)
    hits = [labels[i] for i, o in enumerate(norm_opts) if o == nv]
    if len(hits) == 1:
        return hits[0], ""
    if len(hits) > 1:
        return None, "answer matches several options"
    return None, "answer names no option"


def parse_answer(
    reply: str, options: Sequence[str] | None = None, labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """Parse a reply that should end with ``Answer: ...``; see the module docstring.

    ``labels`` are the options' labels (default ``A``, ``B``, ...), matched case-insensitively;
    the value of a parsed answer is the item's own label.
    """
    if options:
        labels = list(labels) if labels else option_letters(len(options))
        if len(labels) != len(options):
            raise ValueError("one label per option")
        if len({lab.lower() for lab in labels}) != len(labels):
            raise ValueError("option labels must differ ignoring case")
    values = [v for v in _answer_values(reply) if v.strip()]
    if not values:
        return ParsedAnswer("unparsed", None, reply, "no 'Answer:' line")
    keys: list[str] = []
    for v in values:
        if options:
            key, why = _match_option(v, options, labels or ())
            if key is None:
                return ParsedAnswer("unparsed", None, reply, why)
        else:
            key = normalise_free_text(v)
            if not key:
                return ParsedAnswer("unparsed", None, reply, "empty answer")
        keys.append(key)
    if len(set(keys)) > 1:
        return ParsedAnswer("unparsed", None, reply, "conflicting 'Answer:' lines")
    return ParsedAnswer("ok", keys[0], reply)


def parse_choice(reply: str, n_choices: int = 2) -> ParsedAnswer:
    """Parse an arbitration reply ``Answer: 1`` .. ``Answer: n``; value is the number."""
    values = [v.strip().strip("*`().[]") for v in _answer_values(reply) if v.strip()]
    if not values:
        return ParsedAnswer("unparsed", None, reply, "no 'Answer:' line")
    picks = set()
    for v in values:
        m = re.match(r"^(?:candidate|option|choice)?\s*(\d+)(?:\s*[).:\-]\s*|\s+|$)(.*)$", v, re.I)
        if not m or not 1 <= int(m.group(1)) <= n_choices:
            return ParsedAnswer("unparsed", None, reply, f"not a choice in 1..{n_choices}")
        if re.search(r"\b\d+\b", m.group(2)):
            return ParsedAnswer("unparsed", None, reply, "more than one number in the choice")
        picks.add(m.group(1))
    if len(picks) > 1:
        return ParsedAnswer("unparsed", None, reply, "conflicting choices")
    return ParsedAnswer("ok", picks.pop(), reply)
