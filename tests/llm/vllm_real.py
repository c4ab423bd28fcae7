"""Helpers of the tests that run vLLM for real on the CPU: availability, engine settings, and
the served name of the embedded weights (the server itself is started by ``cogrsi serve``'s
code: cogrsi_lib/serve.py).

The tests skip when vLLM is not installed, unless ``COGRSI_REQUIRE_VLLM=1`` (set by
``.ci/run``), where a missing vLLM is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import urllib.request
from typing import Any

import pytest

#: engine settings for the CPU: bf16 weights, no graph compilation, a small KV cache share
CPU_ENGINE = {"dtype": "bfloat16", "max_model_len": 4096, "enforce_eager": True,
              "gpu_memory_utilization": 0.2}
#: the same for the tests' ``vllm serve``, beside which an engine of its own may run
CPU_SERVER_ENGINE = {**CPU_ENGINE, "gpu_memory_utilization": 0.15}
#: vLLM's CPU model on one thread that the OS schedules (by default it binds a thread to a
#: core it picks): for an engine or server that runs beside other tests
ONE_THREAD = {"VLLM_CPU_OMP_THREADS_BIND": "nobind", "OMP_NUM_THREADS": "1"}
SERVED_NAME = "smollm2"  # cogrsi_lib.serve.EMBEDDED_NAME


def require_vllm() -> None:
    """Skip (or fail, under ``COGRSI_REQUIRE_VLLM=1``) when vLLM is not importable."""
    if importlib.util.find_spec("vllm") is not None:
        return
    if os.environ.get("COGRSI_REQUIRE_VLLM") == "1":
        pytest.fail("COGRSI_REQUIRE_VLLM=1 but vllm is not installed (README: vLLM on the CPU)")
    pytest.skip("vllm is not installed (README: vLLM on the CPU)")


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
