"""``cogrsi stage NAME --check``: settings, benchmark data and model endpoints checked
without a kernel (cogrsi_lib/stage_check.py). The real ``vllm serve`` case is in
tests/llm/test_llm_vllm_serve.py; here a plain HTTP server on 127.0.0.1 plays the endpoint."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from typer.testing import CliRunner

from cogrsi_lib.cli import app
from cogrsi_lib.stage_check import CheckError, check_stage, model_specs


@pytest.fixture
def endpoint():
    """A server on 127.0.0.1 whose /v1/models lists 'served-model' (other paths: 404)."""

    class Models(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path != "/v1/models":
                self.send_error(404)
                return
            body = json.dumps({"object": "list", "data": [{"id": "served-model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def server_model(url, model="served-model"):
    return {"backend": "openai", "model": model, "base_url": url}


def test_a_served_model_passes_and_each_problem_names_its_key(endpoint):
    ok = check_stage("reader_eval", {"model": server_model(endpoint)})
    assert any("'served-model' served at" in line for line in ok.lines)
    with pytest.raises(CheckError, match=r"^reader_eval\.model\.model: model 'other' is not "
                                         r"served at .* \(it serves: served-model\)$"):
        check_stage("reader_eval", {"model": server_model(endpoint, "other")})
    dead = dead_url()
    refused = rf"^reader_eval\.model\.base_url: connection refused at {dead}$"
    with pytest.raises(CheckError, match=refused):
        check_stage("reader_eval", {"model": server_model(dead)})
    # every endpoint of a list is asked
    with pytest.raises(CheckError, match=rf"connection refused at {dead}"):
        check_stage("reader_eval", {"model": server_model([endpoint, dead])})


def test_nested_models_are_found_by_their_paths(endpoint):
    params = {"translators": [{"name": "A", "model": server_model(endpoint)},
                              {"name": "B", "model": server_model(dead_url())}]}
    where = r"^audit\.translators\[1\]\.model\.base_url: connection refused"
    with pytest.raises(CheckError, match=where):
        check_stage("audit", params)
    from cogrsi_lib import stage_params

    paths = [p for p, _ in model_specs(stage_params.load("audit", {}), "audit")]
    assert "audit.translators[0].model" in paths and "audit.replay.model" in paths


def test_a_typo_in_a_nested_block_names_its_path():
    with pytest.raises(CheckError, match=r"^stage 'reader_eval': unknown key 'model\.threds'$"):
        check_stage("reader_eval", {"model": {"backend": "embedded", "threds": 2}})


def test_absent_benchmark_data_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("COGRSI_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("COGRSI_SHARED_BENCHMARKS", str(tmp_path / "shared"))
    with pytest.raises(CheckError, match=r"^pddl_mind\.benchmarks: benchmark 'fantom' has no "
                                         r"data at .*fantom"):
        check_stage("pddl_mind", {"benchmarks": ["fantom"]})


def test_local_paths_are_checked(tmp_path):
    assert check_stage("reader_eval", {"model": {"backend": "fake", "reply": "A"}}).lines[-1] \
        == "reader_eval.model: fake (no model to reach)"
    with pytest.raises(CheckError, match=r"^reader_eval\.model\.adapter: no adapter folder"):
        check_stage("reader_eval", {"model": {"backend": "embedded",
                                              "adapter": str(tmp_path / "none")}})
    with pytest.raises(CheckError, match=r"^reader_eval\.model\.model: no GGUF file"):
        check_stage("reader_eval", {"model": {"backend": "embedded",
                                              "model": str(tmp_path / "x.gguf")}})


def test_the_command_exits_2_with_one_line(tmp_path, endpoint):
    params = tmp_path / "p.yaml"
    params.write_text(f"reader_eval:\n  model: {{backend: openai, model: served-model, "
                      f"base_url: {dead_url()}}}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["stage", "reader_eval", "--check", "--params", str(params)])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: reader_eval.model.base_url: connection refused at http://127.0")
    params.write_text(f"reader_eval:\n  model: {{backend: openai, model: served-model, "
                      f"base_url: {endpoint}}}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["stage", "reader_eval", "--check", "--params", str(params)])
    assert result.exit_code == 0, result.output
    assert result.output.rstrip().endswith(f"stage 'reader_eval' can run with {params}")
    assert not (tmp_path / "reports").exists()


def test_several_vllm_engines_in_one_stage_are_noted_and_the_served_file_reaches_them(
        endpoint, monkeypatch):
    """The GPU setting's audit names three vLLM models (one process would hold three
    engines): the check says so. Rewritten by ``cogrsi serve`` for servers, nothing is noted
    and each model's endpoint is asked for it."""
    from pathlib import Path

    import yaml

    import cogrsi_lib.stage_check as stage_check
    from cogrsi_lib.serve import plan, served_params

    root = Path(__file__).resolve().parents[1]
    gpu = yaml.safe_load((root / "params.gpu.yaml").read_text())
    find_spec = stage_check.importlib.util.find_spec
    monkeypatch.setattr(stage_check.importlib.util, "find_spec",  # vLLM "installed"
                        lambda name, *a: object() if name == "vllm" else find_spec(name, *a))
    (note,) = check_stage("audit", gpu["audit"]).notes
    assert note.startswith("audit names 3 distinct vLLM engines") and "cogrsi serve" in note
    one = {"model": {"backend": "vllm", "model": "org/m"}}
    assert check_stage("reader_eval", one).notes == ()
    dead = int(dead_url().rsplit(":", 1)[1].split("/")[0])
    served = served_params(gpu, plan(gpu, 8, base_port=dead))["audit"]
    with pytest.raises(CheckError, match=rf"^audit\.translators\[0\]\.model\.base_url: .*"
                                         rf"127\.0\.0\.1:{dead}/v1"):
        check_stage("audit", served)  # nothing listens there
    port = endpoint.rsplit(":", 1)[1].split("/")[0]
    reached = served_params(gpu, plan(gpu, 8, base_port=int(port)))["audit"]
    with pytest.raises(CheckError, match=r"model 'meta-llama/Llama-3.3-70B-Instruct' is not "
                                         r"served at"):
        check_stage("audit", reached)  # the plain server lists only 'served-model'


def test_a_stage_naming_several_vllm_engines_is_not_started(tmp_path) -> None:
    """``cogrsi stage`` refuses, before any kernel, a section whose models would be several
    vLLM engines in one process (the GPU setting's audit), and names the way out; one model
    named twice with the same settings is one engine and passes this check."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    gpu = yaml.safe_load((root / "params.gpu.yaml").read_text())
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"audit": gpu["audit"]}))
    result = CliRunner().invoke(app, ["stage", "audit", "--params", str(params),
                                      "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "audit names 3 distinct vLLM engines" in result.output
    assert "cogrsi serve" in result.output and not (tmp_path / "out").exists()
    same = {"backend": "vllm", "model": "org/m"}
    from cogrsi_lib.stage_check import several_engines
    from cogrsi_lib.stage_params import load

    twice = load("audit", {"translators": [{"name": "A", "model": same, "prompt": "literal"},
                                           {"name": "B", "model": same, "prompt": "plain"}],
                           "replay": {"model": same}})
    assert several_engines("audit", twice) is None
