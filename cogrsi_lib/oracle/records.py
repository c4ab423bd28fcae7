"""Immutable records that the oracle builds by the thousand (worlds, events, questions,
beliefs, answers): frozen dataclasses whose ``__init__`` writes each field directly.

A frozen dataclass's generated ``__init__`` goes through ``object.__setattr__`` once per
field, which is most of what building one costs. :func:`record` gives the class an
``__init__`` with the same signature and defaults that writes each slot through its
descriptor (or, without slots, the instance's ``__dict__``) and then calls
``__post_init__`` if the class has one; everything else (equality, hashing, ``repr``,
refusing assignment, ``dataclasses.replace``) is the dataclass's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def record(cls: type[T] | None = None, *, slots: bool = True
           ) -> type[T] | Callable[[type[T]], type[T]]:
    """``cls`` as a frozen dataclass (slotted unless ``slots=False``) with a direct-writing
    ``__init__``; usable as ``@record`` or ``@record(slots=False)``."""
    if cls is None:
        return lambda c: _record(c, slots)
    return _record(cls, slots)


def _record(cls: type[T], slots: bool) -> type[T]:
    cls = dataclasses.dataclass(frozen=True, slots=slots, init=False)(cls)
    namespace: dict = {}
    params, body = [], []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a record takes no default_factory")
        else:
            params.append(f.name)
        if slots:
            namespace[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
            body.append(f"    _set_{f.name}(self, {f.name})")
        else:
            body.append(f"    fields[{f.name!r}] = {f.name}")
    if not slots:
        body.insert(0, "    fields = self.__dict__")
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body or ["    pass"])
    exec(source, namespace)  # noqa: S102 - built above from the class's own field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls
