"""``vllm serve`` of the embedded weights on 127.0.0.1 behind ``OpenAIBackend``, for real:
vLLM's HTTP server, scheduler and structured outputs, nothing stood in for; and every model
stage through vLLM. The pytest run starts one server (``vllm_server`` in
``tests/llm/conftest.py``), shared by the server tests and by the rehearsal of
``params.gpu.yaml``, whose model stages run all at once with their counts at their floors;
reader_eval runs at its full ``params.yaml`` CPU setting on an engine of its own beside them
(``slow``). The server keeps about one core busy, so this file
runs first among the model tests, while the other worker takes the model-free files
(``tests/conftest.py``). Skipped when vLLM is not installed, failed instead under
``COGRSI_REQUIRE_VLLM=1`` (``.ci/run``).
"""

from __future__ import annotations

import pytest

from cogrsi_lib.llm import CachedBackend, Request
from cogrsi_lib.llm.tally import open_tally

from .test_llm_embedded_structured import FORMATS, QUESTION, STORY
from .vllm_real import CPU_ENGINE, ONE_THREAD, SERVED_NAME, committed_run, metric, on_vllm

pytestmark = pytest.mark.vllm


# -- vllm serve on 127.0.0.1 -----------------------------------------------------------------
def served(urls, **cfg):
    from cogrsi_lib.llm import build_backend

    return build_backend({"backend": "openai", "model": SERVED_NAME, "base_url": urls,
                          "structured_outputs": "vllm", "max_retries": 2, **cfg})


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_openai_backend_against_a_real_vllm_server(vllm_server, kind) -> None:
    b = served(vllm_server, concurrency=1)  # one request at a time: no batch effects
    fmt = FORMATS[kind]
    req = Request.of(f"{STORY}\n\n{QUESTION} Reply in this form: {fmt.spec}", reply=fmt, n=4,
                     temperature=1.0, max_tokens=80, seed=5)
    with open_tally() as tally:
        first = b.generate_one(req)
        again = b.generate_one(req)
    for c in first:
        fmt.parse(c.text)
        assert c.ok and c.usage_reported and c.prompt_tokens > 50 and c.completion_tokens >= 1
    assert [c.text for c in again] == [c.text for c in first]  # the server honours seeds
    assert len({c.text for c in first}) > 1 or kind == "choice"
    (row,) = tally.rows()
    assert row["parse_rate"] == 1.0 and row["usage_unreported"] == 0
    assert row["thinking_replies"] == 0 and row["failed"] == 0


def test_response_format_mode_against_a_real_vllm_server(vllm_server) -> None:
    b = served(vllm_server, structured_outputs="response_format")
    fmt = FORMATS["json"]
    out = b.generate_one(Request.of(f"{STORY}\n\n{QUESTION}", reply=fmt, n=2, temperature=0.7,
                                    max_tokens=80))
    assert all(fmt.ok(c.text) for c in out)


def test_real_server_over_long_prompt_is_caught_before_sending(vllm_server, tmp_path) -> None:
    b = CachedBackend(served(vllm_server), tmp_path)
    before = metric(vllm_server, "vllm:request_success_total")
    long = Request.of("word " * 5000, max_tokens=8)
    near = Request.of("word " * 4020, max_tokens=400)  # fits, with 45 tokens of room
    short = Request.of("Where is the ball? Answer in one word.", max_tokens=8)
    out = [cs[0] for cs in b.generate([long, near, short])]
    assert not out[0].ok and out[0].error.startswith("context_length: the prompt has ")
    assert out[1].ok and out[1].prompt_tokens + out[1].completion_tokens <= 4096
    assert out[2].ok and out[2].text
    assert metric(vllm_server, "vllm:request_success_total") - before == 2
    assert b.cache.stats.writes == 2


def test_stage_check_asks_the_real_server_for_its_model(vllm_server) -> None:
    """``cogrsi stage NAME --check`` against vLLM's own ``/v1/models``."""
    from cogrsi_lib.stage_check import CheckError, check_stage

    spec = {"backend": "openai", "model": SERVED_NAME, "base_url": vllm_server}
    assert check_stage("reader_eval", {"model": spec}).lines[-1] == \
        f"reader_eval.model: '{SERVED_NAME}' served at {vllm_server}"
    with pytest.raises(CheckError, match=rf"^reader_eval\.model\.model: model 'absent' is not "
                                         rf"served at {vllm_server} \(it serves: {SERVED_NAME}"):
        check_stage("reader_eval", {"model": {**spec, "model": "absent"}})


def test_requests_are_spread_over_the_endpoint_list(vllm_server) -> None:
    """Two endpoints (the one server under two addresses): the requests are shared between
    them, each endpoint's count is what it sent, and the server answered every one."""
    port = vllm_server.rsplit(":", 1)[1]
    urls = [vllm_server, f"http://localhost:{port}"]
    b = served(urls, concurrency=4)
    before = metric(vllm_server, "vllm:request_success_total")
    out = b.generate_one(Request.of("Name a colour.", n=24, temperature=1.0, max_tokens=6))
    assert len(out) == 24 and all(c.ok for c in out)
    assert metric(vllm_server, "vllm:request_success_total") - before == 24
    sent = [e.sent for e in b.endpoints]
    assert sum(sent) == 24 and min(sent) > 0


