"""What a builder writes: one line of text, naming no one in the shown stories.

Shared by the loops' builder (CogRSI App. C.2) and the harness's SAGE Reflector
(zing-social-mind-report §5.5.1): :func:`clean` makes a written field one line, and a rule
or strategy must not name the shown stories' characters or places.

Names come from what the builder was shown: the perception call's names (the witnesses in
the reader's records), the questioned character, names and places a data source records in
``item.meta`` (``names``, ``places``), entity tokens with underscores (ToMi's ``front_yard``)
and capitalised words of the stories that never occur in lower case there and are not common
sentence openers. A rule names a story if one of these occurs in it as a whole word, ignoring
case (an underscore also matches a space).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord

_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:[-'][A-Za-z]+)?\b")
_UNDERSCORED = re.compile(r"\b[A-Za-z]+(?:_[A-Za-z]+)+\b")
_WORD = re.compile(r"[a-z]+")
#: capitalised words that open sentences or questions and are never names
OPENERS = frozenset({
    "a", "an", "the", "this", "that", "these", "those", "there", "then", "later", "after",
    "afterwards", "before", "meanwhile", "finally", "first", "next", "now", "when", "where",
    "what", "who", "whom", "whose", "which", "why", "how", "does", "do", "did", "is", "are",
    "was", "were", "will", "would", "can", "could", "should", "may", "might", "must", "if", "in",
    "on", "at", "by", "of", "to", "from", "with", "without", "while", "during", "he", "she", "it",
    "they", "we", "you", "i", "his", "her", "its", "their", "our", "your", "me", "him", "them",
    "us", "yes", "no", "not", "nobody", "someone", "everyone", "anyone", "one", "two", "three",
    "private", "privately", "answer", "question", "options", "story", "principle",
})


def clean(text: str) -> str:
    """One line of text: whitespace (newlines included) collapsed to single spaces."""
    return " ".join(str(text).split())


def story_names(items: Sequence[ReaderItem], records: Sequence[ItemRecord] = ()) -> set[str]:
    """Every character and place name of the shown items (see the module docstring)."""
    names: set[str] = set()
    texts = []
    for it in items:
        texts.append(f"{it.context}\n{it.question}")
        names.update(str(n) for n in it.meta.get("names", ()) or ())
        names.update(str(p) for p in it.meta.get("places", ()) or ())
        if it.character:
            names.add(it.character)
    for rec in records:
        per = rec.perception
        if per is not None and per.witnesses:
            for w in per.witnesses:
                names.update(w)
    text = "\n".join(texts)
    lower_words = set(_WORD.findall(text))
    names.update(_UNDERSCORED.findall(text))
    for tok in _CAPITALISED.findall(text):
        low = tok.lower()
        if low not in OPENERS and low not in lower_words:
            names.add(tok)
    return {n.strip() for n in names if n and n.strip()}


def _pattern(name: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"[_\s]+", name.strip()) if p]
    return re.compile(r"(?<![\w])" + r"[_\s]+".join(parts) + r"(?![\w])", re.I)


def names_in(text: str, names: Iterable[str]) -> list[str]:
    """The names that occur in ``text`` (whole words, case ignored), sorted."""
    return sorted(n for n in set(names) if _pattern(n).search(text))
