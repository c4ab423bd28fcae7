"""No import cycle between the parts of ``cogrsi_lib`` (its subpackages and top-level modules).

The graph is read with ``ast`` from every file of the package, so nothing of it is imported. An
edge is any ``import`` or ``from ... import`` naming another part, wherever it stands: at module
level, inside a function or under ``if TYPE_CHECKING:`` (``from cogrsi_lib import X`` imports
part X; relative imports are resolved; ``importlib.import_module`` with a constant name counts
too). A cycle is a set of two or more parts that all reach each other; the failure names every
edge inside it with its file and line.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from cogrsi_lib.dvc_graph import imported_from

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "cogrsi_lib"


class Edge(NamedTuple):
    source: str  # the importing part
    target: str  # the imported part
    file: str
    line: int
    module: str  # what the import names


def _named(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Every module (or module attribute) an import in ``tree`` names, with its line."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, module, is_package)
            if base == _root(module):  # ``from cogrsi_lib import X`` imports part X
                yield from ((f"{base}.{a.name}", node.lineno) for a in node.names)
            else:
                yield base, node.lineno
        elif (isinstance(node, ast.Call) and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            yield node.args[0].value, node.lineno


def _root(module: str) -> str:
    """The top-level package of a dotted module name."""
    return module.partition(".")[0]


def _part(module: str, package: str) -> str | None:
    """The part a dotted module name belongs to (None outside the package or for its root)."""
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def import_edges(root: Path, package: str = PACKAGE) -> list[Edge]:
    """Every import from one part of ``package`` (under ``root``) into another."""
    edges = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root)
        is_package = path.name == "__init__.py"
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        source = _part(module, package)
        if source is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(rel))
        for name, line in _named(tree, module, is_package):
            target = _part(name, package)
            if target is not None and target != source:
                edges.append(Edge(source, target, str(rel), line, name))
    return edges


def cycles(edges: list[Edge]) -> list[list[Edge]]:
    """The edges inside each set of parts that reach each other (one list per set)."""
    succ: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        succ[e.source].add(e.target)

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in succ[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    reached = {n: reach(n) for n in {e.source for e in edges} | {e.target for e in edges}}
    found, done = [], set()
    for node in sorted(reached):
        if node in done:
            continue
        group = {node} | {m for m in reached[node] if node in reached[m]}
        done |= group
        if len(group) > 1:
            found.append(sorted(e for e in edges if e.source in group and e.target in group))
    return found


def describe(found: list[list[Edge]]) -> str:
    return "\n".join(
        "cycle: " + " <-> ".join(sorted({e.source for e in group})) + "\n" + "\n".join(
            f"  {e.source} -> {e.target}: {e.file}:{e.line} ({e.module})" for e in group)
        for group in found)


def test_the_parts_of_cogrsi_lib_import_each_other_in_no_cycle() -> None:
    edges = import_edges(ROOT)
    # the graph is read at all: the loops import the reader (module level) and the audit
    # (inside a function, cogrsi_lib/loops/gates.py)
    assert {("loops", "reader"), ("loops", "audit")} <= {(e.source, e.target) for e in edges}
    found = cycles(edges)
    assert not found, "import cycles between parts of cogrsi_lib:\n" + describe(found)


def write(root: Path, rel: str, text: str = "") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_cycle_through_function_relative_and_type_checking_imports_is_named(
    tmp_path: Path,
) -> None:
    write(tmp_path, "cogrsi_lib/__init__.py")
    write(tmp_path, "cogrsi_lib/alpha/__init__.py", "from .one import f\n")
    write(tmp_path, "cogrsi_lib/alpha/one.py", "def f():\n    from .. import beta\n")
    write(tmp_path, "cogrsi_lib/beta.py",
          "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .gamma import g\n")
    write(tmp_path, "cogrsi_lib/gamma/__init__.py",
          "import importlib\nA = importlib.import_module('cogrsi_lib.alpha.one')\n")
    write(tmp_path, "cogrsi_lib/delta.py", "import cogrsi_lib.alpha\n")  # imports, not imported
    found = cycles(import_edges(tmp_path))
    assert [[(e.source, e.target, e.file, e.line) for e in group] for group in found] == [[
        ("alpha", "beta", "cogrsi_lib/alpha/one.py", 2),
        ("beta", "gamma", "cogrsi_lib/beta.py", 3),
        ("gamma", "alpha", "cogrsi_lib/gamma/__init__.py", 2),
    ]]
    assert "cogrsi_lib/beta.py:3" in describe(found)


def test_imports_within_a_part_and_one_way_imports_are_no_cycle(tmp_path: Path) -> None:
    write(tmp_path, "cogrsi_lib/__init__.py", "from cogrsi_lib import alpha\n")  # the root
    write(tmp_path, "cogrsi_lib/alpha/__init__.py", "from cogrsi_lib.alpha.one import f\n")
    write(tmp_path, "cogrsi_lib/alpha/one.py", "from . import two\nimport cogrsi_lib.beta\n")
    write(tmp_path, "cogrsi_lib/alpha/two.py", "from cogrsi_lib.alpha import one\n")
    write(tmp_path, "cogrsi_lib/beta.py", "import json\n")
    edges = import_edges(tmp_path)
    assert [(e.source, e.target) for e in edges] == [("alpha", "beta")]
    assert cycles(edges) == []
