"""The sandbox process: run one translation over every question of a snapshot (CogRSI §4.3).

Started by :mod:`cogrsi_lib.audit.sandbox` as ``python -I`` with this module as its main.
It reads one header line (the code, the limits and a one-run signing key) and the snapshot
from standard input, and builds the read-only views.  Then it locks itself down before it
touches the code: it gives up root, stops being dumpable and takes resource limits (CPU time,
address space, no new files, no core dumps, no processes).  Only then is the code checked
(:mod:`cogrsi_lib.audit.policy`) and compiled; the seccomp allow-list
(:mod:`cogrsi_lib.audit.isolation`) is loaded next, and the code runs with allow-listed
builtins, once per question.  It sends two signed records on a private descriptor: what it
gave up, written before the code runs, and the result; standard output and error go
nowhere.  The parent accepts nothing that does not carry the HMAC and match the schema
(SECURITY.md).

Per-question codes: ``0`` does not apply, ``1`` applies with an answer, ``2`` ``applies``
raised, ``3`` ``predict`` raised, ``4`` ``predict`` returned None, ``5`` ``predict`` returned
something that is not a string, number or boolean, a value the harness cannot turn into text
(an integer too long to print), or one more distinct answer than
:data:`MAX_DISTINCT_ANSWERS`.
"""

from __future__ import annotations

import hmac
import json
import math
import os
import resource
import signal
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from cogrsi_lib.audit import isolation
from cogrsi_lib.audit.api import answer_string, build_views
from cogrsi_lib.audit.policy import PolicyViolation, compile_rule, restricted_globals
from cogrsi_lib.audit.printable import printable

NOT_APPLIES, ANSWER, APPLIES_ERROR, PREDICT_ERROR, NO_ANSWER, BAD_ANSWER = b"012345"
MAX_ERROR_SAMPLES = 5
MAX_ANSWER_CHARS = 200
MAX_DISTINCT_ANSWERS = 1000
MAX_MESSAGE_CHARS = 300
#: Exit status when an exception escapes the harness (``EX_SOFTWARE``); no traceback is printed.
HARNESS_FAILED = 70


class CpuLimit(BaseException):
    """The CPU-time limit was reached (SIGXCPU)."""


def _on_xcpu(_signum: int, _frame: Any) -> None:
    raise CpuLimit()


def _vm_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _limit(kind: int, value: int) -> None:
    try:
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        soft, hard = resource.getrlimit(kind)
        if hard == resource.RLIM_INFINITY or value <= hard:
            resource.setrlimit(kind, (value, hard))


def restrict(cpu_s: float, memory_mb: int) -> bool:
    """Give up root and take the resource limits; ``True`` when root was given up.

    Raises :class:`~cogrsi_lib.audit.isolation.IsolationError` when privileges stay.
    """
    vm = _vm_bytes()  # /proc/self is unreadable once the process is not dumpable
    try:
        dropped = isolation.drop_privileges()
        isolation.set_not_dumpable()
    except (OSError, AttributeError) as exc:  # AttributeError: no setresuid or prctl here
        raise isolation.IsolationError(f"dropping privileges: {exc}") from exc
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    signal.signal(signal.SIGXCPU, _on_xcpu)
    soft = math.ceil(used + cpu_s)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    if vm is not None and memory_mb > 0:
        _limit(resource.RLIMIT_AS, vm + memory_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_FSIZE, 0)
    _limit(resource.RLIMIT_NOFILE, 0)
    if hasattr(resource, "RLIMIT_NPROC"):
        _limit(resource.RLIMIT_NPROC, 0)
    return dropped


def seal(result_fd: int, require_seccomp: bool = True) -> bool:
    """Load the system-call filter (after this only ``result_fd`` is writable); ``False`` when
    libseccomp is missing and not required.  Raises ``IsolationError`` when it fails."""
    if not require_seccomp and isolation.seccomp_problem():
        return False
    try:
        isolation.install_syscall_filter(result_fd)
    except OSError as exc:
        raise isolation.IsolationError(f"seccomp filter: {exc}") from exc
    return True


