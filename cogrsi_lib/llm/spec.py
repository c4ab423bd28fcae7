"""One way to name a model: ``ModelSpec``, the typed settings of any registered backend kind.

Every model a stage takes (``reader_eval.llm``, ``scorecard.model``,
``audit.translators[i].model``, ...) is a ``ModelSpec``: a mapping whose ``backend`` key
picks the kind and whose other keys are that kind's typed settings (unknown keys refused,
each error naming its full path), or a bare kind name for the kind with its defaults::

    model: embedded                                  # the CPU model, no completion cache
    model: {backend: embedded, cache_dir: .cache/llm}
    model: {backend: vllm, model: Qwen/Qwen3.5-35B-A3B-FP8, engine: {max_model_len: 32768}}
    model: {backend: openai, model: served-name, base_url: http://localhost:8000/v1}
    model: {backend: fake, reply: {answer: A}}       # a constant reply
    model: scripted                                  # the stage's scripted stand-in
    model: {backend: scripted, variant: alt}         # another of its stand-ins

The kinds are the :class:`~cogrsi_lib.llm.backend.BackendSpec` subclasses registered by the
modules of :data:`CATALOGUE` (importing one registers its kind). A new backend is one module
(its backend and its registered spec) and one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import partial
from typing import Annotated, Any, Union

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Tag,
    TypeAdapter,
    ValidationError,
)

from cogrsi_lib.llm.backend import BACKEND_SPECS, BackendSpec
from cogrsi_lib.settings import describe_errors

__all__ = [
    "CATALOGUE", "ModelSpec", "RealModel", "StageModel", "parse_model", "spec_union",
    "stage_model",
]

#: the backend modules; importing each registers its kind
CATALOGUE = (
    "cogrsi_lib.llm.embedded",
    "cogrsi_lib.llm.vllm_backend",
    "cogrsi_lib.llm.openai_backend",
    "cogrsi_lib.llm.fake",
)
for _module in CATALOGUE:
    importlib.import_module(_module)


def _shorthand(value: Any) -> Any:
    """A bare kind name is that kind with its defaults; a mapping must name its kind."""
    if isinstance(value, str):
        return {"backend": value}
    if isinstance(value, Mapping) and "backend" not in value:
        raise ValueError(f"a model's settings name their backend ({', '.join(BACKEND_SPECS)})")
    return value


def spec_union() -> Any:
    """The settings of every kind registered so far, told apart by ``backend``."""
    kinds = tuple(Annotated[cls, Tag(kind)] for kind, cls in BACKEND_SPECS.items())
    union = Union[kinds] if len(kinds) > 1 else kinds[0]  # noqa: UP007 - built at run time
    tag = Discriminator(_kind, custom_error_type="unknown_backend",
                        custom_error_message=f"unknown backend (kinds: {', '.join(BACKEND_SPECS)})")
    return Annotated[union, tag, BeforeValidator(_shorthand)]


def _kind(value: Any) -> Any:
    return value.get("backend") if isinstance(value, Mapping) else getattr(value, "backend", None)


#: any model a stage takes (the kinds of :data:`CATALOGUE`)
ModelSpec = spec_union()

_ADAPTERS: dict[tuple[str, ...], TypeAdapter[Any]] = {}


def parse_model(value: BackendSpec | Mapping[str, Any] | str, name: str = "model"
                ) -> BackendSpec:
    """The typed settings of ``value`` (a mapping, a bare kind name, or settings already);
    a ``ValueError`` names every offending key under ``name``. Every kind registered at the
    time of the call is accepted."""
    if isinstance(value, BackendSpec):
        return value
    kinds = tuple(BACKEND_SPECS)
    if kinds not in _ADAPTERS:
        _ADAPTERS[kinds] = TypeAdapter(spec_union())
    try:
        return _ADAPTERS[kinds].validate_python(value)
    except ValidationError as err:
        raise ValueError(describe_errors(err, value, name)) from None


def _check_variant(variants: tuple[str, ...], spec: BackendSpec) -> BackendSpec:
    variant = getattr(spec, "variant", None)
    if spec.backend != "scripted" or variant in variants:
        return spec
    if not variants:
        raise ValueError("no scripted stand-in here: name a real backend (or backend fake "
                         "for a constant reply)")
    raise ValueError(f"unknown scripted variant {variant!r} (this one has: "
                     f"{', '.join(variants)})")


def stage_model(*variants: str) -> Any:
    """:data:`ModelSpec` for a model whose scripted stand-ins are ``variants`` (none: no
    scripted model); any other is refused when the parameters are loaded."""
    return Annotated[ModelSpec, AfterValidator(partial(_check_variant, variants))]


#: a model without a scripted stand-in (``backend: fake`` gives a constant reply)
RealModel = stage_model()
#: a model whose scripted stand-in is the stage's one ``default``
StageModel = stage_model("default")
