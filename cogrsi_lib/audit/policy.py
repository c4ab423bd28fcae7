"""What translated rule code may do: an AST check, allow-listed builtins and imports (CogRSI §4.3).

Translated code is untrusted.  Before it runs, :func:`check_source` parses it and refuses
anything outside a small Python subset: attributes with a leading underscore (so no
``().__class__.__bases__``), including the keyword names of a ``match`` class pattern, and
names with two (``__builtins__``, ``__import__``); the attributes that reach frames or code
objects (``gi_frame``, ``f_globals``, ...); ``str.format`` (which reads attributes from a
string); attribute assignment, class definitions, async code, and imports other than
:data:`ALLOWED_MODULES` and ``from __future__ import annotations``.  Names are compared
after NFKC normalisation, as Python's parser reads identifiers.  It then runs with
:func:`restricted_globals`: only the builtins in :data:`SAFE_BUILTINS`, a ``getattr`` that
refuses the same names, an ``__import__`` that hands out read-only copies of the allowed
modules, and a ``print`` that discards.  This is the first layer only: the sandbox process
also gives up its privileges and system calls (:mod:`cogrsi_lib.audit.isolation`;
SECURITY.md).  Standard library only: the sandbox child imports it.  Importing this module
also loads ``unicodedata``, which the parser needs for non-ASCII identifiers and ``\\N{...}``
escapes and would otherwise import only when it meets one, after the child may no longer open files.
"""

from __future__ import annotations

import ast
import builtins
import collections
import functools
import itertools
import math
import re
import unicodedata
from collections.abc import Callable
from types import MappingProxyType, SimpleNamespace
from typing import Any

#: Attribute names that reach frames, code, globals or formatting machinery.
DENIED_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "gi_suspended",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running",
    "ag_frame", "ag_code", "ag_await", "ag_running",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "f_lasti",
    "tb_frame", "tb_next", "co_code", "co_consts", "co_names",
    "func_globals", "func_code", "im_func", "im_self",
    "mro", "format", "format_map", "load_module", "exec_module",
})  # fmt: skip

_BUILTIN_NAMES = (
    "abs", "all", "any", "bool", "callable", "chr", "dict", "divmod", "enumerate", "filter",
    "float", "frozenset", "hash", "int", "isinstance", "iter", "len", "list", "map", "max",
    "min", "next", "ord", "pow", "range", "repr", "reversed", "round", "set", "slice",
    "sorted", "str", "sum", "tuple", "zip",
    "ArithmeticError", "AssertionError", "AttributeError", "Exception", "IndexError",
    "KeyError", "LookupError", "NotImplementedError", "RuntimeError", "StopIteration",
    "TypeError", "ValueError", "ZeroDivisionError",
)  # fmt: skip


