"""No function of ``cogrsi_lib`` is over 100 lines: a longer one is split into named steps.

A function's length runs from its ``def`` line to the last line of its body (docstring and
comments inside included, decorators not), read with ``ast``; methods and nested functions
count on their own (a nested function's lines also count for the function around it).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 100


def long_functions(root: Path, package: str = "cogrsi_lib",
                   limit: int = LIMIT) -> list[tuple[str, int]]:
    """``file:line name`` and the length of every function over ``limit`` lines."""
    found = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(rel))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    found.append((f"{rel}:{node.lineno} {node.name}", length))
    return found


def test_no_function_of_cogrsi_lib_is_over_100_lines() -> None:
    found = long_functions(ROOT)
    assert not found, "functions over 100 lines:\n" + "\n".join(
        f"  {where} ({n} lines)" for where, n in found)


def test_a_function_is_measured_from_def_to_its_last_line(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(98))
    source = (f"@staticmethod\ndef fits():\n    '''doc'''\n{body}\n\n\n"
              f"class C:\n    async def over(self):\n        '''doc'''\n"
              + body.replace("    ", "        ") + "\n        return 1\n")
    (tmp_path / "cogrsi_lib").mkdir()
    (tmp_path / "cogrsi_lib" / "m.py").write_text(source)
    # fits: def, docstring and 98 lines = 100; over: def, docstring, 98 lines, return = 101
    assert long_functions(tmp_path) == [("cogrsi_lib/m.py:105 over", 101)]
