"""The rehearsal's settings and budget (cogrsi_lib/rehearse.py), without a model; the
rehearsal itself runs on a real ``vllm serve`` in tests/llm/test_llm_vllm_serve.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cogrsi_lib import stage_params
from cogrsi_lib.llm.cache import CompletionCache
from cogrsi_lib.llm.types import Completion
from cogrsi_lib.rehearse import (
    DRIVERS,
    FLOORS,
    MARK,
    THROUGHPUT,
    First,
    RehearsalError,
    _check,
    _fresh,
    _get,
    _scaled,
    budget,
    cut_counts,
    papers_outputs,
    rehearsal_params,
    served_names,
)
from cogrsi_lib.stage_check import model_specs

ROOT = Path(__file__).resolve().parents[1]
GPU = yaml.safe_load((ROOT / "params.gpu.yaml").read_text())
URL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("stage", sorted(FLOORS))
def test_every_floor_names_a_count_of_the_stage(stage) -> None:
    defaults = stage_params.load(stage, {})
    for path, floor in FLOORS[stage].items():
        value = _get(defaults, path)
        if isinstance(floor, First):  # a list (None: the schema's models left unset)
            assert isinstance(value, list | tuple | None) and floor.n >= 1, path
        else:
            assert isinstance(value, int | list | tuple | dict) or value is None, path
            assert floor >= 1, path
    assert set(DRIVERS.get(stage, ())) <= set(FLOORS[stage]), "a driver the scale leaves alone"
    stage_params.load(stage, cut_counts(stage, {}, 0.0))  # the cut section still fits


def _plain(value):
    return list(value) if isinstance(value, list | tuple) else value


@pytest.mark.parametrize("stage", sorted(set(FLOORS) & set(GPU)))
def test_the_scale_cuts_each_count_between_its_floor_and_the_files(stage) -> None:
    real = stage_params.load(stage, GPU[stage])
    smallest = stage_params.load(stage, cut_counts(stage, GPU[stage], 0.0))
    half = stage_params.load(stage, cut_counts(stage, GPU[stage], 0.5))
    whole = stage_params.load(stage, cut_counts(stage, GPU[stage], 1.0))
    for path, floor in FLOORS[stage].items():
        r, s, h, w = (_plain(_get(x, path)) for x in (real, smallest, half, whole))
        if r is None:
            continue
        assert w == r, path
        if isinstance(floor, First):
            assert s == r[:floor.n] and h == r[: len(h)] and len(s) <= len(h), path
        elif isinstance(r, list):
            assert s == [min(floor, v) for v in r], path  # each count, elementwise
        elif isinstance(r, dict):
            assert s == {k: min(floor, v) for k, v in r.items()}, path
        else:
            assert s == min(floor, r) and s <= h <= r, path
            assert h == max(floor, round(r * 0.5)) or r <= floor, path


def test_the_rehearsed_file_reaches_every_model_at_the_server_under_its_name(tmp_path) -> None:
    rehearsed = rehearsal_params(GPU, 0.0, URL, tmp_path / "cache")
    names = served_names(GPU)
    assert set(names) == {"Qwen/Qwen3.5-35B-A3B-FP8", "meta-llama/Llama-3.3-70B-Instruct",
                          "Qwen/Qwen3.5-122B-A10B", "Qwen/Qwen3.5-9B"}
    checked = stage_params.validate_file(rehearsed)
    before = stage_params.validate_file(GPU)
    for stage, params in checked.items():
        old = dict(model_specs(before[stage], stage))
        for path, spec in model_specs(params, stage):
            if old[path].backend == "embedded":  # the train stage: a CPU stage as given
                assert spec.backend == "embedded", path
                continue
            assert spec.backend == "openai" and spec.base_url == URL, path
            assert spec.model == getattr(old[path], "model", None) and spec.model in names
            assert spec.chat_template_kwargs == {"enable_thinking": False}, path
            assert spec.cache_dir == str(tmp_path / "cache" / stage), path
    # every setting but the counts and models is the file's
    assert checked["reader_eval"].systems == before["reader_eval"].systems
    assert checked["loops"].arms == before["loops"].arms
    assert checked["harness"].ablations == before["harness"].ablations


def test_a_served_file_is_rehearsed_at_the_rehearsal_server(tmp_path) -> None:
    served = {"reader_eval": {"model": {"backend": "openai", "model": "org/some-model",
                                        "base_url": "http://gpu-node:8000/v1"}}}
    rehearsed = rehearsal_params(served, 0.0, URL, tmp_path)
    assert served_names(served) == ["org/some-model"]
    assert rehearsed["reader_eval"]["model"]["base_url"] == URL
    assert rehearsed["reader_eval"]["model"]["model"] == "org/some-model"
    assert served["reader_eval"]["model"]["base_url"] == "http://gpu-node:8000/v1"  # untouched


def test_a_scale_outside_zero_to_one_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="0 to 1"):
        rehearsal_params(GPU, 2.0, URL, tmp_path)


def _entry(cache: CompletionCache, model: str, i: int, prompt: int, reply: int,
           finish: str = "stop") -> None:
    payload = {"model": f"openai:{model}#0123456789abcdef", "sample_index": i}
    cache.put(f"{i:064x}", payload, Completion(text="x", prompt_tokens=prompt,
                                               completion_tokens=reply, finish_reason=finish,
                                               model=model))


def test_the_budget_counts_each_request_sent_and_scales_it_by_the_driving_counts(tmp_path):
    cache = CompletionCache(tmp_path / "cache" / "reader_eval")
    reader = "Qwen/Qwen3.5-35B-A3B-FP8"
    _entry(cache, reader, 1, 900, 100)
    _entry(cache, reader, 2, 1100, 300, finish="length")
    _entry(cache, "org/no-figure", 3, 10, 5)
    emb = {"model": "embedded:x", "sample_index": 4}  # a CPU model: no GPU cost
    cache.put(f"{4:064x}", emb, Completion(text="y", prompt_tokens=7, completion_tokens=7))
    real = {"n_per_benchmark": 200}
    rows = budget(tmp_path, {"reader_eval": real}, {"reader_eval": {"n_per_benchmark": 2}},
                  ["reader_eval"])
    assert [r["model"] for r in rows] == ["Qwen/Qwen3.5-35B-A3B-FP8", "org/no-figure"]
    row = rows[0]
    assert (row["requests"], row["prompt_tokens"], row["completion_tokens"], row["capped"]) == (
        2, 2000, 400, 1)
    assert row["factor"] == 100.0 and row["est_requests"] == 200
    assert row["est_tokens"] == 240_000
    tp = THROUGHPUT[reader]
    assert row["gpu_hours"] == pytest.approx(240_000 / tp.tokens_per_s / 3600 * tp.gpus, abs=0.01)
    assert rows[1]["gpu_hours"] is None and rows[1]["gpus"] is None


def test_models_cut_from_a_list_are_estimated_from_the_one_kept(tmp_path):
    reader, llama = "Qwen/Qwen3.5-35B-A3B-FP8", "meta-llama/Llama-3.3-70B-Instruct"
    real = {"models": [{"backend": "vllm", "model": m} for m in (reader, llama)], "runs": 3,
            "n_per_benchmark": 20}
    cut = cut_counts("reader_eval", real, 0.0)
    assert cut["models"] == real["models"][:1] and cut["runs"] == 1
    assert cut["n_per_benchmark"] == 1
    cache = CompletionCache(tmp_path / "cache" / "reader_eval")
    _entry(cache, reader, 1, 900, 100)
    rows = budget(tmp_path, {"reader_eval": real}, {"reader_eval": cut}, ["reader_eval"])
    assert [(r["model"], r["estimated_from"]) for r in rows] == [(reader, None), (llama, reader)]
    assert rows[0]["factor"] == rows[1]["factor"] == 60.0  # 20 / 1 items, 3 / 1 runs
    assert rows[0]["est_tokens"] == rows[1]["est_tokens"] == 60_000
    assert rows[0]["gpu_hours"] != rows[1]["gpu_hours"]  # each at its own throughput


def test_every_model_of_the_gpu_file_has_a_throughput_figure_with_its_source() -> None:
    for name in served_names(GPU):
        assert name in THROUGHPUT, name
        assert THROUGHPUT[name].tokens_per_s > 0 and len(THROUGHPUT[name].source) > 40


def test_a_folder_of_other_files_is_never_cleared(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(RehearsalError, match="empty folder"):
        _fresh(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    (tmp_path / "notes.txt").unlink()
    _fresh(tmp_path)
    (tmp_path / "old.log").write_text("a former rehearsal's")
    _fresh(tmp_path)  # its own folder is cleared
    assert sorted(p.name for p in tmp_path.iterdir()) == [MARK]


def test_the_papers_outputs_a_stage_did_not_write_are_named(tmp_path) -> None:
    rows = papers_outputs(tmp_path, ["pddl_mind"])
    assert rows and all(r["missing"] for r in rows)
    first = rows[0]
    for out in first["missing"].split(", "):
        target = tmp_path / out.removeprefix("reports/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("")
    again = {(r["paper"], r["id"]): r for r in papers_outputs(tmp_path, ["pddl_mind"])}
    assert again[(first["paper"], first["id"])]["missing"] == ""
    assert json.dumps(rows)  # plain rows


def test_counts_in_a_list_or_mapping_are_cut_each_and_a_first_list_shortened() -> None:
    assert _scaled([20, 200, 20], 1, 0.0) == [1, 1, 1]
    assert _scaled([20, 200, 0], 2, 0.5) == [10, 100, 0]  # never above the real count
    assert _scaled({"tomi": 40, "hi-tom": 3}, 5, 0.0) == {"tomi": 5, "hi-tom": 3}
    assert _scaled([0, 1, 2, 3, 4, 5], First(1), 0.0) == [0]
    assert _scaled([0, 1, 2, 3, 4, 5], First(1), 0.5) == [0, 1, 2]


def test_each_stage_is_checked_first_and_the_problem_kept_in_one_line(tmp_path) -> None:
    dead = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    section = {"model": {"backend": "openai", "model": "m", "base_url": dead}}
    line = _check("reader_eval", section)
    assert line.startswith("reader_eval.model.base_url") and "127.0.0.1:9" in line
    assert "\n" not in line
    assert _check("oracle_worlds", {}) == "ok"


def test_bad_input_is_refused_before_anything_is_cleared_or_started(tmp_path) -> None:
    from typer.testing import CliRunner

    from cogrsi_lib.cli import app

    out = tmp_path / "out"
    out.mkdir()
    (out / MARK).write_text("")
    (out / "kept.log").write_text("a former rehearsal's")
    bad = tmp_path / "bad.yaml"
    for text, args, message in [
            ("reader_eval: [unclosed\n", [], "not valid YAML"),
            ("- a list\n", [], "mapping of stage sections"),
            ("reader_eval: {}\n", ["--scale", "2"], "0 to 1"),
            ("reader_eval: {}\n", ["--stage", "loops"], "no section loops"),
            ("reader_eval: {n_per_benchmrk: 3}\n", [], "n_per_benchmrk")]:
        bad.write_text(text)
        result = CliRunner().invoke(app, ["rehearse", "--params", str(bad), "--out", str(out),
                                          *args])
        assert result.exit_code == 2, (text, result.output)
        assert message in result.output and "Traceback" not in result.output
        assert (out / "kept.log").is_file()  # nothing cleared, no server started


def test_a_file_read_from_a_rehearsed_stage_comes_from_its_rehearsal_and_after_it(tmp_path):
    from cogrsi_lib.rehearse import read_upstream

    params = {"loops": {"manifest_dir": "reports/benchmarks/manifests"},
              "audit": {"rules": ["handwritten", "reports/loops/audit_candidates.parquet"],
                        "loops_run": "reports/loops"},
              "harness": {"model": {"adapter": "reports/train/adapter"}}}
    upstream = read_upstream(params, ["loops", "audit", "harness"], tmp_path)
    assert params["audit"]["rules"] == ["handwritten",
                                        str(tmp_path / "loops" / "audit_candidates.parquet")]
    assert params["audit"]["loops_run"] == str(tmp_path / "loops")  # a whole folder too
    # the benchmarks stage is not rehearsed here: its manifests are read where they are
    assert params["loops"]["manifest_dir"] == "reports/benchmarks/manifests"
    assert params["harness"]["model"]["adapter"] == "reports/train/adapter"  # not rehearsed
    assert upstream == {"loops": set(), "audit": {"loops"}, "harness": set()}


def test_a_stage_that_reads_a_later_stage_s_outputs_is_rehearsed_after_it(tmp_path):
    from cogrsi_lib.rehearse import RehearsalError, read_upstream, upstream_first

    params = {"reader_eval": {"learned": {"principles_file":
                                          "reports/loops/principles.parquet"}},
              "loops": {}, "audit": {"loops_run": "reports/loops"}, "harness": {}}
    stages = ["reader_eval", "loops", "audit", "harness"]
    upstream = read_upstream(params, stages, tmp_path)
    assert params["reader_eval"]["learned"]["principles_file"] == str(
        tmp_path / "loops" / "principles.parquet")
    assert upstream_first(stages, upstream) == ["loops", "reader_eval", "audit", "harness"]
    with pytest.raises(RehearsalError, match="reader_eval -> loops -> reader_eval"):
        upstream_first(stages, {**upstream, "loops": {"reader_eval"}})


def test_a_stage_whose_upstream_failed_is_not_run(tmp_path, monkeypatch):
    import subprocess

    from cogrsi_lib.rehearse import run_stages

    calls = []

    def fake_call(cmd, **_kw):
        stage = cmd[cmd.index("stage") + 1]
        calls.append(stage)
        return 3 if stage == "loops" else 0

    monkeypatch.setattr(subprocess, "call", fake_call)
    runs = run_stages(["loops", "audit", "harness"], tmp_path / "p.yaml", tmp_path, jobs=3,
                      echo=lambda _line: None, upstream={"audit": {"loops"}})
    assert [(r.stage, r.code) for r in runs] == [("loops", 3), ("audit", 1), ("harness", 0)]
    assert sorted(calls) == ["harness", "loops"]
    assert "reads the outputs of loops" in (tmp_path / "audit.log").read_text()
