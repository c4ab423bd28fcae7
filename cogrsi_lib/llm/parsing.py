"""Answers as vote keys (DESIGN.md: "a malformed reply is recorded as such and counted").

:class:`ParsedAnswer` is the outcome of reading one reply: a vote key (an option label, or
normalised free text) or ``unparsed`` with the reason. The reading itself is each prompt
family's declared reply format (:mod:`cogrsi_lib.llm.reply_format`); this module holds the
option labels and the normalisation of free-text answers that every family shares.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "unparsed"]

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
