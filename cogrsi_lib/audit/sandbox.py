"""Run translated rule code in a locked-down child process, one process per translation (§4.3).

:func:`run_code` starts ``python -I`` on :mod:`cogrsi_lib.audit.child`, sends it the code, the
sample's snapshot and a fresh signing key, and reads its answer for at most ``wall_s``
seconds and :func:`output_cap` bytes.  The child gives up root and system calls before the
code runs (:mod:`cogrsi_lib.audit.isolation`).  The parent trusts nothing the child sends: a
result counts only if it carries the key's HMAC (so bytes the code writes itself are never
taken for results: ``tampered``) and passes a strict schema (else ``bad_output``).  At the
end the child's whole process group is killed, whatever happened.  What the child gave up
(``RunResult.isolation``) comes from the first of its two records, which it writes before the
code runs, so code that escapes the policy cannot change it.  Every way the code can
fail comes back as a :class:`RunResult` outcome; :func:`run_code` does not raise for it.
:func:`run_many` runs several translations in parallel, one process each.  SECURITY.md states
the threat model.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from cogrsi_lib.audit.child import HARNESS_FAILED, ISOLATION_TAG
from cogrsi_lib.audit.printable import printable
from cogrsi_lib.audit.snapshot import AuditSample
from cogrsi_lib.settings import Settings

#: Outcomes a run can have; only ``ok`` has per-question results.
OUTCOMES = (
    "ok", "no_code", "syntax_error", "rejected", "load_error", "timeout", "memory", "crashed",
    "bad_output", "tampered", "unisolated",
)  # fmt: skip
#: Per-question codes (see :mod:`cogrsi_lib.audit.child`).
CODE_NAMES = ("not_applies", "answer", "applies_error", "predict_error", "no_answer",
              "bad_answer")
#: Standard error kept from a child (it is silenced before the code runs).
MAX_STDERR_BYTES = 64 * 1024
#: After the child exits, how long its pipes may stay open (a descendant holding them).
EXIT_GRACE_S = 0.5

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from cogrsi_lib.audit.child import main; main()"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])


#: seconds, as given (whole or not: a run's summary writes them back unchanged)
Seconds = Annotated[int | float, Field(gt=0)]


class SandboxLimits(Settings):
    """Per-translation limits: wall time (parent kills), CPU time and address space (child).

    ``require_seccomp`` (default on) refuses to run code where the system-call filter cannot
    be loaded (outcome ``unisolated``); turning it off leaves the AST policy and the
    resource limits only. Typed settings (``params.yaml: audit.limits``).
    """

    wall_s: Seconds = 120.0
    cpu_s: Seconds = 60.0
    memory_mb: PositiveInt = 1024
    require_seccomp: bool = True

    @classmethod
    def from_params(cls, raw: Mapping[str, Any] | None) -> SandboxLimits:
        return cls.model_validate(dict(raw or {}))


def output_cap(n_questions: int) -> int:
    """Bytes a child may send for ``n_questions``: the largest honest result, with room."""
    return 2 * 1024 * 1024 + 16 * n_questions


@dataclass
class RunResult:
    """What one translation did on the sample.

    ``codes[i]`` is the per-question code (0..5, :data:`CODE_NAMES`) and ``answers[i]`` the
    prediction, normalised by :func:`normalise` and then made printable
    (:func:`~cogrsi_lib.audit.printable.printable`), where ``codes[i] == 1`` (else ``None``);
    both are ``None`` unless ``ok``.  ``message`` and the error samples' texts are printable
    too.  ``isolation`` says what the child gave up, as it wrote before the code ran (empty
    when that record is missing).
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
    isolation: str = ""

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
            "isolation": self.isolation,
        }


_Text = Annotated[str, Field(max_length=2000)]


