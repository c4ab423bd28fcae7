"""The static policy on translated code: what it refuses and what it lets through."""

from __future__ import annotations

import types

import pytest

from cogrsi_lib.audit.policy import (
    PolicyViolation,
    check_source,
    denied_attribute,
    denied_name,
    restricted_globals,
    safe_getattr,
    safe_hasattr,
)

REFUSED = {
    "dunder attribute": "x = ().__class__.__bases__[0].__subclasses__()",
    # NFKC-normalised by the parser to ``__class__``
    "fullwidth dunder attribute": "x = ().__\uff43lass__",
    "fullwidth dunder name": "b = __\uff42uiltins__",
    "private attribute": "y = world._present",
    "builtins name": "b = __builtins__",
    "import hook": "m = __import__('os')",
    "import os": "import os",
    "from os": "from os import path",
    "import submodule": "import collections.abc",
    "import subprocess": "import subprocess as sp",
    "import socket": "import socket",
    "relative import": "from . import x",
    "import __future__": "import __future__",
    "future feature other than annotations": "from __future__ import barry_as_FLUFL",
    "future star": "from __future__ import *",
    "star import": "from math import *",
    "private from import": "from collections import _chain",
    "generator frame": "g = (i for i in ())\nf = g.gi_frame.f_back",
    "frame globals": "def f(x):\n    return x.f_globals",
    "str.format": "s = '{0.__class__}'.format(1)",
    "format_map": "s = '{x}'.format_map({})",
    "mro": "m = int.mro()",
    "class": "class A:\n    pass",
    "attribute store": "world.agents = ()",
    "attribute delete": "del world.agents",
    "async": "async def f():\n    pass",
    "global": "def f():\n    global x",
    "dunder argument": "def f(__x):\n    return __x",
    "dunder function": "def __init__():\n    pass",
    "dunder alias": "import math as __m",
    "dunder handler": "try:\n    pass\nexcept Exception as __e:\n    pass",
    # a class pattern's keyword names are attribute reads of the subject
    "match class dunder": "match q:\n    case str(__reduce_ex__=rx):\n        pass",
    "match class __class__": "match 1:\n    case int(__class__=c):\n        pass",
    "match class private": "match world:\n    case object(_present=p):\n        pass",
    "match class frame": "match g:\n    case object(gi_frame=f):\n        pass",
    "match class in or": "match q:\n    case [1] | str(__class__=c):\n        pass",
    "match class nested": "match q:\n    case [int(), {'k': str(__dict__=d)}]:\n        pass",
    "match capture dunder": "match q:\n    case __x:\n        pass",
    "match star dunder": "match q:\n    case [*__rest]:\n        pass",
    "match mapping rest": "match q:\n    case {**__rest}:\n        pass",
}

MATCH_ALLOWED = """
def applies(world, q):
    match q.kind:
        case "location" | "property":
            return True
        case _:
            return False


def predict(world, q):
    match q.candidates:
        case [first, *rest] if rest:
            return first
        case {"k": value}:
            return value
        case str(text=t):
            return t
    return None
"""


def test_ordinary_match_statements_pass():
    check_source(MATCH_ALLOWED)


@pytest.mark.parametrize("source", REFUSED.values(), ids=REFUSED.keys())
def test_policy_refuses(source):
    with pytest.raises(PolicyViolation):
        check_source(source)


def test_violation_names_the_line():
    with pytest.raises(PolicyViolation) as err:
        check_source("x = 1\ny = x.__class__")
    assert err.value.line == 2 and "__class__" in str(err.value)


def test_syntax_errors_are_syntax_errors():
    with pytest.raises(SyntaxError):
        check_source("def applies(:")


ALLOWED = """
from __future__ import annotations
import math
import itertools
import re
from collections import Counter, defaultdict
from functools import reduce
from typing import Any, Optional, List, Dict


def helper(events: List[Any]) -> Optional[int]:
    counts = Counter(e for e in events)
    return max(counts.values()) if counts else None


def applies(world, q) -> bool:
    _unused = [x for x in itertools.chain([1], [2])]
    return bool(re.match(r"Where", q.text)) and math.isfinite(1.0)


def predict(world, q):
    d = defaultdict(int)
    return reduce(lambda a, b: a, q.candidates)
"""


def test_policy_accepts_ordinary_code_and_it_runs():
    code = compile(check_source(ALLOWED), "<rule>", "exec")
    env = restricted_globals()
    exec(code, env)
    assert callable(env["applies"]) and callable(env["predict"])
    assert env["helper"]([1, 1, 2]) == 2


def test_restricted_builtins_have_no_escape_hatches():
    builtins = restricted_globals()["__builtins__"]
    for name in ("open", "eval", "exec", "compile", "type", "object", "vars", "dir", "globals",
                 "locals", "input", "breakpoint", "exit", "quit", "help", "memoryview",
                 "__build_class__", "super", "setattr", "delattr", "SystemExit",
                 "BaseException", "KeyboardInterrupt"):
        assert name not in builtins, name
    imp = builtins["__import__"]
    with pytest.raises(ImportError):
        imp("os")
    collections = imp("collections")
    assert not hasattr(collections, "abc") and hasattr(collections, "Counter")
    typing = imp("typing")
    assert typing.Optional[int] is typing.Optional
    assert typing.cast(int, "x") == "x"
    for name in ("math", "itertools", "collections", "functools", "re", "typing"):
        assert not any(isinstance(v, types.ModuleType) for v in vars(imp(name)).values())


def test_safe_getattr_refuses_private_and_frame_names():
    with pytest.raises(AttributeError):
        safe_getattr((), "__class__")
    with pytest.raises(AttributeError):
        safe_getattr((i for i in ()), "gi_frame")
    with pytest.raises(AttributeError):
        safe_getattr("", "format")
    assert safe_getattr("ab", "upper")() == "AB"
    assert safe_getattr(1, "nope", 5) == 5
    assert not safe_hasattr((), "__class__") and safe_hasattr("", "upper")


def test_names_are_judged_after_nfkc_normalisation():
    """Python reads ``__\uff43lass__`` (fullwidth c) as ``__class__``; so does the policy, also
    for the strings ``getattr`` and ``hasattr`` receive."""
    assert denied_attribute("__\uff43lass__") and denied_attribute("\uff47i_frame")
    assert denied_attribute("\uff46_globals") and not denied_attribute("\uff55pper")
    assert denied_name("__\uff42uiltins__") and not denied_name("\u03c0")
    with pytest.raises(AttributeError, match="not available"):
        safe_getattr((i for i in ()), "\uff47i_frame")


def test_single_underscore_names_are_ordinary_names():
    """Only attributes are refused for one leading underscore; a local ``_x`` reaches nothing."""
    check_source("def f(_a):\n    _b = [_ for _ in _a]\n    return _b")
    with pytest.raises(PolicyViolation):
        check_source("y = q._x")