class PolicyViolation(ValueError):
    """Translated code uses something the sandbox does not allow; ``line`` is 1-based."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        self.problem = problem
        self.line = line
        super().__init__(f"line {line}: {problem}" if line else problem)


def identifier(name: str) -> str:
    """``name`` as Python reads an identifier: NFKC-normalised (PEP 3131), so that
    ``__\uff43lass__`` (a fullwidth c) is ``__class__``."""
    return unicodedata.normalize("NFKC", name)


def denied_attribute(name: str) -> bool:
    """An attribute rule code may not read: a leading underscore, or frame, code and
    formatting machinery (:data:`DENIED_ATTRIBUTES`); compared after NFKC normalisation."""
    name = identifier(name)
    return name.startswith("_") or name in DENIED_ATTRIBUTES


def denied_name(name: str) -> bool:
    """A variable, function, argument or alias name rule code may not use or bind: two
    leading underscores (``__builtins__``, ``__import__``, ...), after NFKC normalisation.
    Names with one leading underscore are ordinary local names and reach nothing."""
    return identifier(name).startswith("__")


def safe_getattr(obj: Any, name: str, *default: Any) -> Any:
    """``getattr`` without private, dunder or frame-reaching names."""
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    if denied_attribute(name):
        raise AttributeError(f"attribute {name!r} is not available to rule code")
    return getattr(obj, name, *default)


def safe_hasattr(obj: Any, name: str) -> bool:
    if not isinstance(name, str) or denied_attribute(name):
        return False
    return hasattr(obj, name)


def _discard(*_args: Any, **_kwargs: Any) -> None:
    """``print`` for rule code: output goes nowhere."""


class _TypeName:
    """A stand-in for every ``typing`` name: subscripting or ``|`` gives itself back."""

    def __getitem__(self, _item: Any) -> _TypeName:
        return self

    def __or__(self, _other: Any) -> _TypeName:
        return self

    __ror__ = __or__

    def __repr__(self) -> str:
        return "<typing name>"


_TYPING_NAMES = (
    "Any", "Callable", "Dict", "FrozenSet", "Iterable", "Iterator", "List", "Literal",
    "Mapping", "Optional", "Sequence", "Set", "Tuple", "Union",
)  # fmt: skip


def _cast(_type: Any, value: Any) -> Any:
    return value


def _module(name: str, source: Any, names: tuple[str, ...] | None = None) -> SimpleNamespace:
    """A read-only-by-convention copy of a module's public, non-module attributes."""
    keys = names if names is not None else tuple(k for k in dir(source) if not k.startswith("_"))
    picked = {}
    for k in keys:
        value = getattr(source, k)
        if isinstance(value, type(math)):
            continue
        picked[k] = value
    return SimpleNamespace(**picked)