class _ErrorSample(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    question: int = Field(ge=0)
    where: Literal["applies", "predict"]
    error: _Text


class _Report(BaseModel):
    """The one JSON object a child may send (see :mod:`cogrsi_lib.audit.child`)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    outcome: Literal["ok", "syntax_error", "rejected", "load_error", "timeout", "memory",
                     "crashed", "unisolated"]
    message: _Text
    n_questions: int
    codes: Annotated[str, Field(pattern=r"^[0-5]*$")] | None = None
    table: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=1000)] | None \
        = None
    preds: list[Annotated[int, Field(ge=0)]] | None = None
    error_samples: Annotated[list[_ErrorSample], Field(max_length=5)] = []
    load_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    run_s: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0


class _IsolationRecord(BaseModel):
    """The record a child writes before the code runs: what it gave up."""

    model_config = ConfigDict(extra="forbid", strict=True)
    isolation: Annotated[str, Field(max_length=200)]


class _Refused(Exception):
    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.message = message


def _signature(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest().encode("ascii")


def _utf8(text: str) -> str:
    text.encode("utf-8")  # lone surrogates raise UnicodeEncodeError
    return text


def read_isolation(out: bytes, key: bytes) -> tuple[str, bytes]:
    """The isolation record at the head of ``out`` (made printable) and the bytes after it.

    Raises :class:`_Refused` with outcome ``tampered`` (missing, or no valid signature) or
    ``bad_output``.
    """
    body, sep, rest = bytes(out).partition(b"\n")
    mac, sep2, rest = rest.partition(b"\n")
    if not (sep and sep2) or not hmac.compare_digest(_signature(key, ISOLATION_TAG + body), mac):
        raise _Refused("tampered", "no isolation record signed by the sandbox harness")
    try:
        record = _IsolationRecord.model_validate_json(body)
        _utf8(record.isolation)
    except (ValidationError, ValueError, RecursionError) as exc:
        raise _Refused("bad_output", f"malformed isolation record ({type(exc).__name__})") \
            from None
    return printable(record.isolation), rest


def read_report(out: bytes, key: bytes, n_questions: int) -> _Report:
    """The child's report, if ``out`` is one the harness signed and it is well formed.

    Raises :class:`_Refused` with outcome ``tampered`` (no valid signature) or ``bad_output``.
    """
    body, sep, mac = bytes(out).rpartition(b"\n")
    if not sep or not hmac.compare_digest(_signature(key, body), mac):
        raise _Refused("tampered", "output not signed by the sandbox harness")
    try:
        report = _Report.model_validate_json(body)
        for text in (report.message, *(report.table or ()),
                     *(e.error for e in report.error_samples)):
            _utf8(text)
    except (ValidationError, ValueError, RecursionError) as exc:
        raise _Refused("bad_output", f"malformed result ({type(exc).__name__})") from None
    if report.n_questions != n_questions:
        raise _Refused("bad_output", f"{report.n_questions} questions, expected {n_questions}")
    if report.outcome == "ok":
        if report.codes is None or report.table is None or report.preds is None:
            raise _Refused("bad_output", "ok without results")
        if len(report.codes) != n_questions:
            raise _Refused("bad_output",
                           f"{len(report.codes)} results for {n_questions} questions")
        if len(report.preds) != report.codes.count("1") or any(
                p >= len(report.table) for p in report.preds):
            raise _Refused("bad_output", "answers do not match codes")
    return report


def _result(report: _Report, isolation: str, wall: float, stderr: str) -> RunResult:
    """The run a valid report describes; every text in it made printable."""
    if report.outcome != "ok":
        return RunResult(report.outcome, printable(report.message), wall_s=wall,
                         stderr=stderr, isolation=isolation)
    n = len(report.codes or "")
    codes = np.frombuffer((report.codes or "").encode("ascii"), dtype=np.uint8) - ord("0")
    answers = np.full(n, None, dtype=object)
    hits = np.flatnonzero(codes == 1)
    if len(hits):
        table = np.asarray([printable(normalise(t)) for t in report.table or ()],
                           dtype=object)
        answers[hits] = table[np.asarray(report.preds, dtype=np.int64)]
    return RunResult(
        "ok", "", codes.astype(np.uint8), answers,
        [{**e.model_dump(), "error": printable(e.error)} for e in report.error_samples],
        wall_s=wall, load_s=report.load_s, run_s=report.run_s, stderr=stderr,
        isolation=isolation,
    )


def _feed(stream: Any, payload: bytes) -> None:
    try:
        stream.write(payload)
        stream.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _exited(pid: int) -> bool:
    """Whether the child has exited, without reaping it (its group id stays valid)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _collect(proc: subprocess.Popen, payload: bytes, wall_s: float,
             cap: int) -> tuple[bytes, bytes, str]:
    """Feed ``payload``; read stdout (at most ``cap`` bytes) and stderr until the child and
    its pipes are done or ``wall_s`` passes.  The third value names a problem, if any.

    A child that closes its pipes is still waited for (until ``wall_s``): how it ends is
    what the run records.  Once it has exited, its pipes get :data:`EXIT_GRACE_S`."""
    writer = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
    writer.start()
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + wall_s
    exited_at: float | None = None
    problem = ""
    with selectors.DefaultSelector() as sel:
        for stream in (proc.stdout, proc.stderr):
            os.set_blocking(stream.fileno(), False)
            sel.register(stream, selectors.EVENT_READ)
        while not problem:
            now = time.monotonic()
            if now >= deadline:
                problem = "timeout"
                break
            if exited_at is None and _exited(proc.pid):
                exited_at = now
            if exited_at is not None and (not sel.get_map() or now - exited_at > EXIT_GRACE_S):
                break  # done, or a descendant holds the pipes open: stop listening
            if not sel.get_map():  # pipes closed, child still running
                time.sleep(min(deadline - now, 0.01))
                continue
            for key, _ in sel.select(timeout=min(deadline - now, 0.05)):
                try:
                    chunk = os.read(key.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fileobj)
                elif key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > cap:
                        problem = "too_much"
                        break
                elif len(err) < MAX_STDERR_BYTES:
                    err += chunk[: MAX_STDERR_BYTES - len(err)]
    return bytes(out), bytes(err), problem


def run_code(code: str | None, sample: AuditSample, limits: SandboxLimits | None = None,
             no_code_reason: str = "no code", *, ast_policy: bool = True) -> RunResult:
    """Run ``code`` over every question of ``sample`` in one sandbox process.

    ``ast_policy=False`` runs the code with every builtin, behind the OS layer only: for the
    tests that show that layer holding alone, never for model output.
    """
    limits = limits or SandboxLimits()
    if not code or not code.strip():
        return RunResult("no_code", no_code_reason)
    key = secrets.token_bytes(32)
    header = json.dumps({
        "code": code, "cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb, "key": key.hex(),
        "require_seccomp": limits.require_seccomp, "policy": ast_policy,
    })
    payload = header.encode("utf-8", "surrogatepass") + b"\n" + sample.payload
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", _BOOT, _PACKAGE_PARENT],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={"LANG": "C.UTF-8"}, cwd=os.sep, start_new_session=True,
    )
    try:
        out, err, problem = _collect(proc, payload, limits.wall_s,
                                     output_cap(sample.n_questions))
    finally:
        cpu = _kill(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    wall = time.perf_counter() - start
    stderr = err.decode("utf-8", "replace")[-2000:]
    if problem == "timeout":
        return RunResult("timeout", f"wall-time limit of {limits.wall_s:g} s", wall_s=wall,
                         stderr=stderr)
    if problem == "too_much":
        return RunResult("bad_output", f"more than {output_cap(sample.n_questions)} bytes "
                         "of output", wall_s=wall, stderr=stderr)
    isolation, refused = "", None
    try:
        isolation, rest = read_isolation(out, key)
    except _Refused as exc:
        refused = exc
    rc = proc.returncode
    if rc != 0 or not out:
        outcome, message = exit_outcome(rc, cpu, limits.cpu_s, stderr)
        return RunResult(outcome, message, wall_s=wall, stderr=stderr, isolation=isolation)
    try:
        if refused is not None:
            raise refused
        report = read_report(rest, key, sample.n_questions)
    except _Refused as exc:
        return RunResult(exc.outcome, exc.message, wall_s=wall, stderr=stderr,
                         isolation=isolation)
    return _result(report, isolation, wall, stderr)


#: Share by which the CPU time a reaped child reports may fall short of the limit that
#: stopped it: the kernel checks the limit against tick-sampled time, the usage it reports
#: is scheduler time (measured here up to 7 % lower).
_CPU_SLACK = 0.1


def exit_outcome(rc: int | None, cpu_s: float | None, cpu_limit_s: float,
                 stderr: str = "") -> tuple[str, str]:
    """Outcome and message of a child that ended without a result: status ``rc`` (``-n``
    for signal ``n``) after ``cpu_s`` seconds of CPU, under a limit of ``cpu_limit_s``.

    The child's soft CPU limit (``SIGXCPU``) is at least ``cpu_limit_s`` and its hard limit
    (the kernel's ``SIGKILL``) at least one second more (:func:`cogrsi_lib.audit.child.restrict`),
    so a ``SIGKILL`` with less CPU than that came from elsewhere, such as the kernel's
    out-of-memory killer, and is a crash, not a timeout.  The parent itself kills a running
    child only at the wall-time limit or the output cap, which are recorded before this.
    """
    if rc == -signal.SIGSYS:
        return "crashed", "stopped by the sandbox at a forbidden system call"
    used = "" if cpu_s is None else f" after {cpu_s:.2f} s of CPU"
    if rc in (-signal.SIGXCPU, -signal.SIGKILL) and cpu_s is not None:
        needed = (cpu_limit_s + (1 if rc == -signal.SIGKILL else 0)) * (1 - _CPU_SLACK)
        if cpu_s >= needed:
            return "timeout", f"CPU-time limit reached{used}"
    if "MemoryError" in stderr:
        return "memory", "memory limit reached"
    if rc is not None and rc < 0:
        name = _signal_name(-rc)
        if rc == -signal.SIGKILL:
            return "crashed", (f"killed by SIGKILL from outside the sandbox{used}, below its "
                               "CPU limit (e.g. the kernel's out-of-memory killer)")
        return "crashed", f"killed by {name}{used}"
    if rc == HARNESS_FAILED:
        return "crashed", f"the sandbox harness failed (uncaught exception){used}"
    return "crashed", f"sandbox exited with status {rc} without a result{used}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _reap(proc: subprocess.Popen, timeout_s: float = 10.0) -> float | None:
    """Wait for the (killed) child, set its return code; the CPU seconds it used, or
    ``None`` when it was reaped elsewhere or is still there after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def _kill(proc: subprocess.Popen) -> float | None:
    """Kill the child's whole process group, then reap the child (bounded wait); the CPU
    seconds the child used, when known."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(OSError):
            proc.kill()
    return _reap(proc)


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
