"""Reader systems by name (CogRSI §5.1): each system registers itself beside its code.

A system's module declares it once with :func:`reader_system`::

    @reader_system("zero_shot")
    def _zero_shot(backend, config, principle): ...

    @reader_system("sc<k>", standard=("sc6", "sc9"))
    def _self_consistency(backend, config, principle, k): ...

A name is either exact (``cogrsi``) or a parameterised family holding ``<k>``, a whole number
of at least 2 written without leading zeros (``sc<k>``: self-consistency over k samples); the
family's factory receives ``k``. ``standard`` lists the members of the project's standard set
(:data:`cogrsi_lib.baselines.SYSTEMS`, what ``params.gpu.yaml`` runs); an exact name is in it
unless told otherwise. Every module of :mod:`cogrsi_lib.baselines` is imported on the first
look-up (:func:`discover`), so a new system is one new module there (and its test): nothing
else lists it. The stage parameters that name systems (``reader_eval``'s ``systems`` and
``reference``) are checked against the registry when they load (:func:`check_systems`).

The pattern follows the registries of inspect_ai (``@solver``, ``@task``) and of
lm-evaluation-harness (``@register_model``): a decorator adds a factory under a name, and an
unknown name is refused with the list of known ones.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.reader.system import System

__all__ = [
    "Entry",
    "check_systems",
    "discover",
    "is_system",
    "known",
    "make_system",
    "reader_system",
    "standard_systems",
]

#: ``<k>`` in a registered name: a whole number >= 2 without leading zeros
K = "<k>"
_K_PATTERN = r"(?P<k>[2-9]|[1-9][0-9]+)"
_NAME = re.compile(r"[a-z][a-z0-9_]*(<k>)?[a-z0-9_]*")

#: a factory builds the system from the shared backend, the sampling settings and the reader's
#: principle (baselines ignore it), plus ``k`` for a parameterised family
Factory = Callable[..., System]
F = TypeVar("F", bound=Factory)


@dataclass(frozen=True)
class Entry:
    """One registration: its name as declared, its factory and its standard members."""

    name: str
    factory: Factory
    standard: tuple[str, ...]

    @property
    def parameterised(self) -> bool:
        return K in self.name

    def match(self, name: str) -> dict[str, int] | None:
        """The factory's parameters when ``name`` is this entry's (``{}`` for an exact name),
        else None."""
        return _match(self.name, name)


def _match(registered: str, name: str) -> dict[str, int] | None:
    if K not in registered:
        return {} if name == registered else None
    head, _, tail = registered.partition(K)
    m = re.fullmatch(re.escape(head) + _K_PATTERN + re.escape(tail), name)
    return {"k": int(m["k"])} if m else None


_ENTRIES: dict[str, Entry] = {}
_DISCOVERED = False


def _origin(factory: Factory) -> tuple[str, str]:
    return getattr(factory, "__module__", ""), getattr(factory, "__qualname__", repr(factory))


def reader_system(name: str, *, standard: Sequence[str] | None = None) -> Callable[[F], F]:
    """Register the decorated factory under ``name`` (see the module docstring)."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"a reader system's name is lower-case letters, digits and '_', with "
                         f"at most one {K}: not {name!r}")

    members = tuple((name,) if standard is None and K not in name else standard or ())
    for member in members:
        if _match(name, member) is None:
            raise ValueError(f"standard system {member!r} is not a name of {name!r}")

    def add(factory: F) -> F:
        entry = Entry(name, factory, members)
        old = _ENTRIES.get(name)
        if old is not None:
            if _origin(old.factory) != _origin(factory):  # the same one again: a reload
                raise ValueError(f"reader system {name!r} is already registered by "
                                 f"{'.'.join(_origin(old.factory))}")
        else:
            for other in _ENTRIES.values():
                if ((not entry.parameterised and other.match(name) is not None)
                        or (not other.parameterised and entry.match(other.name) is not None)):
                    raise ValueError(f"reader system {name!r} overlaps {other.name!r}")
        _ENTRIES[name] = entry
        return factory

    return add


def discover() -> None:
    """Import every module of :mod:`cogrsi_lib.baselines` once (each registers its systems)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    package = importlib.import_module("cogrsi_lib.baselines")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    _DISCOVERED = True


def known() -> list[str]:
    """The registered names, in registration order (families with their ``<k>``)."""
    discover()
    return list(_ENTRIES)


def standard_systems() -> tuple[str, ...]:
    """The standard set: every registration's standard members, in registration order."""
    discover()
    return tuple(m for e in _ENTRIES.values() for m in e.standard)


def _known_text() -> str:
    text = ", ".join(known())
    return text + (f" ({K}: a whole number >= 2)" if K in text else "")


def _lookup(name: str) -> tuple[Entry, dict[str, int]] | None:
    discover()
    found = [(e, p) for e in _ENTRIES.values() if (p := e.match(name)) is not None]
    return found[0] if found else None


def is_system(name: str) -> bool:
    """Whether ``name`` is a registered reader system (or a member of a registered family)."""
    return _lookup(name) is not None


def check_systems(names: Iterable[str]) -> list[str]:
    """``names`` as a list, or a ``ValueError`` naming every unknown one and the known ones."""
    names = list(names)
    unknown = [n for n in names if not (isinstance(n, str) and is_system(n))]
    if unknown:
        raise ValueError(_unknown(unknown))
    return names


def _unknown(names: Sequence[object]) -> str:
    return (f"unknown system{'s' if len(names) > 1 else ''} {', '.join(map(repr, names))}; "
            f"known: {_known_text()}")


def make_system(
    name: str,
    backend: Backend,
    config: ReaderConfig | None = None,
    principle: str | None = "expert",
) -> System:
    """The system called ``name``; every one shares the backend and the sampling settings of
    ``config`` (the reader also takes ``principle``)."""
    found = _lookup(name)
    if found is None:
        raise ValueError(_unknown([name]))
    entry, params = found
    system: Any = entry.factory(backend, config or ReaderConfig(), principle, **params)
    if system.name != name:  # its records carry system.name: it must be the name asked for
        raise ValueError(f"reader system {name!r} built a system named {system.name!r}")
    return system
