"""What the audit keeps of a translation's texts: printable characters, the rest replaced."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.audit.printable import REPLACEMENT, printable

#: General categories a printable character has; the ASCII space is the one other.
KEPT = ("L", "M", "N", "P", "S")


@given(st.text(alphabet=st.characters(codec=None)))
def test_each_character_is_kept_or_replaced_by_its_category(text):
    out = printable(text)
    assert len(out) == len(text)
    for before, after in zip(text, out, strict=True):
        kept = before == " " or unicodedata.category(before)[0] in KEPT
        assert after == (before if kept else REPLACEMENT)
    assert out.isprintable()
    out.encode("utf-8")  # no lone surrogate survives


def test_terminal_controls_and_bidi_overrides_are_replaced():
    r = REPLACEMENT
    hostile = "\x1b[2J\x1b]0;x\x07\r\n\x00\u202e\u2066\u200b\ufeff\x7f\x85\u2028"
    assert printable("box" + hostile) == f"box{r}[2J{r}]0;x" + r * 11
    honest = "red box, caf\u00e9 \u00e0 l'\u00e9tage, \u7bb1"
    assert printable(honest) == honest
    assert printable("\ud800x") == r + "x"
