"""``cogrsi serve``: one server per vLLM model of a params file, GPUs given out without overlap,
and the params file rewritten to reach them (cogrsi_lib/serve.py). The launch itself is
exercised for real by the ``vllm_server`` fixture (tests/llm/conftest.py), which starts the
tests' ``vllm serve`` through :func:`cogrsi_lib.serve.launch`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from cogrsi_lib.cli import app
from cogrsi_lib.serve import ServeError, command, plan, served_params

ROOT = Path(__file__).resolve().parents[1]
GPU = yaml.safe_load((ROOT / "params.gpu.yaml").read_text())
READER = "Qwen/Qwen3.5-35B-A3B-FP8"
LLAMA = "meta-llama/Llama-3.3-70B-Instruct"


def models(tree, path=""):
    """(key path, mapping) of every mapping that names a backend."""
    if isinstance(tree, dict):
        if "backend" in tree:
            yield path, tree
        for k, v in tree.items():
            yield from models(v, f"{path}.{k}" if path else k)
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from models(v, f"{path}[{i}]")


def test_the_gpu_setting_needs_one_server_per_model_on_disjoint_gpus() -> None:
    servers = plan(GPU, 8)
    by_name = {s.name: s for s in servers}
    assert set(by_name) == {READER, LLAMA, "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-9B"}
    gpus = [g for s in servers for g in s.gpus]
    assert len(gpus) == len(set(gpus)) and max(gpus) < 8
    for s in servers:
        assert s.n_gpus == (s.spec.engine.tensor_parallel_size or 1)
        assert s.spec.engine.max_model_len  # every model's context is sized, none at 256K
    assert len({s.port for s in servers}) == len(servers)
    # the reader serves every stage that names it; the translator also serves Gate D
    assert {"audit.replay.model", "reader_eval.models[0]", "harness.models[0]",
            "pddl_mind.models[0]", "loops.model", "scorecard.model"} <= set(by_name[READER].uses)
    assert {"audit.translators[0].model", "scorecard.alt_model"} <= set(by_name[LLAMA].uses)
    # reader_eval's three backbones (Table 3A), each on the server of its name
    assert {"reader_eval.models[2]", "pddl_mind.models[2]", "harness.models[2]"} <= set(
        by_name[LLAMA].uses)
    assert {"reader_eval.models[1]", "pddl_mind.models[1]", "harness.models[1]"} <= set(
        by_name["Qwen/Qwen3.5-122B-A10B"].uses)


def test_too_few_gpus_is_one_line_naming_what_each_model_needs() -> None:
    with pytest.raises(ServeError, match=r"need 8 GPUs \(.*meta-llama/Llama-3.3-70B-Instruct "
                                         r"2.*\) and this node has 4: .*--remote"):
        plan(GPU, 4)


def test_the_served_file_reaches_every_model_through_its_server() -> None:
    servers = plan(GPU, 8)
    served = served_params(GPU, servers)
    port = {s.name: s.port for s in servers}
    found = list(models(served))
    assert found and not [p for p, m in found if m["backend"] == "vllm"]
    for path, m in found:
        if m["backend"] != "openai":
            continue
        assert m["base_url"] == f"http://127.0.0.1:{port[m['model']]}/v1", path
        assert m["structured_outputs"] == "vllm"
        assert m["chat_template_kwargs"] == {"enable_thinking": False}
        assert m["cache_dir"] == ".cache/llm"
    # every other setting as it was
    assert served["reader_eval"]["systems"] == GPU["reader_eval"]["systems"]
    assert served["train"] == GPU["train"]


def test_a_model_on_another_node_gets_its_url_and_no_server_here() -> None:
    remote = {LLAMA: "http://node2:8000/v1"}
    servers = plan(GPU, 6, remote=remote)  # 8 GPUs less its 2
    assert LLAMA not in {s.name for s in servers}
    served = served_params(GPU, servers, remote=remote)
    assert served["scorecard"]["alt_model"]["base_url"] == "http://node2:8000/v1"
    assert served["audit"]["translators"][0]["model"]["base_url"] == "http://node2:8000/v1"


def test_one_model_with_two_engine_settings_is_refused() -> None:
    spec = {"backend": "vllm", "model": "org/m", "engine": {"max_model_len": 4096}}
    params = {"reader_eval": {"model": spec},
              "harness": {"model": {**spec, "engine": {"max_model_len": 8192}}}}
    with pytest.raises(ServeError, match="org/m is named with different engine settings"):
        plan(params, 8)


def test_the_command_carries_the_engine_settings() -> None:
    (s,) = [s for s in plan(GPU, 8) if s.name == LLAMA]
    cmd = command(s)
    args = " ".join(cmd)
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    for flag in ("--model meta-llama/Llama-3.3-70B-Instruct", "--tensor-parallel-size 2",
                 "--max-model-len 16384", "--dtype bfloat16", "--gpu-memory-utilization 0.9",
                 f"--port {s.port}", "--host 127.0.0.1"):
        assert flag in args
    config = json.loads(cmd[cmd.index("--structured-outputs-config") + 1])
    assert config == {"backend": "xgrammar", "disable_any_whitespace": True}
    assert "chunked" not in args and "executor" not in args
    on_cpu = command(s, cpu=True)
    assert "--no-enable-chunked-prefill" in on_cpu  # seeds hold on the CPU
    # the model in the engine's own process: no worker process for the engine to spin on
    assert on_cpu[on_cpu.index("--distributed-executor-backend") + 1] == "uni"
    eager = {"reader_eval": {"model": {"backend": "vllm", "model": "org/m",
                                       "engine": {"enforce_eager": False, "seed": 3}}}}
    cmd = command(plan(eager, 1)[0])
    assert "--no-enforce-eager" in cmd and cmd[cmd.index("--seed") + 1] == "3"


def test_cli_dry_run_writes_the_served_file_and_refuses_too_few_gpus(tmp_path) -> None:
    out = tmp_path / "served.yaml"
    runner = CliRunner()
    ok = runner.invoke(app, ["serve", "--params", str(ROOT / "params.gpu.yaml"), "--gpus", "8",
                             "--out", str(out), "--dry-run"])
    assert ok.exit_code == 0, ok.output
    # the audit is the file's first model stage: its translator A gets the first server
    assert f"{LLAMA}: GPUs 0,1, http://127.0.0.1:8000/v1" in ok.output
    written = yaml.safe_load(out.read_text())
    assert written["audit"]["translators"][0]["model"]["base_url"] == "http://127.0.0.1:8000/v1"
    # reader_eval's three backbones: on the servers of the audit's two and the reader's own
    assert [m["base_url"] for m in written["reader_eval"]["models"]] == [
        "http://127.0.0.1:8002/v1", "http://127.0.0.1:8001/v1", "http://127.0.0.1:8000/v1"]
    bad = runner.invoke(app, ["serve", "--params", str(ROOT / "params.gpu.yaml"), "--gpus", "4",
                              "--out", str(tmp_path / "x.yaml"), "--dry-run"])
    assert bad.exit_code == 2 and "need 8 GPUs" in bad.output
    assert not (tmp_path / "x.yaml").exists()
