"""Run a pipeline stage: execute `notebooks/<stage>.ipynb` with papermill.

Stage notebook convention (every notebook under `notebooks/` follows it):

1. The first code cell is tagged `parameters` and assigns `params = {}` and `out_dir = None`.
   The next loads `p = cogrsi_lib.stage_params.load("<stage>", params)`: the stage's typed
   schema fills in the small, CI-sized defaults and refuses unknown keys.
2. The notebook gets its output directory with
   `out = cogrsi_lib.pipeline.resolve_out_dir(out_dir, "<stage>")` and writes every table and
   figure there (through `cogrsi_lib.reports`). With `out_dir = None` (nbval in CI, or a plain
   run in JupyterLab) that is a fresh temporary directory, so tests never touch `reports/`.
3. `cogrsi stage <stage>` (what `dvc repro` runs) checks `params.yaml[<stage>]` against the
   schema before any work, injects it as `params` with `out_dir = "reports/<stage>"`, and
   saves the executed notebook as `reports/<stage>/<stage>.ipynb`, and the headline numbers of
   its `summary.json` as `metrics.json` (`cogrsi_lib/metrics.py`). A run publishes only when
   it finishes: the previous outputs are set aside while it runs and put back if it fails,
   and the failed run (its executed notebook with the traceback, and whatever it wrote) is
   kept in `.cache/failed/<stage>/`.
4. The kernel starts in the notebook's own directory (as in JupyterLab and nbval); read inputs
   through `repo_path("data", ...)` instead of paths relative to the working directory.
5. Notebooks only call the library; no logic of their own.
6. `notebooks/<stage>.py` (jupytext percent format) is the source; `jupytext --sync` keeps the
   `.ipynb` beside it in step (tests/test_notebook_pairs.py checks that they agree).
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import papermill
import yaml

from cogrsi_lib import progress, stage_params
from cogrsi_lib.metrics import write_metrics

__all__ = [
    "StageError",
    "find_repo_root",
    "load_stage_params",
    "repo_path",
    "resolve_out_dir",
    "run_stage",
]

ROOT_MARKERS = ("dvc.yaml", "params.yaml")
NOTEBOOK_DIR = "notebooks"
REPORTS_DIR = "reports"
KERNEL_NAME = "python3"
#: progress logs of stage runs, under the repository root (untracked)
LOG_DIR = ".cache/logs"
#: the outputs of the last failed run of each stage, under the repository root (untracked)
FAILED_DIR = ".cache/failed"
#: the longest silence of a running stage on standard error
HEARTBEAT_S = 30.0

_STAGE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_VOLATILE_KEYS = ("start_time", "end_time", "duration")


class StageError(Exception):
    """A stage cannot be run: unknown stage, missing or malformed parameters."""


def find_repo_root(start: str | Path | None = None) -> Path | None:
    """Nearest ancestor of `start` (default: cwd) holding `dvc.yaml` or `params.yaml`."""
    here = Path(start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if any((candidate / marker).is_file() for marker in ROOT_MARKERS):
            return candidate
    return None


def repo_path(*parts: str | Path) -> Path:
    """Path inside the repository root, independent of the working directory."""
    root = find_repo_root()
    if root is None:
        raise StageError(
            f"no repository root (a directory with {' or '.join(ROOT_MARKERS)}) above {Path.cwd()}"
        )
    return root.joinpath(*parts)


def resolve_out_dir(out_dir: str | Path | None, stage: str) -> Path:
    """Output directory of a stage notebook, created.

    `None` gives a fresh temporary directory; a relative path is taken from the repository
    root (or the working directory when there is none).
    """
    if out_dir is None:
        return Path(tempfile.mkdtemp(prefix=f"cogrsi-{stage}-"))
    path = Path(out_dir)
    if not path.is_absolute():
        path = (find_repo_root() or Path.cwd()) / path
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_stage_params(name: str, params_path: str | Path) -> dict[str, Any]:
    """The mapping `params_path[name]`; an empty section gives `{}`."""
    path = Path(params_path)
    if not path.is_file():
        raise StageError(f"params file not found: {path}")
    try:
        params = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise StageError(f"params file {path} is not valid YAML: {err}") from err
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise StageError(f"params file {path} must hold a mapping of stage sections")
    if name not in params:
        known = ", ".join(sorted(map(str, params))) or "none"
        raise StageError(f"no section '{name}' in {path} (sections: {known})")
    section = params[name]
    if section is None:
        return {}
    if not isinstance(section, Mapping):
        raise StageError(
            f"section '{name}' in {path} must be a mapping, got {type(section).__name__}"
        )
    if "out_dir" in section:
        raise StageError(f"section '{name}' in {path} must not set out_dir (use --out-dir)")
    return dict(section)


def run_stage(
    name: str,
    params_path: str | Path = "params.yaml",
    out_dir: str | Path | None = None,
    repo_root: str | Path | None = None,
    kernel_name: str = KERNEL_NAME,
) -> Path:
    """Execute `notebooks/<name>.ipynb` with `params_path[name]` and return the executed copy.

    Relative `params_path` and `out_dir` are taken from `repo_root` (default: the nearest
    repository root above the working directory). The executed notebook is written to
    `<out_dir>/<name>.ipynb`, `out_dir` defaulting to `reports/<name>`. Timing metadata is
    stripped so that reruns give the same file. Raises `StageError` for an unknown stage or
    bad parameters, and papermill's `PapermillExecutionError` when a cell fails: `out_dir`
    then holds the previous run's outputs again, and the failed run is in
    `.cache/failed/<name>/` (the executed notebook with the traceback included).
    """
    root = Path(repo_root).resolve() if repo_root else (find_repo_root() or Path.cwd())
    if not _STAGE_NAME.match(name):
        raise StageError(f"invalid stage name: {name!r}")
    notebook = root / NOTEBOOK_DIR / f"{name}.ipynb"
    if not notebook.is_file():
        known = ", ".join(sorted(p.stem for p in (root / NOTEBOOK_DIR).glob("*.ipynb")))
        raise StageError(
            f"unknown stage '{name}': no notebook {notebook} (stages: {known or 'none'})"
        )

    section = load_stage_params(name, _under(root, params_path))
    try:
        stage_params.load(name, section)
    except stage_params.StageParamsError as err:
        raise StageError(f"{err} (in {params_path})") from None
    out = _under(root, out_dir if out_dir is not None else Path(REPORTS_DIR) / name).resolve()
    executed = out / f"{name}.ipynb"
    params = {"params": section, "out_dir": _out_dir_param(out, root, notebook.parent)}

    log_path = root / LOG_DIR / f"{name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("", encoding="utf-8")
    with _published_on_success(out, root / FAILED_DIR / name), \
            tempfile.TemporaryDirectory(prefix="cogrsi-kernel-") as sockets:
        try:
            with _echo(log_path, name), _environ({**progress.QUIET,
                                                  progress.ENV: str(log_path)}):
                papermill.execute_notebook(
                    str(notebook),
                    str(executed),
                    parameters=params,
                    kernel_name=kernel_name,
                    cwd=str(notebook.parent),
                    progress_bar=False,
                    kernel_manager_class=_ipc_kernel_manager(Path(sockets)),
                )
        finally:
            if executed.is_file():
                _scrub(executed, root)
            if log_path.is_file() and not log_path.stat().st_size:
                log_path.unlink()  # the stage logged nothing
        write_metrics(out)
    return executed


def _ipc_kernel_manager(folder: Path) -> type:
    """A kernel manager whose kernel talks over Unix sockets in ``folder`` (private to this
    user), not over TCP on 127.0.0.1 in plain text."""
    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**{"transport": "ipc", "ip": str(folder / "kernel"), **kwargs})

    return IPCKernelManager


@contextmanager
def _published_on_success(out: Path, failed: Path) -> Iterator[None]:
    """Run the body with ``out`` empty and the previous outputs set aside; on an error the
    body's outputs move to ``failed`` and the previous ones come back, so ``out`` never holds
    a run that did not finish."""
    import shutil

    out.parent.mkdir(parents=True, exist_ok=True)
    previous = out.with_name(f".{out.name}.previous")
    if previous.exists() and not out.exists():  # an earlier run was killed: restore
        previous.rename(out)
    shutil.rmtree(previous, ignore_errors=True)
    if out.exists():
        out.rename(previous)
    out.mkdir()
    try:
        yield
    except BaseException:
        shutil.rmtree(failed, ignore_errors=True)
        failed.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(out), str(failed))
        if previous.exists():
            previous.rename(out)
        raise
    shutil.rmtree(previous, ignore_errors=True)


@contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    """``values`` set in the environment (a kernel started meanwhile inherits them)."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def _echo(path: Path, name: str, every: float = 1.0) -> Iterator[None]:
    """Echo the stage's progress log to standard error while it runs, with a line at least
    every :data:`HEARTBEAT_S` seconds, and its total time at the end."""
    stop = threading.Event()
    start = time.monotonic()

    def follow() -> None:
        last = time.monotonic()
        with path.open(encoding="utf-8") as f:
            while True:
                lines = f.readlines()
                for line in lines:
                    print(f"[{name}] {line.rstrip()}", file=sys.stderr, flush=True)
                now = time.monotonic()
                if lines:
                    last = now
                elif now - last >= HEARTBEAT_S:
                    print(f"[{name}] running, {now - start:.0f} s", file=sys.stderr, flush=True)
                    last = now
                if stop.is_set():
                    return
                stop.wait(every)

    thread = threading.Thread(target=follow, name=f"echo-{name}", daemon=True)
    thread.start()
    outcome = "failed after"
    try:
        yield
        outcome = "finished in"
    finally:
        stop.set()
        thread.join()
        print(f"[{name}] {outcome} {time.monotonic() - start:.0f} s", file=sys.stderr,
              flush=True)