def _allowed_modules() -> dict[str, SimpleNamespace]:
    typing_ns = SimpleNamespace(**{k: _TypeName() for k in _TYPING_NAMES}, cast=_cast)
    return {
        "math": _module("math", math),
        "itertools": _module("itertools", itertools),
        "collections": _module(
            "collections", collections,
            ("Counter", "defaultdict", "deque", "OrderedDict", "ChainMap"),
        ),
        "functools": _module(
            "functools", functools, ("reduce", "partial", "lru_cache", "cache", "cmp_to_key")
        ),
        "re": _module(
            "re", re,
            ("compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn",
             "split", "escape", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S"),
        ),
        "typing": typing_ns,
        "__future__": SimpleNamespace(annotations=None),
    }


ALLOWED_MODULES = tuple(k for k in _allowed_modules() if not k.startswith("_"))
#: The one ``from __future__ import`` rule code may use: a compiler directive that reaches
#: nothing.  ``import __future__`` and other features are refused.
FUTURE_FEATURES = ("annotations",)


def _make_import(modules: dict[str, SimpleNamespace]) -> Callable[..., Any]:
    def restricted_import(name: str, globals: Any = None, locals: Any = None,
                          fromlist: Any = (), level: int = 0) -> Any:
        if level != 0 or name not in modules:
            raise ImportError(f"import of {name!r} is not allowed in rule code")
        return modules[name]

    return restricted_import


def safe_builtins() -> dict[str, Any]:
    """A fresh builtins mapping for one run of rule code."""
    table: dict[str, Any] = {n: getattr(builtins, n) for n in _BUILTIN_NAMES}
    table |= {
        "getattr": safe_getattr, "hasattr": safe_hasattr, "print": _discard,
        "True": True, "False": False, "None": None,
        "__import__": _make_import(_allowed_modules()),
    }  # fmt: skip
    return table


SAFE_BUILTINS = MappingProxyType(safe_builtins())


def restricted_globals() -> dict[str, Any]:
    """Globals to ``exec`` rule code in: allow-listed builtins only."""
    return {"__builtins__": safe_builtins(), "__name__": "rule"}


_FORBIDDEN_NODES: dict[type, str] = {
    ast.ClassDef: "class definitions are not allowed",
    ast.AsyncFunctionDef: "async code is not allowed",
    ast.AsyncFor: "async code is not allowed",
    ast.AsyncWith: "async code is not allowed",
    ast.Await: "async code is not allowed",
    ast.Global: "'global' is not allowed",
    ast.Nonlocal: "'nonlocal' is not allowed",
}


class _Checker(ast.NodeVisitor):
    def generic_visit(self, node: ast.AST) -> None:
        for kind, problem in _FORBIDDEN_NODES.items():
            if isinstance(node, kind):
                raise PolicyViolation(problem, getattr(node, "lineno", None))
        super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if denied_name(node.id):
            raise PolicyViolation(f"name {node.id!r} is not allowed", node.lineno)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if denied_attribute(node.attr):
            raise PolicyViolation(f"attribute {node.attr!r} is not allowed", node.lineno)
        if not isinstance(node.ctx, ast.Load):
            raise PolicyViolation("assigning or deleting attributes is not allowed", node.lineno)
        self.generic_visit(node)

    def _check_import(self, module: str, node: ast.AST) -> None:
        module = identifier(module)
        if module not in ALLOWED_MODULES:
            raise PolicyViolation(
                f"import of {module!r} is not allowed (allowed: {', '.join(ALLOWED_MODULES)})",
                getattr(node, "lineno", None),
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_import(alias.name, node)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            raise PolicyViolation("relative imports are not allowed", node.lineno)
        if identifier(node.module or "") == "__future__":
            for alias in node.names:
                if alias.name not in FUTURE_FEATURES:
                    raise PolicyViolation(f"'from __future__ import {alias.name}' is not "
                                          "allowed (allowed: annotations)", node.lineno)
            self.generic_visit(node)
            return
        self._check_import(node.module or "", node)
        for alias in node.names:
            if alias.name == "*" or denied_attribute(alias.name):
                raise PolicyViolation(f"'from {node.module} import {alias.name}' is not allowed",
                                      node.lineno)
        self.generic_visit(node)

    def _check_arg_names(self, node: ast.AST) -> None:
        for a in ast.walk(node):
            if isinstance(a, ast.arg) and denied_name(a.arg):
                raise PolicyViolation(f"name {a.arg!r} is not allowed", a.lineno)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if denied_name(node.name):
            raise PolicyViolation(f"name {node.name!r} is not allowed", node.lineno)
        self._check_arg_names(node.args)
        self.generic_visit(node)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._check_arg_names(node.args)
        self.generic_visit(node)

    def visit_alias(self, node: ast.alias) -> None:
        if node.asname and denied_name(node.asname):
            raise PolicyViolation(f"name {node.asname!r} is not allowed", node.lineno)

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        # ``case C(attr=p)`` reads ``C().attr`` like an attribute access does.
        for attr in node.kwd_attrs:
            if denied_attribute(attr):
                raise PolicyViolation(f"attribute {attr!r} is not allowed", node.lineno)
        self.generic_visit(node)

    def _check_binding(self, name: str | None, node: ast.AST) -> None:
        if name and denied_name(name):
            raise PolicyViolation(f"name {name!r} is not allowed", getattr(node, "lineno", None))

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        self._check_binding(node.name, node)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        self._check_binding(node.name, node)
        self.generic_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self._check_binding(node.rest, node)
        self.generic_visit(node)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name and denied_name(node.name):
            raise PolicyViolation(f"name {node.name!r} is not allowed", node.lineno)
        self.generic_visit(node)


def check_source(source: str, filename: str = "<rule>") -> ast.Module:
    """Parse ``source`` and check it against the policy; raises ``SyntaxError`` or
    :class:`PolicyViolation`."""
    tree = ast.parse(source, filename=filename, mode="exec")
    _Checker().visit(tree)
    return tree


def compile_rule(source: str, filename: str = "<rule>") -> Any:
    """The checked code object of ``source``."""
    tree = check_source(source, filename)
    return compile(tree, filename, "exec", dont_inherit=True)
