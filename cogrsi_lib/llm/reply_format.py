"""Reply formats: each prompt family declares the form of its reply once (DESIGN.md, Principles).

A :class:`ReplyFormat` is one of

- ``json``: a pydantic model; its JSON schema is the constraint and the model validates,
- ``choice``: a list of exact replies,
- ``regex``: a regular expression the whole reply must match.

The same object serves both ends. A backend enforces it while decoding when the request
asks for structured output (vLLM ``StructuredOutputsParams``, an OpenAI-compatible
``response_format`` or vLLM's ``structured_outputs``, xgrammar in the embedded decode loop),
and :meth:`ReplyFormat.parse` is the family's strict parser, whether the reply was
constrained or generated freely. A reply that breaks the format raises :class:`ReplyError`;
nothing is repaired or mapped to a nearest value.

JSON replies are read strictly: surrounding whitespace and one fenced block that is the whole
reply are allowed; duplicate keys, ``NaN``/``Infinity`` and keys the model does not declare are
not. Constrained JSON is generated compactly (no optional whitespace), which is what lets a
bounded string field bound the reply's length in tokens (:func:`reasoning_chars`).
"""

from __future__ import annotations

import json
import re
import threading
import typing
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from cogrsi_lib.llm.types import canonical_json

Kind = Literal["json", "choice", "regex"]
KINDS: tuple[Kind, ...] = ("json", "choice", "regex")

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(?P<body>.*?)\n?[ \t]*```", re.S)


class ReplyError(ValueError):
    """A reply that breaks its family's declared format; ``reason`` says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ReplyModel(BaseModel):
    """Base of every JSON reply model: strict types, no undeclared keys, immutable."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ReplyFormat:
    """The declared form of one prompt family's reply (see the module docstring).

    Equality and hashing go by ``(family, kind, spec)``; ``spec`` is the canonical text of the
    constraint (the JSON schema, the JSON list of choices, or the regex).
    """

    __slots__ = ("family", "kind", "spec", "model", "fences", "_regex")

    def __init__(
        self, family: str, kind: Kind, spec: str, model: type[BaseModel] | None = None,
        fences: bool = True,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"reply format kind must be one of {KINDS}, not {kind!r}")
        if kind == "json" and model is None:
            raise ValueError("a json reply format needs its pydantic model")
        self.family = family
        self.kind = kind
        self.spec = spec
        self.model = model
        self.fences = fences
        self._regex = re.compile(spec, re.S) if kind == "regex" else None

    # -- construction -----------------------------------------------------------------------
    @classmethod
    def json(cls, family: str, model: type[BaseModel], *, fences: bool = True) -> ReplyFormat:
        """A JSON reply validated by ``model`` (build it with :func:`reply_model`);
        ``fences``: whether one fenced block that is the whole reply is read as its JSON."""
        schema = model.model_json_schema()
        # not canonical_json: the order of "properties" is the order the model writes them
        return cls(family, "json", json.dumps(schema, separators=(",", ":")), model, fences)

    @classmethod
    def choice(cls, family: str, choices: Sequence[str]) -> ReplyFormat:
        """A reply that is exactly one of ``choices``."""
        items = [str(c) for c in choices]
        if not items or len(set(items)) != len(items):
            raise ValueError("a choice format needs distinct choices")
        return cls(family, "choice", canonical_json(items))

    @classmethod
    def regex(cls, family: str, pattern: str) -> ReplyFormat:
        """A reply the regular expression ``pattern`` matches in full."""
        re.compile(pattern)
        return cls(family, "regex", pattern)

    # -- views of the constraint --------------------------------------------------------------
    def schema(self) -> dict[str, Any]:
        if self.kind != "json":
            raise TypeError(f"{self.family}: a {self.kind} format has no JSON schema")
        return json.loads(self.spec)

    def choices(self) -> list[str]:
        if self.kind != "choice":
            raise TypeError(f"{self.family}: a {self.kind} format has no choices")
        return json.loads(self.spec)

    def constraint(self) -> dict[str, str]:
        """What the completion cache keys on: the kind and the canonical spec."""
        return {"kind": self.kind, "spec": self.spec}

    # -- the strict parser --------------------------------------------------------------------
    def parse(self, text: object) -> Any:
        """The reply, validated: a model instance (json), the choice (choice) or the match
        (regex). Raises :class:`ReplyError` with the reason otherwise."""
        if not isinstance(text, str):
            raise ReplyError(f"reply is {type(text).__name__}, not text")
        body = text.strip()
        if self.kind == "choice":
            if body not in self.choices():
                raise ReplyError(f"reply {body[:40]!r} is not one of the choices")
            return body
        if self.kind == "regex":
            assert self._regex is not None
            m = self._regex.fullmatch(body)
            if m is None:
                raise ReplyError(f"reply does not have the {self.family} form")
            return m
        return validate_json(body, self.model, self.fences)  # type: ignore[arg-type]

    def ok(self, text: object) -> bool:
        """Whether ``text`` parses."""
        try:
            self.parse(text)
        except ReplyError:
            return False
        return True

    # -- identity -----------------------------------------------------------------------------
    def _key(self) -> tuple[str, str, str, bool]:
        return (self.family, self.kind, self.spec, self.fences)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReplyFormat) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ReplyFormat({self.family!r}, {self.kind!r})"


# -- JSON ---------------------------------------------------------------------------------------
class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise _Duplicate(f"duplicate key(s) {dup}")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise _Duplicate(f"non-finite number {name}")


def load_json(text: str, fences: bool = True) -> Any:
    """One JSON value: the whole text, or (``fences``) one fenced block that is the whole
    text; no duplicate keys and no NaN/Infinity. Raises :class:`ReplyError`."""
    body = text.strip()
    m = _FENCE.fullmatch(body) if fences else None
    if m:
        body = m.group("body").strip()
    try:
        return json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except _Duplicate as err:
        raise ReplyError(str(err)) from None
    except json.JSONDecodeError as err:
        raise ReplyError(f"not one JSON value ({err.msg} at char {err.pos})") from None


def validate_json(text: str, model: type[BaseModel], fences: bool = True) -> BaseModel:
    """``text`` as an instance of ``model`` (strict); raises :class:`ReplyError`."""
    obj = load_json(text, fences)
    if not isinstance(obj, dict):
        raise ReplyError(f"a JSON {type(obj).__name__}, not an object")
    try:
        return model.model_validate_json(json.dumps(obj), strict=True)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
        raise ReplyError(f"{where}: {first.get('msg', 'invalid')}") from None


_MODELS: dict[str, type[BaseModel]] = {}
_MODELS_LOCK = threading.Lock()


def reply_model(name: str, **fields: tuple[Any, Any]) -> type[BaseModel]:
    """A strict reply model with fields in the given order (``name=(type, Field(...))``);
    models with the same name and fields are built once. Field order is the order a
    constrained model writes them, so put a reasoning field before the answer."""
    key = repr((name, [(k, _type_key(tp), info) for k, (tp, info) in fields.items()]))
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = create_model(name, __base__=ReplyModel, **fields)  # type: ignore[call-overload]
            _MODELS[key] = model
    return model


def _type_key(tp: Any) -> Any:
    """A field type as a cache key: a nested reply model by identity (its repr names only
    the class), generics by their parts."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return ("model", tp.__name__, id(tp))
    args = typing.get_args(tp)
    if args:
        return (repr(typing.get_origin(tp)), tuple(_type_key(a) for a in args))
    return repr(tp)


def reasoned_model(
    name: str, max_tokens: int, description: str, *, key: str = "reasoning",
    **fields: tuple[Any, Any],
) -> type[BaseModel]:
    """A reply model whose first field ``key`` is a bounded reasoning step, followed by
    ``fields``. The bound (:func:`reasoning_chars`) leaves room for the rest of the reply, so a
    reply always fits ``max_tokens``."""
    rest = _json_chars(reply_model(f"{name}Rest", **fields).model_json_schema())
    reserved = (rest or 0) + len(json.dumps(key)) + 4  # the key, quotes, comma, end token
    first = (str, Field(max_length=reasoning_chars(max_tokens, reserved),
                        description=description))
    return reply_model(name, **{key: first}, **fields)


def enum_of(values: Sequence[Any]) -> Any:
    """``Literal[values...]``: a field that must be one of ``values``."""
    vals = tuple(dict.fromkeys(values))
    if not vals:
        raise ValueError("an enum needs at least one value")
    return Literal[vals]  # type: ignore[valid-type]


def text_field(max_chars: int, min_chars: int = 0, description: str = "") -> Any:
    """A bounded string field (``Field(min_length, max_length)``)."""
    return Field(min_length=min_chars, max_length=max(min_chars, max_chars),
                 description=description or None)


# -- what each server API is sent ------------------------------------------------------------------
class UnsupportedReplyFormat(ValueError):
    """A backend setting that cannot enforce this kind of reply format."""


def vllm_structured_outputs(fmt: ReplyFormat) -> dict[str, Any]:
    """vLLM's ``StructuredOutputsParams`` fields for a format (vLLM >= 0.12, where the
    ``guided_*`` fields are gone); also what a vLLM server takes as ``structured_outputs``.
    JSON is asked for compactly, as the embedded backend generates it."""
    if fmt.kind == "json":
        return {"json": fmt.schema(), "disable_any_whitespace": True}
    if fmt.kind == "choice":
        return {"choice": fmt.choices()}
    return {"regex": fmt.spec}


def openai_response_format(fmt: ReplyFormat) -> dict[str, Any]:
    """The OpenAI ``response_format`` of a JSON format (strict JSON schema). Choice and regex
    formats have no such form: ask a vLLM server through ``structured_outputs`` instead."""
    if fmt.kind != "json":
        raise UnsupportedReplyFormat(
            f"{fmt.family}: a {fmt.kind} reply format cannot go through response_format; "
            "use structured_outputs: vllm with a vLLM server, or structured: false"
        )
    name = re.sub(r"[^A-Za-z0-9_-]", "_", fmt.family)[:64] or "reply"
    return {"type": "json_schema", "json_schema": {"name": name, "schema": fmt.schema(),
                                                   "strict": True}}


# -- the format in words, for the prompt ----------------------------------------------------------
def describe(fmt: ReplyFormat, hint: str = "") -> str:
    """The reply instruction a prompt shows, derived from the format itself: a JSON skeleton
    with each field's description and bounds, or the list of choices. A regex has no
    readable form; its family passes ``hint`` (an example of the form)."""
    if fmt.kind == "json":
        return f"Reply with one JSON object and nothing else: {_skeleton(fmt.schema())}"
    if fmt.kind == "choice":
        return "Reply with exactly one of: " + ", ".join(fmt.choices())
    if not hint:
        raise ValueError(f"{fmt.family}: a regex format needs a hint to describe it")
    return hint


def _alternatives(values: Sequence[Any]) -> str:
    return " | ".join(json.dumps(v) for v in values)


def _skeleton(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> str:
    defs = schema.get("$defs", defs or {})
    if "$ref" in schema:
        return _skeleton(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        desc = {"description": schema["description"]} if "description" in schema else {}
        return " | ".join(_skeleton({**desc, **s}, defs) for s in schema["anyOf"])
    desc = schema.get("description", "")
    if "enum" in schema:
        return _alternatives(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        inner = ", ".join(f'"{k}": {_skeleton(v, defs)}' for k, v in props.items())
        return "{" + inner + "}"
    if kind == "array":
        item = _skeleton(schema.get("items", {}), defs)
        most = schema.get("maxItems")
        return f"[{item}, ...]" + (f" (at most {most})" if most is not None else "")
    if kind == "string":
        bound = f", at most {schema['maxLength']} characters" if "maxLength" in schema else ""
        return f'"<{desc or "text"}{bound}>"'
    if kind in ("number", "integer"):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        rng = f" from {lo} to {hi}" if lo is not None and hi is not None else ""
        noun = "a whole number" if kind == "integer" else "a number"
        return f"<{desc + ': ' if desc else ''}{noun}{rng}>"
    if kind == "null":
        return "null"
    if kind == "boolean":
        return "true or false"
    return f"<{desc or 'value'}>"


# -- length budgets ------------------------------------------------------------------------------
#: characters of a compact JSON reply's free text per token of the output cap. A token of
#: this byte-level vocabulary covers at least one ASCII character, so a budget of one character
#: per token cannot overrun; English prose averages about four. Two leaves a margin for
#: digits (one token each) while using the cap.
CHARS_PER_TOKEN = 2


#: the longest compact JSON number xgrammar writes for a bounded number field
NUMBER_CHARS = 24


def max_chars(fmt: ReplyFormat) -> int | None:
    """An upper bound on the length in characters of any reply the format allows (compact
    JSON, ASCII text), or None when it is unbounded (a string, array or regex without a
    bound). A byte-level token covers at least one ASCII character, so this many tokens
    (plus the end token) always suffice."""
    if fmt.kind == "choice":
        return max(len(c) for c in fmt.choices())
    if fmt.kind == "regex":
        return None
    return _json_chars(fmt.schema())


def _json_chars(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> int | None:
    defs = schema.get("$defs", defs or {})
    if "$ref" in schema:
        return _json_chars(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        parts = [_json_chars(s, defs) for s in schema["anyOf"]]
        return None if None in parts else max(p for p in parts if p is not None)
    if "enum" in schema:
        return max(len(json.dumps(v, separators=(",", ":"))) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        total = 2 + max(0, len(schema.get("properties", {})) - 1)
        for k, v in schema.get("properties", {}).items():
            n = _json_chars(v, defs)
            if n is None:
                return None
            total += len(json.dumps(k)) + 1 + n
        return total
    if kind == "array":
        most, item = schema.get("maxItems"), _json_chars(schema.get("items", {}), defs)
        if most is None or item is None:
            return None
        return 2 + most * item + max(0, most - 1)
    if kind == "string":
        return 2 + schema["maxLength"] if "maxLength" in schema else None
    if kind in ("number", "integer"):
        return NUMBER_CHARS
    if kind in ("null", "boolean"):
        return 5
    return None


def reasoning_chars(max_tokens: int, reserved_chars: int, floor: int = 16) -> int:
    """How many characters a reasoning field may hold in a reply capped at ``max_tokens``
    whose fixed part (keys, punctuation, the longest answer, the end token) takes
    ``reserved_chars`` characters, hence at most as many tokens; at least ``floor``."""
    return max(floor, CHARS_PER_TOKEN * (max_tokens - reserved_chars))