def _clean(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters and made printable (the parent does it again)."""
    return printable(text[:limit])


def _fail_quietly(*_args: Any) -> None:
    os._exit(HARNESS_FAILED)


def _ignore(_unraisable: Any) -> None:
    """``sys.unraisablehook``: an exception Python ignores (in a finaliser) stays ignored."""


def silence() -> int:
    """Send standard output and error nowhere and stop Python from printing tracebacks.

    Returns a private copy of the result descriptor (standard output).  A traceback quotes
    the source lines of every frame, which means opening files: once the system-call filter
    is loaded that kills the process, so an escaped exception ends it with status
    :data:`HARNESS_FAILED` instead, and an exception in a finaliser is dropped.
    """
    warnings.simplefilter("ignore")
    out_fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr = sink
    sys.excepthook = _fail_quietly
    sys.unraisablehook = _ignore
    return out_fd


def answer_text(value: Any) -> str | None:
    """``predict``'s value as the answer the parent receives, or ``None`` when it is not a
    scalar (:func:`~cogrsi_lib.audit.api.answer_string`); cut to :data:`MAX_ANSWER_CHARS`,
    valid UTF-8."""
    text = answer_string(value)
    if text is None:
        return None
    return text[:MAX_ANSWER_CHARS].encode("utf-8", "replace").decode("utf-8")


def _error_text(exc: BaseException) -> str:
    try:
        return _clean(f"{type(exc).__name__}: {exc}", MAX_MESSAGE_CHARS)
    except (MemoryError, CpuLimit):
        raise
    except BaseException:  # noqa: BLE001 - the message itself may be broken or hostile
        return _clean(type(exc).__name__, MAX_MESSAGE_CHARS)


def run(code_text: str, worlds: list, questions: list, policy: bool = True,
        before_exec: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Check, compile and run ``code_text`` over ``questions``; never raises for its faults.

    ``before_exec`` runs between compiling and running (the system-call filter goes there:
    the compiler opens the file named in a syntax error to quote it).  ``policy=False`` skips
    the AST policy and gives the code every builtin: only the tests of the OS layer use it,
    to show that layer holding alone.
    """
    t0 = time.perf_counter()
    try:
        code = compile_rule(code_text) if policy else compile(code_text, "<rule>", "exec")
    except PolicyViolation as exc:
        return {"outcome": "rejected", "message": _clean(str(exc), MAX_MESSAGE_CHARS)}
    except SyntaxError as exc:
        return {"outcome": "syntax_error",
                "message": _clean(f"line {exc.lineno}: {exc.msg}", MAX_MESSAGE_CHARS)}
    except MemoryError:
        return {"outcome": "memory", "message": "memory limit reached while compiling"}
    except (RecursionError, ValueError) as exc:
        return {"outcome": "syntax_error", "message": _error_text(exc)}
    before_exec()
    env = restricted_globals() if policy else {"__name__": "rule"}
    try:
        exec(code, env)  # noqa: S102 - checked code, restricted builtins, locked-down process
    except (MemoryError, CpuLimit):
        raise
    except BaseException as exc:  # noqa: BLE001 - any failure of the module body is recorded
        return {"outcome": "load_error", "message": _error_text(exc)}
    applies, predict = env.get("applies"), env.get("predict")
    missing = [n for n, f in (("applies", applies), ("predict", predict)) if not callable(f)]
    if missing:
        return {"outcome": "load_error", "message": f"no function {' or '.join(missing)}"}
    t_load = time.perf_counter() - t0

    codes = bytearray([NOT_APPLIES]) * len(questions)
    table: dict[str, int] = {}
    preds: list[int] = []
    errors: list[dict[str, Any]] = []
    for i, (wi, q) in enumerate(questions):
        world = worlds[wi]
        try:
            hit = bool(applies(world, q))
        except (MemoryError, CpuLimit):
            raise
        except BaseException as exc:  # noqa: BLE001
            codes[i] = APPLIES_ERROR
            if len(errors) < MAX_ERROR_SAMPLES:
                errors.append({"question": i, "where": "applies", "error": _error_text(exc)})
            continue
        if not hit:
            continue
        try:
            value = predict(world, q)
        except (MemoryError, CpuLimit):
            raise
        except BaseException as exc:  # noqa: BLE001
            codes[i] = PREDICT_ERROR
            if len(errors) < MAX_ERROR_SAMPLES:
                errors.append({"question": i, "where": "predict", "error": _error_text(exc)})
            continue
        if value is None:
            codes[i] = NO_ANSWER
            continue
        try:
            text = answer_text(value)
        except (MemoryError, CpuLimit):
            raise
        except BaseException:  # noqa: BLE001 - a value that breaks conversion is a bad answer
            text = None
        if text is None:
            codes[i] = BAD_ANSWER
            continue
        if text not in table and len(table) >= MAX_DISTINCT_ANSWERS:
            codes[i] = BAD_ANSWER
            continue
        codes[i] = ANSWER
        preds.append(table.setdefault(text, len(table)))
    return {
        "outcome": "ok",
        "message": "",
        "codes": codes.decode("ascii"),
        "table": list(table),
        "preds": preds,
        "error_samples": errors,
        "load_s": round(t_load, 4),
        "run_s": round(time.perf_counter() - t0 - t_load, 4),
    }


#: What the HMAC of the isolation record covers before the record itself; the report's
#: HMAC covers the report alone (a JSON object, so never this prefix).
ISOLATION_TAG = b"isolation\n"


def signed(key: bytes, record: dict[str, Any], tag: bytes = b"") -> bytes:
    """``record`` as one line of JSON, a newline and the hex HMAC-SHA256 of ``tag + line``."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8",
                                                                               "replace")
    return text + b"\n" + hmac.new(key, tag + text, "sha256").hexdigest().encode("ascii")


def _send(fd: int, data: bytes) -> None:
    out = memoryview(data)
    while out:
        out = out[os.write(fd, out):]


def main() -> None:
    """Read the header and snapshot, lock down, run the code, send the two signed records.

    The first record says what the child gave up; it is written after the filter is loaded
    and before the code runs (or, when the code never runs, before the report), so that code
    which escapes the policy cannot change it: the pipe keeps what was written first.  The
    second is the report of :func:`run`.
    """
    data = sys.stdin.buffer.read()
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    key = bytes.fromhex(header.pop("key"))
    worlds, questions = build_views(json.loads(body))
    del data, body, head
    was_root = os.geteuid() == 0
    out_fd = silence()
    filtered: list[bool] = []
    told: list[bool] = []

    def tell_isolation() -> None:
        if told:
            return
        given_up = isolation.Isolation(os.getuid(), was_root and os.geteuid() != 0,
                                       any(filtered))
        _send(out_fd, signed(key, {"isolation": given_up.describe()}, ISOLATION_TAG) + b"\n")
        told.append(True)

    def sealed() -> None:
        filtered.append(seal(out_fd, bool(header.get("require_seccomp", True))))
        tell_isolation()

    try:
        restrict(float(header["cpu_s"]), int(header["memory_mb"]))
        result = run(header["code"], worlds, questions, bool(header.get("policy", True)),
                     sealed)
    except isolation.IsolationError as exc:
        result = {"outcome": "unisolated", "message": _clean(str(exc), MAX_MESSAGE_CHARS)}
    except MemoryError:
        result = {"outcome": "memory", "message": "memory limit reached"}
    except CpuLimit:
        result = {"outcome": "timeout", "message": "CPU-time limit reached"}
    except Exception as exc:  # noqa: BLE001 - a fault of the harness itself is reported, signed
        result = {"outcome": "crashed",
                  "message": _clean(f"sandbox harness failed: {_error_text(exc)}",
                                    MAX_MESSAGE_CHARS)}
    tell_isolation()
    result["n_questions"] = len(questions)
    _send(out_fd, signed(key, result))
    os._exit(0)


if __name__ == "__main__":
    main()
