"""One example request of every prompt family: the catalogue of the families' registry.

Each family declares the kind of its reply format and its example request once, beside its
prompt (:mod:`cogrsi_lib.llm.families`; DESIGN.md, Principles). This module imports every
module of the package, so that every declaration is made, and asks each family for its
example, so that tests, the structured-output benchmark and the README can show every family
side by side: its kind of format and a request a backend must constrain. Nothing here
defines a prompt, a format or an example, and no list of families or modules is kept here.
"""

from __future__ import annotations

import importlib
import pkgutil

import cogrsi_lib
from cogrsi_lib.llm.families import Family, declared, example_request
from cogrsi_lib.llm.types import Request

__all__ = ["example_requests", "families"]


def families() -> dict[str, Family]:
    """Every family declared in the package, by name (each module imported once)."""
    for info in pkgutil.walk_packages(cogrsi_lib.__path__, f"{cogrsi_lib.__name__}."):
        importlib.import_module(info.name)
    return dict(sorted(declared().items()))


def example_requests() -> dict[str, Request]:
    """``{family: request}`` for every declared family that has an example (by name); each
    request's reply format is its family's, of the declared kind."""
    return {name: example_request(name) for name, f in families().items()
            if f.example is not None}
