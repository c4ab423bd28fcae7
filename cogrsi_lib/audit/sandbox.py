"""Run translated rule code in a locked-down child process, one process per translation (§4.3).

:func:`run_code` starts ``python -I`` on :mod:`cogrsi_lib.audit.child`, sends it the code
and the sample's snapshot, and waits at most ``wall_s``.  Every way the code can fail
(no code, a syntax error, a policy violation, a failing module body, the time or memory
limit, a crashed process) comes back as a :class:`RunResult` outcome; the audit never
raises for it.  :func:`run_many` runs several translations in parallel, one process each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cogrsi_lib.audit.snapshot import AuditSample

#: Outcomes a run can have; only ``ok`` has per-question results.
OUTCOMES = (
    "ok", "no_code", "syntax_error", "rejected", "load_error", "timeout", "memory", "crashed",
)  # fmt: skip
#: Per-question codes (see :mod:`cogrsi_lib.audit.child`).
CODE_NAMES = ("not_applies", "answer", "applies_error", "predict_error", "no_answer",
              "bad_answer")

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from cogrsi_lib.audit.child import main; main()"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


@dataclass(frozen=True)
class SandboxLimits:
    """Per-translation limits: wall time (parent kills), CPU time and address space (child)."""

    wall_s: float = 120.0
    cpu_s: float = 60.0
    memory_mb: int = 1024

    @classmethod
    def from_params(cls, raw: dict[str, Any] | None) -> SandboxLimits:
        return cls(**(raw or {}))


@dataclass
class RunResult:
    """What one translation did on the sample.

    ``codes[i]`` is the per-question code (0..5, :data:`CODE_NAMES`) and ``answers[i]`` the
    prediction, normalised by :func:`normalise`, where ``codes[i] == 1`` (else ``None``);
    both are ``None`` unless ``ok``.
    """

    outcome: str
    message: str = ""
    codes: np.ndarray | None = field(default=None, repr=False)
    answers: np.ndarray | None = field(default=None, repr=False)
    error_samples: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    load_s: float = 0.0
    run_s: float = 0.0
    stderr: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    def applies(self) -> np.ndarray:
        """Questions where the translation applies and gives an answer."""
        if self.codes is None:
            raise ValueError(f"run has no results (outcome {self.outcome})")
        return self.codes == 1

    def counts(self) -> dict[str, int]:
        if self.codes is None:
            return {n: 0 for n in CODE_NAMES}
        found = np.bincount(self.codes, minlength=len(CODE_NAMES))
        return {n: int(found[i]) for i, n in enumerate(CODE_NAMES)}

    def summary(self) -> dict[str, Any]:
        c = self.counts()
        return {
            "outcome": self.outcome,
            "message": self.message,
            "n_applies": c["answer"],
            "n_errors": c["applies_error"] + c["predict_error"] + c["bad_answer"],
            "n_no_answer": c["no_answer"],
            "error_samples": json.dumps(self.error_samples),
            "wall_s": round(self.wall_s, 3),
            "run_s": self.run_s,
        }


def _decode(raw: dict[str, Any], n: int, wall: float, stderr: str) -> RunResult:
    outcome = raw.get("outcome", "crashed")
    if outcome not in OUTCOMES:
        return RunResult("crashed", f"unknown outcome {outcome!r}", wall_s=wall, stderr=stderr)
    if outcome != "ok":
        return RunResult(outcome, str(raw.get("message", "")), wall_s=wall, stderr=stderr)
    codes_text = raw["codes"]
    if len(codes_text) != n:
        return RunResult("crashed", f"{len(codes_text)} results for {n} questions", wall_s=wall)
    codes = np.frombuffer(codes_text.encode("ascii"), dtype=np.uint8) - ord("0")
    table = [normalise(str(t)) for t in raw["table"]]
    answers = np.full(n, None, dtype=object)
    hits = np.flatnonzero(codes == 1)
    preds = raw["preds"]
    if len(preds) != len(hits):
        return RunResult("crashed", "answers do not match codes", wall_s=wall)
    if len(hits):
        answers[hits] = np.asarray(table, dtype=object)[np.asarray(preds, dtype=np.int64)]
    return RunResult(
        "ok", "", codes.astype(np.uint8), answers, list(raw.get("error_samples", [])),
        wall_s=wall, load_s=float(raw.get("load_s", 0.0)), run_s=float(raw.get("run_s", 0.0)),
        stderr=stderr,
    )


def run_code(code: str | None, sample: AuditSample, limits: SandboxLimits | None = None,
             no_code_reason: str = "no code") -> RunResult:
    """Run ``code`` over every question of ``sample`` in one sandbox process."""
    limits = limits or SandboxLimits()
    if not code or not code.strip():
        return RunResult("no_code", no_code_reason)
    header = json.dumps({"code": code, "cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb})
    payload = header.encode("utf-8") + b"\n" + sample.payload
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", _BOOT, _PACKAGE_PARENT],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"LANG": "C.UTF-8"}, cwd=os.sep, start_new_session=True,
    )
    try:
        out, err = proc.communicate(payload, timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.communicate()
        wall = time.perf_counter() - start
        return RunResult("timeout", f"wall-time limit of {limits.wall_s:g} s", wall_s=wall)
    wall = time.perf_counter() - start
    stderr = err.decode("utf-8", "replace")[-2000:]
    if proc.returncode != 0 or not out:
        rc = proc.returncode
        if rc in (-signal.SIGXCPU, -signal.SIGKILL):
            return RunResult("timeout", "CPU-time limit reached", wall_s=wall, stderr=stderr)
        if "MemoryError" in stderr:
            return RunResult("memory", "memory limit reached", wall_s=wall, stderr=stderr)
        return RunResult("crashed", f"sandbox exited with status {rc}", wall_s=wall,
                         stderr=stderr)
    try:
        raw = json.loads(out)
    except ValueError:
        return RunResult("crashed", "unreadable sandbox output", wall_s=wall, stderr=stderr)
    return _decode(raw, sample.n_questions, wall, stderr)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_many(codes: Sequence[str | None], sample: AuditSample,
             limits: SandboxLimits | None = None, workers: int | None = None) -> list[RunResult]:
    """One sandbox process per code, ``workers`` at a time (default: the CPU count)."""
    workers = max(1, workers or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda c: run_code(c, sample, limits), codes))


def normalise(answer: str) -> str:
    """Answers compare ignoring case and surrounding spaces (API.md)."""
    return answer.strip().casefold()


def answers_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality of normalised answers; ``None`` equals nothing."""
    known = np.not_equal(a, None) & np.not_equal(b, None)
    return known & (a == b)
