"""Stage runner: papermill execution, parameter injection, output layout, errors."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
import yaml
from papermill.exceptions import PapermillExecutionError

from cogrsi_lib.pipeline import (
    StageError,
    find_repo_root,
    load_stage_params,
    repo_path,
    resolve_out_dir,
    run_stage,
)
from cogrsi_lib.stage_params import SCHEMAS, StageParams

REPO = Path(__file__).resolve().parents[1]
PARAMETERS_CELL = "params = {}\nout_dir = None"
BODY_CELL = """\
from pathlib import Path
from cogrsi_lib.pipeline import repo_path, resolve_out_dir
from cogrsi_lib.stage_params import StageParams

class DemoParams(StageParams):  # the kernel's copy of the test's demo schema
    greeting: str = "default"
    n_items: int = 1

p = DemoParams.model_validate(params)
from cogrsi_lib.progress import phase, progress
phase("demo phase starts")
for _ in progress(range(3), desc="demo items"):
    pass
greeting, n_items = p.greeting, p.n_items

out = resolve_out_dir(out_dir, "demo")
(out / "greeting.txt").write_text(f"{greeting}:{n_items}")
(out / "cwd.txt").write_text(str(Path.cwd()))
(out / "root.txt").write_text(str(repo_path()))
print("greeting is", greeting)
"""


class DemoParams(StageParams):
    greeting: str = "default"
    n_items: int = 1


@pytest.fixture(autouse=True)
def demo_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo stage's schema, registered as every stage's is."""
    monkeypatch.setitem(SCHEMAS, "demo", DemoParams)


def make_repo(root: Path, body: str = BODY_CELL, params: dict | None = None) -> Path:
    """A minimal repository: params.yaml and notebooks/demo.ipynb."""
    (root / "notebooks").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    params_cell = nbformat.v4.new_code_cell(PARAMETERS_CELL)
    params_cell.metadata["tags"] = ["parameters"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("# demo"),
        params_cell,
        nbformat.v4.new_code_cell(body),
    ]
    nbformat.write(nb, root / "notebooks" / "demo.ipynb")
    if params is None:
        params = {"demo": {"greeting": "hello-from-params", "n_items": 7}, "other": {"x": 1}}
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return root


def cell_text(cell: nbformat.NotebookNode) -> str:
    return "".join(out.get("text", "") for out in cell.get("outputs", []))


def test_run_stage_injects_params_and_writes_reports(tmp_path: Path, capfd) -> None:
    root = make_repo(tmp_path / "repo")
    executed = run_stage("demo", repo_root=root)
    # progress reaches the runner's standard error, not the executed notebook
    err = capfd.readouterr().err
    assert "[demo] " in err and "demo phase starts" in err and "demo items" in err
    assert "[demo] finished in" in err
    assert "demo phase" in (root / ".cache" / "logs" / "demo.log").read_text()
    shown = "".join(cell_text(c) for c in nbformat.read(executed, as_version=4).cells)
    assert "greeting is" in shown and "demo phase" not in shown and "demo items" not in shown

    out = root / "reports" / "demo"
    assert executed == out / "demo.ipynb"
    assert (out / "greeting.txt").read_text() == "hello-from-params:7"
    # the kernel runs in the notebook's directory and still finds the repository root
    assert Path((out / "cwd.txt").read_text()) == (root / "notebooks").resolve()
    assert Path((out / "root.txt").read_text()) == root.resolve()

    nb = nbformat.read(executed, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and injected[0].id == "injected-parameters"
    assert '"greeting": "hello-from-params"' in injected[0].source
    assert 'out_dir = "reports/demo"' in injected[0].source
    assert "greeting is hello-from-params" in cell_text(nb.cells[-1])
    # no timings or absolute paths: reruns give the same file
    meta = nb.metadata["papermill"]
    assert "start_time" not in meta and "duration" not in meta
    assert meta["input_path"] == "notebooks/demo.ipynb"
    assert all("execution" not in c.metadata for c in nb.cells)
    assert all("start_time" not in c.metadata.get("papermill", {}) for c in nb.cells)
    first = executed.read_bytes()
    assert run_stage("demo", repo_root=root).read_bytes() == first


def test_a_print_flushed_in_pieces_is_one_output_as_on_an_idle_machine(tmp_path: Path) -> None:
    body = ("import sys, time\nfrom cogrsi_lib.stage_params import StageParams\n"
            "print('first half', flush=True)\ntime.sleep(0.5)\nprint('second half', flush=True)\n"
            "print('warned', file=sys.stderr, flush=True)\ntime.sleep(0.5)\nprint('third')\n")
    root = make_repo(tmp_path / "repo", body=body)
    outputs = nbformat.read(run_stage("demo", repo_root=root), as_version=4).cells[-1].outputs
    assert [(o.name, o.text) for o in outputs] == [
        ("stdout", "first half\nsecond half\n"), ("stderr", "warned\n"), ("stdout", "third\n")]


def test_run_stage_explicit_out_dir_and_params_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "alt.yaml").write_text(yaml.safe_dump({"demo": {"greeting": "alt"}}))
    out = tmp_path / "elsewhere"
    executed = run_stage("demo", params_path="alt.yaml", out_dir=out, repo_root=root)

    assert executed == out / "demo.ipynb"
    assert (out / "greeting.txt").read_text() == "alt:1"  # n_items keeps its default
    assert not (root / "reports").exists()