# -- every model stage through vLLM: the rehearsal of params.gpu.yaml --------------------------
#: the stages that call models, rehearsed from params.gpu.yaml at the smallest scale
#: (reader_eval also runs at its full CPU setting on an engine of its own: ``slow``)
REHEARSED = ("scorecard", "reader_eval", "loops", "audit", "pddl_mind", "harness")
#: model-free stages the rehearsed ones read (the loops' test manifests), rehearsed with them
UPSTREAM = ("benchmarks",)
#: each rehearsed stage's models, as the budget names them (params.gpu.yaml)
READER, LLAMA = "Qwen/Qwen3.5-35B-A3B-FP8", "meta-llama/Llama-3.3-70B-Instruct"
MODELS = {"scorecard": {READER, LLAMA, "Qwen/Qwen3.5-9B"},
          "reader_eval": {READER, LLAMA, "Qwen/Qwen3.5-122B-A10B"},  # two estimated from one
          "loops": {READER}, "audit": {LLAMA, "Qwen/Qwen3.5-122B-A10B"},
          "pddl_mind": {READER, LLAMA, "Qwen/Qwen3.5-122B-A10B"},
          "harness": {READER, LLAMA, "Qwen/Qwen3.5-122B-A10B"}}  # two estimated from one

#: reader_eval's engine lives in the stage's kernel beside the server's: one unbound thread
#: each, so that the two do not both bind to the CPU vLLM picks
OWN_ENGINE_ENV = ONE_THREAD
FULL_SIZE = "test_reader_eval_at_its_cpu_setting_on_the_vllm_engine"
REHEARSAL = "test_the_gpu_settings_rehearsed_at_the_smallest_scale_through_vllm_serve"


@pytest.fixture(scope="module")
def stage_runs(request, tmp_path_factory) -> dict:
    """The runs this pytest run selected, side by side: ``cogrsi rehearse`` of params.gpu.yaml
    at scale 0 for the stages of :data:`REHEARSED`, all at once on the one ``vllm serve``
    (which answers to each of the file's model names and batches the stages' requests
    together, as a server shared by several stages on a GPU would); and reader_eval at its
    whole params.yaml CPU setting with ``backend: vllm``, on an engine of its own
    (``slow``). Each run's folder, exit status and log."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    import yaml

    from cogrsi_lib.pipeline import find_repo_root

    root = find_repo_root()
    cogrsi = str(Path(sys.executable).with_name("cogrsi"))
    selected = {getattr(item, "originalname", item.name) for item in request.session.items}
    runs = {}

    def start(name: str, folder: Path, args: list[str], env: dict | None = None) -> None:
        log = (folder / "run.log").open("wb")
        runs[name] = (folder, log, subprocess.Popen([cogrsi, *args], cwd=root, stdout=log,
                                                    stderr=subprocess.STDOUT,
                                                    env={**os.environ, **(env or {})}))

    if REHEARSAL in selected:
        url = request.getfixturevalue("vllm_server")
        folder = tmp_path_factory.mktemp("rehearsal")
        start("rehearsal", folder, ["rehearse", "--params", str(root / "params.gpu.yaml"),
                                    "--server", url, "--out", str(folder / "out"),
                                    "--jobs", str(len(REHEARSED)),
                                    *[a for s in (*UPSTREAM, *REHEARSED)
                                      for a in ("--stage", s)]])
    if FULL_SIZE in selected:
        request.getfixturevalue("weights")
        folder = tmp_path_factory.mktemp("stage-reader_eval")
        section = on_vllm(yaml.safe_load((root / "params.yaml").read_text())["reader_eval"],
                          CPU_ENGINE, str(folder / "cache"))
        section["gold_perceivers"]["n_questions"] = 4  # every column of Table 27 once
        # CogRSI-L reads a loops run, which a fresh clone lacks: the rehearsal beside it
        # runs it on the rehearsed loops' principles
        section["learned"]["principles_file"] = ""
        # and the benchmarks stage's manifests: the first items of each benchmark instead
        section.update(manifest_dir="", confirmatory=0, development=0)
        assert "embedded" not in json.dumps(section)
        (folder / "params.yaml").write_text(yaml.safe_dump({"reader_eval": section}))
        start("reader_eval", folder, ["stage", "reader_eval", "--params",
                                      str(folder / "params.yaml"), "--out-dir",
                                      str(folder / "out")], OWN_ENGINE_ENV)
    done = {}
    for name, (folder, log, proc) in runs.items():
        try:
            code = proc.wait(timeout=1500)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        log.close()
        done[name] = (folder, code, (folder / "run.log").read_text(errors="replace"))
    return done


@pytest.mark.parametrize("stage", REHEARSED)
def test_the_gpu_settings_rehearsed_at_the_smallest_scale_through_vllm_serve(stage_runs, stage):
    """The stage of params.gpu.yaml rehearsed (cogrsi_lib/rehearse.py): every model of the
    file served under its own name, each count at its floor: the stage's records in the
    declared columns, the committed run's tables and columns, every reply in its declared
    form, and its rows of the GPU budget naming the file's models."""
    from pathlib import Path

    import polars as pl
    import yaml

    from cogrsi_lib.rehearse import _factor

    gpu = yaml.safe_load((Path(__file__).parents[2] / "params.gpu.yaml").read_text())
    folder, code, log = stage_runs["rehearsal"]
    assert code == 0, f"cogrsi rehearse exited {code}:\n{log[-3000:]}"
    out = folder / "out"
    # the loops' round logs follow the rounds and arms, which the two files set apart
    check_stage_outputs(stage, out / stage, folder / stage, per_round=False)
    budget = pl.read_csv(out / "budget.csv").filter(pl.col("stage") == stage)
    assert set(budget["model"]) == MODELS[stage]
    stand_ins = budget.filter(pl.col("estimated_from").is_not_null())
    assert set(stand_ins["estimated_from"]) <= {READER}
    if stage in ("reader_eval", "pddl_mind"):  # the rehearsal kept the first backbone
        assert set(stand_ins["model"]) == MODELS[stage] - {READER}
    assert (budget["requests"] > 0).all() and (budget["gpu_hours"] > 0).all()
    factor = _factor(stage, gpu[stage], yaml.safe_load((out / "params.yaml").read_text())[stage])
    assert factor > 1 or stage == "audit"  # the audit's translations do not scale
    assert (budget["factor"] == round(factor, 1)).all()
    assert budget["est_requests"].to_list() == [round(n * factor) for n in budget["requests"]]
    assert "In all:" in (out / "budget.md").read_text()
    if stage in ("reader_eval", "scorecard", "loops"):  # their model work streams
        served = pl.read_csv(out / "throughput.csv").filter(pl.col("stage") == stage)
        assert served.height and (served["requests"] > 0).all()
        assert (served["completion_tokens_per_s"] > 0).all()
        assert set(served["model"]) <= MODELS[stage]
        assert "## What the rehearsal's server delivered" in (out / "budget.md").read_text()


