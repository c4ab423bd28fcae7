"""One ``vllm serve`` per model of a params file (``cogrsi serve``).

A stage that names several large vLLM models, such as the audit with its two translators and
the reader that replays counterexamples (CogRSI §5.4, App. C.2), would build every engine in
its own kernel, and no GPU node holds a 70B, a 122B and a 35B model side by side. Served
instead, each distinct model gets one server on GPUs of its own, started with its engine
settings, and every stage that names it reaches it through the OpenAI-compatible backend: the
params file is rewritten with each vLLM model replaced by ``backend: openai`` at its server.

:func:`plan` reads the models from the stage schemas (every key path that holds a
``backend: vllm`` model) and gives each distinct model (weights, adapter and engine settings)
its GPUs in order; :func:`command` is its ``vllm serve`` command line; :func:`served_params`
the rewritten file; :func:`launch` starts the servers and waits until each answers
``/health``. Servers on other nodes are named with ``remote`` (model name to base URL) and
left out of the plan.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogrsi_lib import stage_params
from cogrsi_lib.llm.vllm_backend import VLLMSpec
from cogrsi_lib.stage_check import engine_key, model_specs

__all__ = ["ServeError", "Server", "command", "free_port", "launch", "plan", "served_name",
           "served_params", "served_spec", "set_path"]

#: the served name of the embedded weights converted for vLLM (``model`` not given)
EMBEDDED_NAME = "smollm2"
#: compact JSON under a reply format, as the vLLM and embedded backends write it
STRUCTURED_OUTPUTS = {"backend": "xgrammar", "disable_any_whitespace": True}


class ServeError(ValueError):
    """The params file's models cannot be served as asked; one line saying why."""


@dataclass(frozen=True)
class Server:
    """One ``vllm serve``: the model it serves, its settings, GPUs and port, and every key
    path of the params file that names it."""

    name: str
    spec: VLLMSpec
    gpus: tuple[int, ...]
    port: int
    uses: tuple[str, ...]
    #: further names the server answers to (``--served-model-name``), after ``name``
    aliases: tuple[str, ...] = ()

    @property
    def n_gpus(self) -> int:
        return len(self.gpus)


def _gpus_needed(spec: VLLMSpec) -> int:
    e = spec.engine
    return ((e.tensor_parallel_size or 1) * (e.pipeline_parallel_size or 1)
            * (e.data_parallel_size or 1))


def served_name(spec: VLLMSpec) -> str:
    """The name a vLLM model is served under: its model id (the embedded weights':
    :data:`EMBEDDED_NAME`), with its adapter's folder name."""
    name = spec.model or EMBEDDED_NAME
    return f"{name}+{Path(spec.adapter).name}" if spec.adapter else name


def _vllm_models(params: Mapping[str, Any]) -> list[tuple[str, VLLMSpec]]:
    """(key path, spec) of every vLLM model the file's stage sections name."""
    found = []
    for stage, checked in stage_params.validate_file(params).items():
        found += [(p, s) for p, s in model_specs(checked, stage) if isinstance(s, VLLMSpec)]
    return found


def plan(params: Mapping[str, Any], gpus: int | None, *, base_port: int = 8000,
         remote: Mapping[str, str] | None = None) -> list[Server]:
    """The servers that ``params`` needs on this node: one per distinct vLLM model (the same
    weights, adapter and engine settings), ``gpus`` GPUs given out in order (``None``: the
    CPU, no GPUs), ports from ``base_port``. Models named in ``remote`` are served elsewhere
    and get no server here."""
    remote = dict(remote or {})
    by_key: dict[str, tuple[VLLMSpec, list[str]]] = {}
    for path, spec in _vllm_models(params):
        if served_name(spec) in remote:
            continue
        by_key.setdefault(engine_key(spec), (spec, []))[1].append(path)
    names = [served_name(spec) for spec, _ in by_key.values()]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ServeError(f"{twice[0]} is named with different engine settings; give every use "
                         "of a model the same `engine` (one server per model)")
    servers, next_gpu = [], 0
    for k, (spec, uses) in enumerate(by_key.values()):
        need = 0 if gpus is None else _gpus_needed(spec)
        servers.append(Server(served_name(spec), spec, tuple(range(next_gpu, next_gpu + need)),
                              base_port + k, tuple(uses)))
        next_gpu += need
    if gpus is not None and next_gpu > gpus:
        sizes = ", ".join(f"{s.name} {s.n_gpus}" for s in servers)
        raise ServeError(f"the models need {next_gpu} GPUs ({sizes}) and this node has {gpus}: "
                         "serve some on another node and name them with --remote NAME=URL")
    return servers


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def command(server: Server, host: str = "127.0.0.1", *, cpu: bool = False) -> list[str]:
    """The ``vllm serve`` command line of ``server`` (as a module: the CPU build's ``vllm``
    script looks up a distribution named ``vllm``). On the CPU chunked prefill is off, as the
    vLLM backend turns it off there, so that per-request seeds hold; and the model runs in the
    engine's own process (the ``uni`` executor, which :func:`launch` enables): with a worker
    process of its own, the engine spin-waits on it, about a core's worth of CPU (the loops'
    rehearsal took 111 s this way against 153 s, on one thread)."""
    spec = server.spec
    model = spec.model
    if model is None:
        from cogrsi_lib.llm.weights import converted_weights

        model = str(converted_weights())
    args = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", model,
            "--served-model-name", spec.model or EMBEDDED_NAME, *server.aliases, "--host", host,
            "--port", str(server.port), "--seed", "0",
            "--structured-outputs-config", json.dumps(STRUCTURED_OUTPUTS)]
    engine = spec.engine.kwargs()
    if cpu:
        engine["enable_chunked_prefill"] = False
    for key, value in engine.items():
        if key == "seed":
            args[args.index("--seed") + 1] = str(value)
        elif isinstance(value, bool):
            args.append(_flag(key) if value else "--no-" + _flag(key)[2:])
        else:
            args += [_flag(key), str(value)]
    if cpu:
        args += ["--distributed-executor-backend", "uni"]
    if spec.adapter:
        args += ["--enable-lora", "--lora-modules", f"{server.name}={spec.adapter}"]
    return args


