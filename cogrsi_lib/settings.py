"""Typed settings: the base of every parameter schema and nested mapping in ``params.yaml``.

A :class:`Settings` model refuses keys it does not know and is read-only once loaded. A
nested mapping in ``params.yaml`` overrides its schema default key by key, at every depth:
where a schema's default for a nested setting differs from that setting's own class defaults
(``reader_config`` of ``reader_eval`` caps replies at 96 tokens, the reader's own default is
1,024), a partial mapping keeps the schema's other defaults rather than falling back to the
class's. :func:`describe_errors` turns a validation error into one line per problem, each
naming the full path of the offending key (``audit.translators.0.model.engine.dtype``).
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

__all__ = ["NonEmptyList", "Settings", "describe_errors", "error_path"]

_T = TypeVar("_T")
#: a list setting that means nothing empty (the systems to compare, the arms to run, ...)
NonEmptyList = Annotated[list[_T], Field(min_length=1)]


#: a float setting with one of these names is a share: from 0 to 1
SHARE_NAME = re.compile(r"(^|_)(share|rate|fraction|prob|probability)$|^p_")


def _kinds(annotation: Any) -> set[Any]:
    """The plain types an annotation admits (``int | None`` -> {int, NoneType})."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in typing.get_args(annotation)))
    return {annotation}


class Settings(BaseModel):
    """Unknown keys refused; read-only; a nested mapping overrides the field's default.

    Every integer setting is a count, size, cap or seed: it must be a whole number (not a
    boolean) and not negative. A boolean setting takes only ``true`` or ``false``. A float
    setting named as a share (:data:`SHARE_NAME`) lies in [0, 1]."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    @field_validator("*", mode="wrap")
    @classmethod
    def _plain_values(cls, value: Any, handler: ValidatorFunctionWrapHandler,
                      info: ValidationInfo) -> Any:
        kinds = _kinds(cls.model_fields[info.field_name].annotation)
        if bool in kinds and not isinstance(value, bool) and value is not None and (
                kinds <= {bool, type(None)}):
            raise ValueError("must be true or false")
        if int in kinds and bool not in kinds and isinstance(value, bool):
            raise ValueError("must be a whole number, not true or false")
        out = handler(value)
        if int in kinds and bool not in kinds and type(out) is int and out < 0:
            raise ValueError("must not be negative")
        if (float in kinds and isinstance(out, float) and SHARE_NAME.search(info.field_name)
                and not 0.0 <= out <= 1.0):
            raise ValueError("is a share: it must lie between 0 and 1")
        return out

    @model_validator(mode="before")
    @classmethod
    def _over_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        out = dict(data)
        for name, field in cls.model_fields.items():
            default = field.default
            if isinstance(out.get(name), Mapping) and isinstance(default, Settings):
                out[name] = _merged(default, out[name])
        return out


def _merged(default: Settings, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` over the keys ``default`` sets beyond its class defaults, depth by depth."""
    out: dict[str, Any] = {k: getattr(default, k) for k in default.model_fields_set}
    for key, value in given.items():
        below = out.get(key)
        out[key] = (_merged(below, value) if isinstance(value, Mapping)
                    and isinstance(below, Settings) else value)
    return out


def error_path(loc: Sequence[str | int], given: Any) -> str:
    """The dotted path of an error's location in the input ``given``. Location items the
    input has no place for are a union's labels (a model's ``backend`` kind, a member's
    type) and are left out, but for the last one under a mapping: a missing or unknown
    key."""
    parts: list[str] = []
    node = given
    for i, item in enumerate(loc):
        if _has(node, item):
            node = node[item]
        elif isinstance(node, Mapping) and i == len(loc) - 1:
            node = None
        else:
            continue
        parts.append(str(item))
    return ".".join(parts)


def _has(node: Any, item: str | int) -> bool:
    if isinstance(node, Mapping):
        return item in node
    return (isinstance(node, list | tuple) and isinstance(item, int)
            and 0 <= item < len(node))


def describe_errors(err: ValidationError, given: Any, prefix: str = "") -> str:
    """One line per problem of ``err``, each naming its key's full path under ``prefix``."""
    problems = []
    for e in err.errors():
        path = ".".join(p for p in (prefix, error_path(e["loc"], given)) if p) or "(section)"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            problems.append(f"unknown key '{path}'")
        elif not e["loc"] and isinstance(e.get("input"), Mapping):  # a check across keys
            problems.append(f"'{path}': {msg}")
        else:
            problems.append(f"'{path}': {msg} (got {e.get('input')!r})")
    return "; ".join(problems)
