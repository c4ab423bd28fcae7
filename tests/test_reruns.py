"""Reruns are byte-identical, so DVC sees change only where there is some.

The model-free stages run twice from a clean output directory and give the same bytes; a
fresh clone's `dvc repro` of them reproduces exactly the outputs the committed dvc.lock
records."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cogrsi_lib.pipeline import run_stage

ROOT = Path(__file__).resolve().parents[1]
MODEL_FREE = ("oracle_worlds", "pairs", "nested", "benchmarks")


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.e2e
@pytest.mark.parametrize("stage", MODEL_FREE)
def test_a_rerun_gives_the_same_bytes(stage, tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({stage: {}}))  # the schema's CI defaults
    out = tmp_path / stage
    run_stage(stage, params_path=params, out_dir=out, repo_root=ROOT)
    first = digest(out)
    assert f"{stage}.ipynb" in first and "summary.json" in first
    shutil.rmtree(out)
    run_stage(stage, params_path=params, out_dir=out, repo_root=ROOT)
    assert digest(out) == first


def dvc(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """DVC in ``cwd``, reading benchmark data from that clone only: its data/ and no shared
    samples from outside the repository (``../shared/benchmarks`` is not a DVC input)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "COGRSI_DATA": str(cwd / "data" / "benchmarks"),
           "COGRSI_SHARED_BENCHMARKS": str(cwd / "no-shared-samples")}
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, check=False)


@pytest.mark.e2e
def test_a_fresh_clone_reproduces_the_committed_lock(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    pulled = dvc("pull", "-q", "data.dvc", cwd=clone)
    assert pulled.returncode == 0, pulled.stderr
    repro = dvc("repro", *MODEL_FREE, cwd=clone)
    assert repro.returncode == 0, repro.stdout + repro.stderr
    status = dvc("status", *MODEL_FREE, cwd=clone)
    assert status.returncode == 0, status.stderr
    assert "up to date" in status.stdout, status.stdout
    lock = subprocess.run(["git", "diff", "dvc.lock"], cwd=clone, text=True,
                          capture_output=True, check=True)
    assert lock.stdout == "", f"dvc repro changed dvc.lock:\n{lock.stdout}"