def test_a_failed_run_publishes_nothing_and_keeps_its_notebook(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", body='raise ValueError("boom")')
    with pytest.raises(PapermillExecutionError, match="boom"):
        run_stage("demo", repo_root=root)
    assert not (root / "reports" / "demo").exists()
    kept = root / ".cache" / "failed" / "demo" / "demo.ipynb"
    assert "boom" in kept.read_text()


def test_a_failed_run_leaves_the_previous_outputs_in_place(tmp_path: Path, capfd) -> None:
    root = make_repo(tmp_path / "repo")
    run_stage("demo", repo_root=root)
    out = root / "reports" / "demo"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    failing = make_repo(tmp_path / "other", body=(
        "from cogrsi_lib.pipeline import resolve_out_dir\n"
        "(resolve_out_dir(out_dir, 'demo') / 'half.txt').write_text('x')\n"
        "raise ValueError('boom')"))
    (root / "notebooks" / "demo.ipynb").write_bytes(
        (failing / "notebooks" / "demo.ipynb").read_bytes())
    capfd.readouterr()
    with pytest.raises(PapermillExecutionError, match="boom"):
        run_stage("demo", repo_root=root)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert (root / ".cache" / "failed" / "demo" / "half.txt").is_file()
    assert not list(out.parent.glob(".demo.*"))
    err = capfd.readouterr().err
    assert "[demo] failed after" in err and "finished" not in err


def test_unknown_stage(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    with pytest.raises(StageError, match=r"unknown stage 'nope'.*stages: demo"):
        run_stage("nope", repo_root=root)


@pytest.mark.parametrize("name", ["../demo", "a/b", ""])
def test_invalid_stage_name(tmp_path: Path, name: str) -> None:
    root = make_repo(tmp_path / "repo")
    with pytest.raises(StageError, match="invalid stage name"):
        run_stage(name, repo_root=root)


def test_missing_params_section(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", params={"other": {"x": 1}})
    with pytest.raises(StageError, match=r"no section 'demo'.*sections: other"):
        run_stage("demo", repo_root=root)


def test_missing_params_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    with pytest.raises(StageError, match="params file not found"):
        run_stage("demo", params_path="missing.yaml", repo_root=root)


def test_load_stage_params_shapes(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("a:\nb: [1, 2]\nc: {out_dir: x}\nd: {k: 1}\n")
    assert load_stage_params("a", path) == {}
    assert load_stage_params("d", path) == {"k": 1}
    with pytest.raises(StageError, match="must be a mapping"):
        load_stage_params("b", path)
    with pytest.raises(StageError, match="must not set out_dir"):
        load_stage_params("c", path)
    path.write_text("[1, 2]\n")
    with pytest.raises(StageError, match="mapping of stage sections"):
        load_stage_params("a", path)
    path.write_text("a: [\n")
    with pytest.raises(StageError, match="not valid YAML"):
        load_stage_params("a", path)


def test_resolve_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = resolve_out_dir(None, "demo"), resolve_out_dir(None, "demo")
    assert first.is_dir() and second.is_dir() and first != second
    assert first.name.startswith("cogrsi-demo-")

    explicit = resolve_out_dir(tmp_path / "a" / "b", "demo")
    assert explicit == tmp_path / "a" / "b" and explicit.is_dir()

    root = make_repo(tmp_path / "repo")
    monkeypatch.chdir(root / "notebooks")
    assert find_repo_root() == root.resolve()
    assert repo_path("data", "x") == root.resolve() / "data" / "x"
    relative = resolve_out_dir("reports/demo", "demo")
    assert relative == root.resolve() / "reports" / "demo" and relative.is_dir()


def test_repo_path_without_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if find_repo_root() is None:
        with pytest.raises(StageError, match="no repository root"):
            repo_path("data")


def test_cli_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from cogrsi_lib.cli import app

    root = make_repo(tmp_path / "repo")
    monkeypatch.chdir(root)
    runner = CliRunner()

    result = runner.invoke(app, ["stage", "demo"])
    assert result.exit_code == 0, result.output
    assert "stage 'demo' done" in result.output
    assert (root / "reports" / "demo" / "greeting.txt").read_text() == "hello-from-params:7"

    result = runner.invoke(app, ["stage", "nope"])
    assert result.exit_code == 2 and "unknown stage 'nope'" in result.output

    result = runner.invoke(app, ["stage", "demo", "--params", "missing.yaml"])
    assert result.exit_code == 2 and "params file not found" in result.output


def test_a_misspelt_key_stops_the_stage_before_any_work(tmp_path, monkeypatch) -> None:
    root = make_repo(tmp_path / "repo", params={"demo": {"greetings": "hi", "n_items": "x"}})

    def never(*args, **kwargs):
        raise AssertionError("the notebook must not run")

    monkeypatch.setattr("papermill.execute_notebook", never)
    with pytest.raises(StageError) as err:
        run_stage("demo", repo_root=root)
    msg = str(err.value)
    assert "stage 'demo'" in msg and "unknown key 'greetings'" in msg
    assert "'n_items'" in msg and "params.yaml" in msg
    assert not (root / "reports").exists()


def test_cli_names_the_misspelt_key_and_the_stage(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from cogrsi_lib.cli import app

    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"pairs": {"n_gate_narative": 4}}))
    monkeypatch.chdir(REPO)
    result = CliRunner().invoke(app, ["stage", "pairs", "--params", str(bad),
                                      "--out-dir", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "stage 'pairs': unknown key 'n_gate_narative'" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["params.yaml", "params.gpu.yaml"])
def test_every_params_file_fits_the_stage_schemas(name) -> None:
    from cogrsi_lib.stage_params import validate_file

    params = yaml.safe_load((REPO / name).read_text())
    checked = validate_file(params)
    assert set(checked) == set(SCHEMAS) - {"demo"}


def test_the_gpu_setting_trains_the_embedded_model_on_the_long_configuration() -> None:
    # training is a CPU stage in either setting; params.gpu.yaml copies the long one
    long, gpu = (yaml.safe_load((REPO / n).read_text())["train"]
                 for n in ("params.train-long.yaml", "params.gpu.yaml"))
    assert gpu == long
    short = yaml.safe_load((REPO / "params.yaml").read_text())["train"]
    assert short["sft"]["steps"] < long["sft"]["steps"] and short["lora"] == long["lora"]


def test_every_notebook_loads_its_schema_and_nothing_else() -> None:
    for stage in set(SCHEMAS) - {"demo"}:
        source = (REPO / "notebooks" / f"{stage}.py").read_text()
        assert f"stage_params.load({stage!r}, params)" in source, stage
        assert "globals()" not in source, stage


@pytest.mark.e2e
def test_a_dead_model_server_stops_the_stage_naming_it(tmp_path: Path) -> None:
    """``reader_eval`` against a closed port on 127.0.0.1: non-zero exit at its first request,
    one line naming the endpoint, no report."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(
        {"reader_eval": {"model": {"backend": "openai", "model": "m", "base_url": url}}}))
    out = tmp_path / "reader_eval"
    done = subprocess.run([str(Path(sys.executable).parent / "cogrsi"), "stage", "reader_eval",
                           "--params", str(params), "--out-dir", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert f"EndpointUnavailable: connection refused at {url}" in last
    assert "nothing published" in last and "finished" not in done.stderr
    assert not out.exists()


def test_a_finished_stage_gets_its_headline_metrics(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", body=(
        "import json\nfrom cogrsi_lib.pipeline import resolve_out_dir\n"
        "out = resolve_out_dir(out_dir, 'demo')\n"
        "(out / 'summary.json').write_text(json.dumps({'questions': 3, 'model': 'm', "
        "'chance': [{'system': 'a', 'accuracy': 0.5, 'items': 3}]}))"))
    run_stage("demo", repo_root=root)
    metrics = json.loads((root / "reports" / "demo" / "metrics.json").read_text())
    assert metrics == {"questions": 3, "systems": {"a": {"accuracy": 0.5, "n": 3}}}


def test_cli_version() -> None:
    import importlib.metadata

    from typer.testing import CliRunner

    from cogrsi_lib.cli import app

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"cogrsi {importlib.metadata.version('cogrsi')}"


def test_the_kernel_talks_over_private_sockets_and_quiet_stages_leave_no_log(
        tmp_path: Path, capfd) -> None:
    root = make_repo(tmp_path / "repo", body="print('quiet')")
    capfd.readouterr()
    run_stage("demo", repo_root=root)
    err = capfd.readouterr().err
    assert "without encryption" not in err and "[demo] finished in" in err
    assert not (root / ".cache" / "logs" / "demo.log").exists()
