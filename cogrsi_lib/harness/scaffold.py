"""The generic scaffold: SAGE's last fallback level (zing-social-mind-report §5.5.3, g0).

It is answer-independent by construction: it names no dimension-specific rule, no character
and no option, only the two moves every social-mental question needs.
"""

from __future__ import annotations

GENERIC_SCAFFOLD = (
    "Before answering, work out whose perspective the question asks about. Keep apart what is "
    "actually the case in the story and what each character perceived, knows, believes, wants "
    "or feels: a character's mental state follows only from what that character witnessed, "
    "was told or could infer, not from what the reader knows."
)

SCAFFOLD_HEADER = "General guidance:"


def scaffold_block() -> str:
    """The scaffold as the text block injected into the reasoning context."""
    return f"{SCAFFOLD_HEADER}\n{GENERIC_SCAFFOLD}"
