"""Text from a sandbox run made safe to show: what the audit keeps of answers and messages.

A translation chooses its answers and, through its exceptions, its error texts (CogRSI §4.3;
SECURITY.md); both end up in tables, reports and terminals.  :func:`printable` keeps every
character for which :meth:`str.isprintable` holds, namely letters, marks, numbers,
punctuation and symbols (Unicode general categories ``L*``, ``M*``, ``N*``, ``P*``, ``S*``) and
the ASCII space, and replaces every other code point, one for one, by U+FFFD REPLACEMENT
CHARACTER: the C0 and C1 controls (NUL, BEL, ESC, TAB, CR, LF, DEL, ...), format characters
(``Cf``: the bidirectional embeddings, overrides and isolates U+202A-U+202E and
U+2066-U+2069, zero-width spaces and joiners, the byte-order mark), line and paragraph
separators, spaces other than U+0020, lone surrogates, private-use and unassigned code points
(by the interpreter's Unicode database).  The result is valid UTF-8 with no control
sequences.  A replaced character is not dropped, so ``"\\x00box"`` never reads as ``"box"``.
Standard library only: the sandbox child uses it too.
"""

from __future__ import annotations

#: What every character outside the printable set becomes.
REPLACEMENT = "\ufffd"


def printable(text: str) -> str:
    """``text`` with each character that is not printable replaced by :data:`REPLACEMENT`."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else REPLACEMENT for c in text)
