"""Prompt families: each declares, once and beside its prompt, the kind of its reply format and
one example request (DESIGN.md, Principles)::

    REASONED = prompt_family("answer.reasoned", "json")

    @family_example(REASONED)
    def _reasoned_example() -> Request:
        return answer_request(ITEM, plain_view(ITEM), SamplingParams(max_tokens=96))

:func:`prompt_family` returns the family's name, the constant its :class:`ReplyFormat` carries;
the example builds a request of the family on a small story
(:mod:`cogrsi_lib.reader.example_items`), whose reply format must be the family's and of the
declared kind. :mod:`cogrsi_lib.reply_families` imports the modules that declare families
and gives every family's example: the structured-output tests send each one to every
backend, so a family cannot reach a backend without its format being tested there. The
registry is in the manner of inspect_ai's and lm-evaluation-harness's decorators.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from cogrsi_lib.llm.reply_format import KINDS, Kind
from cogrsi_lib.llm.types import Request

__all__ = ["Family", "declared", "example_request", "family_example", "prompt_family"]

Example = Callable[[], Request]


@dataclass
class Family:
    """A declared prompt family: its name, its reply format's kind, the module that declares
    it and the builder of its example request (None until one is registered)."""

    name: str
    kind: Kind
    module: str
    example: Example | None = None


_FAMILIES: dict[str, Family] = {}


def prompt_family(name: str, kind: Kind) -> str:
    """Declare the family ``name`` whose replies are of ``kind`` (json, choice, regex); returns
    ``name``. A family is declared by one module (declaring it again there is a reload)."""
    if kind not in KINDS:
        raise ValueError(f"{name}: a reply format kind is one of {KINDS}, not {kind!r}")
    module = sys._getframe(1).f_globals.get("__name__", "?")
    old = _FAMILIES.get(name)
    if old is not None and (old.module, old.kind) != (module, kind):
        raise ValueError(f"prompt family {name!r} is already declared by {old.module} "
                         f"({old.kind})")
    _FAMILIES[name] = Family(name, kind, module, old.example if old else None)
    return name


def family_example(name: str) -> Callable[[Example], Example]:
    """Register the decorated function as the builder of family ``name``'s example request."""

    def add(build: Example) -> Example:
        family = _FAMILIES.get(name)
        if family is None:
            raise ValueError(f"prompt family {name!r} has no declaration (prompt_family)")
        if family.example is not None and (family.example.__module__, family.example.__qualname__
                                           ) != (build.__module__, build.__qualname__):
            raise ValueError(f"prompt family {name!r} already has an example")
        family.example = build
        return build

    return add


def declared() -> dict[str, Family]:
    """Every family declared by the modules imported so far, by name."""
    return dict(_FAMILIES)


def example_request(name: str) -> Request:
    """Family ``name``'s example request, checked: its reply format is the family's, of the
    declared kind."""
    family = _FAMILIES[name]
    if family.example is None:
        raise ValueError(f"prompt family {name!r} ({family.module}) has no example request")
    request = family.example()
    fmt = request.reply
    if fmt is None or (fmt.family, fmt.kind) != (name, family.kind):
        got = None if fmt is None else (fmt.family, fmt.kind)
        raise ValueError(f"the example of {name!r} replies in {got}, not ({name!r}, "
                         f"{family.kind!r})")
    return request