def set_path(tree: Any, path: str, value: Any) -> None:
    """Set the value at a key path such as ``audit.translators[0].model`` (stage first)."""
    keys: list[str | int] = [int(k) if k.isdigit() else k
                             for k in re.findall(r"[^.\[\]]+", path)]
    for key in keys[:-1]:
        tree = tree[key]
    tree[keys[-1]] = value


def served_spec(name: str, base_url: str, chat_template_kwargs: Mapping[str, Any] | None,
                cache_dir: str | None) -> dict[str, Any]:
    """A model's settings at a ``vllm serve``: ``backend: openai`` under ``name``, formats
    enforced by the server, its chat template arguments kept (the vLLM backend's default of
    thinking off made explicit), and its cache folder."""
    served = {"backend": "openai", "model": name, "base_url": base_url,
              "structured_outputs": "vllm",
              "chat_template_kwargs": dict(chat_template_kwargs if chat_template_kwargs
                                           is not None else {"enable_thinking": False})}
    if cache_dir:
        served["cache_dir"] = cache_dir
    return served


def served_params(params: Mapping[str, Any], servers: list[Server], host: str = "127.0.0.1",
                  remote: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``params`` with every vLLM model replaced by ``backend: openai`` at its server (its
    cache folder and chat template arguments kept; the vLLM backend's default of thinking
    off made explicit), every other setting as it was."""
    urls = {s.name: f"http://{host}:{s.port}/v1" for s in servers} | dict(remote or {})
    out = copy.deepcopy(dict(params))
    for path, spec in _vllm_models(params):
        name = served_name(spec)
        if name not in urls:
            raise ServeError(f"{path}: no server for {name}")
        set_path(out, path, served_spec(name, urls[name], spec.chat_template_kwargs,
                                        spec.cache_dir))
    stage_params.validate_file(out)  # the rewritten file still fits every schema
    return out


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def launch(servers: list[Server], log_dir: Path, host: str = "127.0.0.1", *,
           cpu: bool = False, timeout_s: float = 1800.0,
           env: Mapping[str, str] | None = None) -> Iterator[list[str]]:
    """Start every server (each on its GPUs, ``CUDA_VISIBLE_DEVICES``), wait until each
    answers ``/health``, yield their ``/v1`` base URLs, and stop them on exit. A server that
    exits while starting raises with the tail of its log."""
    log_dir.mkdir(parents=True, exist_ok=True)
    procs, roots = [], []
    try:
        for s in servers:
            log = open(log_dir / f"{s.port}.log", "wb")  # noqa: SIM115
            penv = {**os.environ, **(env or {})}
            if cpu:  # vLLM's CPU platform takes the uni executor only so (see command)
                penv["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
            else:
                penv["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, s.gpus))
            procs.append(subprocess.Popen(command(s, host, cpu=cpu), stdout=log,
                                          stderr=subprocess.STDOUT, env=penv,
                                          start_new_session=True))
            roots.append(f"http://{host}:{s.port}")
        deadline = time.monotonic() + timeout_s
        waiting = set(range(len(servers)))
        while waiting:
            for i in sorted(waiting):
                if procs[i].poll() is not None:
                    tail = (log_dir / f"{servers[i].port}.log").read_text(errors="replace")
                    raise ServeError(f"vllm serve of {servers[i].name} exited "
                                     f"({procs[i].returncode}):\n{tail[-3000:]}")
                if _healthy(roots[i]):
                    waiting.discard(i)
            if waiting and time.monotonic() > deadline:
                late = ", ".join(servers[i].name for i in sorted(waiting))
                raise ServeError(f"not healthy after {timeout_s:.0f} s: {late}")
            time.sleep(1.0)
        yield [f"{r}/v1" for r in roots]
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def describe(servers: list[Server], host: str = "127.0.0.1", *, cpu: bool = False) -> list[str]:
    """A few lines per server: name, GPUs, address, the key paths it serves, its command."""
    lines = []
    for s in servers:
        where = "the CPU" if cpu else f"GPUs {','.join(map(str, s.gpus))}"
        lines.append(f"{s.name}: {where}, http://{host}:{s.port}/v1, for {len(s.uses)} "
                     f"setting(s): {', '.join(s.uses)}")
        lines.append("  " + shlex.join(command(s, host, cpu=cpu)[1:]))
    return lines


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on now."""
    import socket

    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def visible_gpus() -> int:
    """The CUDA devices this process sees (0 without torch or CUDA)."""
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