def _under(root: Path, path: str | Path) -> Path:
    path = Path(path)
    return path if path.is_absolute() else root / path


def _out_dir_param(out: Path, root: Path, notebook_dir: Path) -> str:
    """`out` relative to the root when the notebook will find that root, else absolute."""
    if out.is_relative_to(root) and find_repo_root(notebook_dir) == root:
        return out.relative_to(root).as_posix()
    return str(out)


def _scrub(path: Path, root: Path) -> None:
    """Drop timestamps and machine-specific paths from an executed notebook."""
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    meta = nb.metadata.get("papermill", {})
    for key in _VOLATILE_KEYS:
        meta.pop(key, None)
    for key in ("input_path", "output_path"):
        if key in meta and Path(meta[key]).is_relative_to(root):
            meta[key] = Path(meta[key]).relative_to(root).as_posix()
    for cell in nb.cells:
        if "injected-parameters" in cell.metadata.get("tags", []) and "id" in cell:
            cell.id = "injected-parameters"  # papermill gives it a random id
        cell.metadata.pop("execution", None)
        cell_meta = cell.metadata.get("papermill", {})
        for key in _VOLATILE_KEYS:
            cell_meta.pop(key, None)
        if "outputs" in cell:
            cell.outputs = _coalesced(cell.outputs)
    nbformat.write(nb, path)


def _coalesced(outputs: list) -> list:
    """``outputs`` with each run of text on one stream merged into one output: the kernel
    flushes a long print in as many pieces as the machine's load makes it, so the pieces
    are not part of the result."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream" and last.get("name") == output.get("name")):
            last["text"] = "".join(last["text"]) + "".join(output["text"])
        else:
            merged.append(output)
    return merged
