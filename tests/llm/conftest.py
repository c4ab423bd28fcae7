"""Fixtures shared by the language-model tests."""

from __future__ import annotations

import pytest

from cogrsi_lib.serve import free_port

from . import fake_vllm as _fake_vllm
from .vllm_real import CPU_SERVER_ENGINE, ONE_THREAD, require_vllm


@pytest.fixture
def fake_vllm(monkeypatch):
    """The ``vllm`` stand-in of :mod:`tests.llm.fake_vllm`, installed for one test."""
    return _fake_vllm.install(monkeypatch)


@pytest.fixture(scope="session")
def weights():
    """The embedded model's GGUF converted once to a safetensors folder vLLM loads (skipped,
    or failed under ``COGRSI_REQUIRE_VLLM=1``, without vLLM)."""
    require_vllm()
    from cogrsi_lib.llm.weights import converted_weights, describe

    folder = converted_weights()
    assert describe(folder)["gguf"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    return folder


@pytest.fixture(scope="module")
def vllm_server(weights, tmp_path_factory):
    """One ``vllm serve`` of the embedded weights on 127.0.0.1, its ``/v1`` base URL: one per
    run, since one module uses it (``test_llm_vllm_serve.py``), and stopped when that module
    ends, so that its processes and memory do not outlive the tests that use it. Planned and
    started by ``cogrsi serve``'s own code (cogrsi_lib/serve.py) from a params section that
    names the model with ``backend: vllm``; it also answers to every model name of
    params.gpu.yaml, which the rehearsal of that file asks for. Its model runs on one unbound
    thread (:data:`ONE_THREAD`), leaving the other core to the tests beside it."""
    import dataclasses
    from pathlib import Path

    import yaml

    from cogrsi_lib.rehearse import served_names
    from cogrsi_lib.serve import launch, plan

    section = {"reader_eval": {"model": {"backend": "vllm", "engine": CPU_SERVER_ENGINE}}}
    gpu = yaml.safe_load((Path(__file__).parents[2] / "params.gpu.yaml").read_text())
    servers = [dataclasses.replace(s, aliases=tuple(served_names(gpu)))
               for s in plan(section, None, base_port=free_port())]
    with launch(servers, tmp_path_factory.mktemp("vllm-logs"), cpu=True, timeout_s=420.0,
                env={"VLLM_CPU_KVCACHE_SPACE": "1", **ONE_THREAD}) as (url,):
        yield url