@pytest.mark.slow
def test_reader_eval_at_its_cpu_setting_on_the_vllm_engine(stage_runs):
    """reader_eval's whole params.yaml CPU setting with ``backend: vllm``: the engine built
    inside the stage's own kernel, at full size (run beside the rehearsal)."""
    folder, code, log = stage_runs["reader_eval"]
    assert code == 0, f"reader_eval exited {code}:\n{log[-3000:]}"
    check_stage_outputs("reader_eval", folder / "out", folder)


#: the per-item record files, the stage's ``records.parquet`` and those it replaced (a
#: committed run made before it may still hold them): checked against the declaration
#: (:mod:`cogrsi_lib.records_schema`), not against the committed run
RECORD_FILES = frozenset({"records.parquet", "items.parquet", "translations.parquet",
                          "final_scores.parquet"})


def check_stage_outputs(stage: str, out, tmp_path, *, per_round: bool = True) -> None:
    """A stage run's records in exactly the declared columns and types, the other tables with
    the same files and columns as the committed embedded run (the outputs dvc.lock names,
    read from the in-repo DVC remote; without ``per_round``, the loops' per-round logs left
    out), every reply that the cap did not cut in its declared form, none failed."""
    import json

    import polars as pl

    from cogrsi_lib.pipeline import find_repo_root
    from cogrsi_lib.records_schema import FILE, stage_schema

    root = find_repo_root()
    schema = stage_schema(stage)
    records = pl.read_parquet(out / FILE)
    schema.check(records)
    assert records.height, f"{stage}: no records"
    for p in out.glob("runs/**/items.parquet"):  # the loops' round logs
        schema.check(pl.read_parquet(p))
    committed = committed_run(root, stage, tmp_path / "committed")
    assert any(committed.rglob("*.parquet")), f"{stage}: the committed run has no records"
    parquets = sorted(p for p in committed.rglob("*.parquet") if p.name not in RECORD_FILES
                      and (per_round or "runs" not in p.relative_to(committed).parts))
    differ = {}
    for p in parquets:
        mine = out / p.relative_to(committed)
        assert mine.is_file(), f"{stage}: no {mine.name} on vllm"
        ours, theirs = pl.read_parquet(mine).schema, pl.read_parquet(p).schema
        if not theirs and not per_round:
            continue  # a part the CPU setting does not run (the loops' GEPA arm): no columns
        if ours != theirs:
            differ[p.name] = {c: (ours.get(c), theirs.get(c)) for c in {*ours, *theirs}
                              if ours.get(c) != theirs.get(c)}
    assert not differ, f"{stage}: columns differ from the committed run: {differ}"
    replies = json.loads((out / "summary.json").read_text())["replies"]
    assert replies, f"{stage}: no model calls tallied"
    for family, row in replies.items():
        assert row["failed"] == 0 and row["thinking_replies"] == 0, family
        # a reply the backend constrained is in its form unless the token cap cut it
        assert row["parsed"] is None or row["parsed"] + row["capped"] >= row["calls"], family
