"""Every polars join and group-by states the order of its rows.

Polars leaves the row order of ``join`` and ``group_by`` unspecified unless
``maintain_order`` is given, and it does vary between runs on a busy machine. Reports print
frames and bootstraps pair rows by position, so an unstated order makes a rerun's bytes (and
a paired bootstrap's interval) depend on thread timing. Read with ``ast``: a call ``x.join``
with ``on``, ``how``, ``left_on`` or ``right_on``, and every ``x.group_by``, must pass
``maintain_order``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("cogrsi_lib", "notebooks", "benchmarks", "scripts")
_JOIN_KEYWORDS = {"on", "how", "left_on", "right_on"}


def unordered_calls(source: str, name: str = "<source>") -> list[str]:
    """``line: call`` of every join or group-by in ``source`` that leaves its order open."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        keywords = {k.arg for k in node.keywords}
        method = node.func.attr
        framed = method == "group_by" or (method == "join" and keywords & _JOIN_KEYWORDS)
        if framed and "maintain_order" not in keywords:
            found.append(f"{node.lineno}: {method}")
    return found


def test_every_join_and_group_by_states_its_row_order() -> None:
    found = [f"{path.relative_to(ROOT)}:{where}"
             for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))
             for where in unordered_calls(path.read_text(encoding="utf-8"), str(path))]
    assert not found, "order left open (pass maintain_order):\n" + "\n".join(found)


def test_an_open_order_is_found_and_a_stated_one_and_str_join_are_not() -> None:
    source = ("a.join(b, on='k')\n"
              "a.join(b, on='k', maintain_order='left')\n"
              "a.group_by('k').len()\n"
              "a.group_by('k', maintain_order=True).len()\n"
              "', '.join(names)\n")
    assert unordered_calls(source) == ["1: join", "3: group_by"]
