"""The sandbox process: run one translation over every question of a snapshot (CogRSI §4.3).

Started by :mod:`cogrsi_lib.audit.sandbox` as ``python -I`` with this module as its main.
It reads one header line (the code and the limits) and the snapshot from standard input,
builds the read-only views, then locks itself down before it touches the code: no new file
descriptors (so no files or sockets), no file writes, no core dumps, no new processes, an
address-space limit and a CPU-time limit.  Only then is the code checked
(:mod:`cogrsi_lib.audit.policy`), compiled and run with allow-listed builtins, once per
question.  The result is one JSON object on the original standard output; the code's own
output goes nowhere.  Standard library only.

Per-question codes: ``0`` does not apply, ``1`` applies with an answer, ``2`` ``applies``
raised, ``3`` ``predict`` raised, ``4`` ``predict`` returned None, ``5`` ``predict`` returned
something that is not a string, number or boolean.
"""

from __future__ import annotations

import json
import math
import os
import resource
import signal
import sys
import time
from typing import Any

from cogrsi_lib.audit.api import answer_string, build_views
from cogrsi_lib.audit.policy import PolicyViolation, compile_rule, restricted_globals

NOT_APPLIES, ANSWER, APPLIES_ERROR, PREDICT_ERROR, NO_ANSWER, BAD_ANSWER = b"012345"
MAX_ERROR_SAMPLES = 5
MAX_ANSWER_CHARS = 200


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


def lock_down(cpu_s: float, memory_mb: int) -> None:
    """Apply the OS limits; after this the process can open nothing and write no file."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    signal.signal(signal.SIGXCPU, _on_xcpu)
    soft = math.ceil(used + cpu_s)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    vm = _vm_bytes()
    if vm is not None and memory_mb > 0:
        _limit(resource.RLIMIT_AS, vm + memory_mb * 1024 * 1024)
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_FSIZE, 0)
    _limit(resource.RLIMIT_NOFILE, 0)
    if hasattr(resource, "RLIMIT_NPROC"):
        _limit(resource.RLIMIT_NPROC, 0)


def _error_text(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"[:300]
    except Exception:  # noqa: BLE001 - the message itself may be broken
        return type(exc).__name__


def run(code_text: str, worlds: list, questions: list) -> dict[str, Any]:
    """Check, compile and run ``code_text`` over ``questions``; never raises for its faults."""
    t0 = time.perf_counter()
    try:
        code = compile_rule(code_text)
    except PolicyViolation as exc:
        return {"outcome": "rejected", "message": str(exc)}
    except SyntaxError as exc:
        return {"outcome": "syntax_error", "message": f"line {exc.lineno}: {exc.msg}"}
    except (RecursionError, MemoryError, ValueError) as exc:
        return {"outcome": "syntax_error", "message": _error_text(exc)}
    env = restricted_globals()
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
        text = answer_string(value)
        if text is None:
            codes[i] = BAD_ANSWER
            continue
        text = text[:MAX_ANSWER_CHARS]
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


def main() -> None:
    data = sys.stdin.buffer.read()
    head, _, body = data.partition(b"\n")
    header = json.loads(head)
    worlds, questions = build_views(json.loads(body))
    del data, body
    out_fd = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    sink = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr = sink
    lock_down(float(header["cpu_s"]), int(header["memory_mb"]))
    try:
        result = run(header["code"], worlds, questions)
    except MemoryError:
        result = {"outcome": "memory", "message": "memory limit reached"}
    except CpuLimit:
        result = {"outcome": "timeout", "message": "CPU-time limit reached"}
    result["n_questions"] = len(questions)
    out = memoryview(json.dumps(result, separators=(",", ":")).encode("utf-8"))
    while out:
        out = out[os.write(out_fd, out):]
    os.close(out_fd)
    os._exit(0)


if __name__ == "__main__":
    main()
