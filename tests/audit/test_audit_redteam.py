"""Red team: hostile translations against every layer of the sandbox (SECURITY.md).

Most attacks run with ``ast_policy=False``: the code gets full Python, as if it had found a
hole in the AST policy, so that what holds is the OS layer and the parent alone.  Each must
be contained (no file, process or other run changed) and recorded as an outcome.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogrsi_lib.audit.child import ISOLATION_TAG
from cogrsi_lib.audit.isolation import UNPRIVILEGED_ID, seccomp_problem
from cogrsi_lib.audit.sandbox import (
    EXIT_GRACE_S,
    SandboxLimits,
    _collect,
    _kill,
    _Refused,
    normalise,
    output_cap,
    read_isolation,
    read_report,
    run_code,
)
from cogrsi_lib.audit.verdict import decide

from .test_audit_sandbox import OK_FUNCS

HONEST = OK_FUNCS  # applies at depth 1, answers the true final location


def escaped(attack: str) -> str:
    """Translation whose module body runs ``attack`` with full Python, then defines the rule."""
    return "import os, sys, json\n" + attack + "\n" + HONEST


def run_escaped(attack: str, sample, limits) -> object:
    return run_code(escaped(attack), sample, limits, ast_policy=False)


@pytest.fixture
def victim_file(tmp_path: Path) -> Path:
    path = tmp_path / "results.parquet"
    path.write_bytes(b"precious")
    path.chmod(0o666)
    tmp_path.chmod(0o777)  # writable by the unprivileged user too: only the filter stops it
    return path


def test_seccomp_is_available_here():
    assert seccomp_problem() == ""


def test_the_policy_hole_through_match_class_patterns_is_closed(tiny_sample, fast_limits):
    code = HONEST + """
def reach(x):
    match x:
        case str(__reduce_ex__=rx):
            return rx
"""
    result = run_code(code, tiny_sample, fast_limits)
    assert result.outcome == "rejected" and "__reduce_ex__" in result.message


def test_an_honest_run_records_what_the_child_gave_up(tiny_sample, fast_limits):
    result = run_code(HONEST, tiny_sample, fast_limits)
    assert result.ok and "seccomp allow-list" in result.isolation
    if os.geteuid() == 0:
        assert f"uid {UNPRIVILEGED_ID} (was root)" in result.isolation


def test_root_is_given_up_before_the_code_runs(tiny_sample, fast_limits):
    code = """
import os
import signal
def applies(world, q):
    return True

def predict(world, q):
    return f"{os.getuid()} {os.geteuid()} {os.getgid()} {len(os.getgroups())}"
"""
    result = run_code(code, tiny_sample, fast_limits, ast_policy=False)
    assert result.ok, result.message
    ids = set(result.answers)
    if os.geteuid() == 0:
        assert ids == {f"{UNPRIVILEGED_ID} {UNPRIVILEGED_ID} {UNPRIVILEGED_ID} 0"}
    else:
        assert ids == {f"{os.getuid()} {os.geteuid()} {os.getgid()} {len(os.getgroups())}"}


FILE_ATTACKS = {
    "truncate": "os.truncate({path!r}, 0)",
    "open for writing": "open({path!r}, 'w').write('owned')",
    "read": "open({path!r}).read()",
    "rename": "os.rename({path!r}, {path!r} + '.gone')",
    "unlink": "os.unlink({path!r})",
    "create": "open({path!r} + '.new', 'x')",
    "mkdir": "os.mkdir({path!r} + '.dir')",
    "symlink": "os.symlink('/etc/shadow', {path!r} + '.lnk')",
    "hard link": "os.link({path!r}, {path!r} + '.lnk')",
    "mknod": "os.mknod({path!r} + '.fifo')",
    "chmod": "os.chmod({path!r}, 0o000)",
    "chdir": "os.chdir('/tmp')",
}


@pytest.mark.parametrize("attack", FILE_ATTACKS.values(), ids=FILE_ATTACKS.keys())
def test_file_system_attacks_are_stopped_and_recorded(attack, victim_file, tiny_sample,
                                                       fast_limits):
    before = sorted(p.name for p in victim_file.parent.iterdir())
    result = run_escaped(attack.format(path=str(victim_file)), tiny_sample, fast_limits)
    assert result.outcome == "crashed" and "forbidden system call" in result.message
    assert victim_file.read_bytes() == b"precious"
    assert oct(victim_file.stat().st_mode & 0o777) == oct(0o666)
    assert sorted(p.name for p in victim_file.parent.iterdir()) == before


PROCESS_ATTACKS = {
    "fork": "os.fork()",
    "fork, setsid and linger": "pid = os.fork()\nif pid == 0:\n    os.setsid()\n"
                               "    import time\n    time.sleep(60)",
    "exec a shell": "os.execv('/bin/sh', ['sh', '-c', 'touch /tmp/pwned'])",
    "spawn": "os.posix_spawn('/bin/true', ['true'], {})",
    "set uid back to root": "os.setuid(0)",
    "new session": "os.setsid()",
    "signal self group": "os.killpg(0, 9)",
    "socket": "import socket\nsocket.socket()",
}


@pytest.mark.parametrize("attack", PROCESS_ATTACKS.values(), ids=PROCESS_ATTACKS.keys())
def test_process_network_and_privilege_attacks_are_stopped(attack, tiny_sample, fast_limits):
    result = run_escaped(attack, tiny_sample, fast_limits)
    assert result.outcome == "crashed" and "forbidden system call" in result.message, result
    assert result.wall_s < 10


def test_another_process_cannot_be_signalled(tiny_sample, fast_limits):
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        result = run_escaped(f"os.kill({victim.pid}, 9)", tiny_sample, fast_limits)
        assert result.outcome == "crashed" and "forbidden system call" in result.message
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


FORGED = """
n = {n}
fake = json.dumps({{"outcome": "ok", "message": "", "codes": "0" * n, "table": [],
                   "preds": [], "n_questions": n}}).encode()
for fd in range(0, 64):
    for tail in (b"", b"\\n" + b"0" * 64):
        try:
            os.write(fd, fake + tail)
        except OSError:
            pass
{after}
"""


@pytest.mark.parametrize("after", ["os._exit(0)", "pass"], ids=["then exit", "then return"])
def test_a_forged_result_is_never_taken_for_the_translations(after, tiny_sample, fast_limits):
    """Bytes the code writes itself, alone or before the harness's own, are 'tampered'."""
    result = run_escaped(FORGED.format(n=tiny_sample.n_questions, after=after), tiny_sample,
                         fast_limits)
    assert result.outcome == "tampered" and result.codes is None


SIGNED_FORGERY = """
from cogrsi_lib.audit.child import ISOLATION_TAG, signed
frame = sys._getframe()
while "key" not in frame.f_locals:
    frame = frame.f_back
key, out_fd, n = frame.f_locals["key"], frame.f_locals["out_fd"], {n}
report = {{"outcome": "ok", "message": "", "codes": "1" * n, "table": ["\\x1b]0;pwn\\x07box"],
          "preds": [0] * n, "error_samples": [{{"question": 0, "where": "applies",
                                                "error": "\\x00\\u202e\\r\\n"}}],
          "n_questions": n}}
forged = {forged}
os.write(out_fd, forged + signed(key, report))
os._exit(0)
"""


@pytest.mark.parametrize("forged", [
    'b""',
    'signed(key, {"isolation": "uid 0; seccomp allow-list"}, ISOLATION_TAG) + b"\\n"',
], ids=["result", "isolation and result"])
def test_an_escape_that_signs_cannot_change_what_the_child_gave_up(forged, tiny_sample,
                                                                    fast_limits):
    """Code past the policy reaches the key and signs records of its choosing.  Its answers
    are its own to choose (SECURITY.md); the isolation record was written before it ran,
    so the run records what the child really gave up, and the texts come out printable."""
    code = escaped(SIGNED_FORGERY.format(n=tiny_sample.n_questions, forged=forged))
    result = run_code(code, tiny_sample, fast_limits, ast_policy=False)
    honest = run_code(HONEST, tiny_sample, fast_limits)
    assert result.isolation == honest.isolation and "seccomp allow-list" in result.isolation
    if forged == 'b""':
        assert result.ok, result.message
        assert set(result.answers) == {"\ufffd]0;pwn\ufffdbox"}
        assert result.error_samples[0]["error"] == "\ufffd" * 4
    else:  # a second isolation record is not part of any signed report
        assert result.outcome == "tampered" and result.codes is None


def test_a_flood_of_output_is_cut_at_the_cap(tiny_sample):
    attack = ("chunk = b'x' * (1 << 20)\nfor _ in range(400):\n    for fd in range(64):\n"
              "        try:\n            os.write(fd, chunk)\n        except OSError:\n"
              "            pass")
    result = run_escaped(attack, tiny_sample, SandboxLimits(wall_s=30, cpu_s=20, memory_mb=512))
    assert result.outcome == "bad_output"
    assert str(output_cap(tiny_sample.n_questions)) in result.message


def _sandboxed_child(timeout_s: float = 20.0) -> int:
    """The pid of this process's sandbox child once its system-call filter is loaded."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            try:
                status = (proc / "status").read_text()
                cmdline = (proc / "cmdline").read_bytes()
            except OSError:
                continue
            if (f"PPid:\t{os.getpid()}\n" in status and b"cogrsi_lib.audit.child" in cmdline
                    and "Seccomp:\t2" in status):
                return int(proc.name)
        time.sleep(0.02)
    raise AssertionError("no sandbox child appeared")


def test_a_kill_from_outside_is_a_crash_not_a_cpu_timeout(tiny_sample):
    """A SIGKILL that is not the CPU limit's (here from the test, as the out-of-memory killer
    would send it) is recorded as such."""
    spin = HONEST.replace("return q.depth == 1", "n = 0\n    while n >= 0:\n        n += 1")
    limits = SandboxLimits(wall_s=60, cpu_s=30, memory_mb=512)
    found: dict[str, object] = {}
    runner = threading.Thread(target=lambda: found.update(r=run_code(spin, tiny_sample, limits)))
    runner.start()
    try:
        pid = _sandboxed_child()
        time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)
    finally:
        runner.join(timeout=120)
    result = found["r"]
    assert result.outcome == "crashed", result.message
    assert "SIGKILL from outside" in result.message and result.wall_s < 30


def test_a_child_that_closes_its_pipes_is_waited_for(tiny_sample, fast_limits):
    """Closing every descriptor, spinning a second, then exiting with status 3: the parent
    waits for it and records that status, not a CPU timeout."""
    attack = ("import time\nfor fd in range(64):\n    try:\n        os.close(fd)\n"
              "    except OSError:\n        pass\nt = time.monotonic()\n"
              "while time.monotonic() - t < 1.0:\n    pass\nos._exit(3)")
    result = run_escaped(attack, tiny_sample, fast_limits)
    assert result.outcome == "crashed" and "status 3" in result.message, result.message
    assert result.wall_s >= 1.0


def test_calls_outside_both_lists_fail_softly(tiny_sample, fast_limits):
    """A system call neither allowed nor hostile (here a sleep) fails with EPERM."""
    result = run_escaped("import time\ntime.sleep(60)", tiny_sample, fast_limits)
    assert result.outcome == "load_error" and "Operation not permitted" in result.message
    assert result.wall_s < 10


def test_hostile_and_honest_runs_side_by_side(tiny_sample, fast_limits, victim_file):
    """One translation cannot change another's worlds or results."""
    alone = run_code(HONEST, tiny_sample, fast_limits)
    payload = bytes(tiny_sample.payload)
    attacks = [
        "for pid in range(2, 1 << 16):\n    os.kill(pid, 9)",
        f"open({str(victim_file)!r}, 'w')",
        FORGED.format(n=tiny_sample.n_questions, after="os._exit(0)"),
    ]
    results: dict[str, object] = {}

    def go(name: str, code: str, policy: bool) -> None:
        results[name] = run_code(code, tiny_sample, fast_limits, ast_policy=policy)

    threads = [threading.Thread(target=go, args=(f"hostile{i}", escaped(a), False))
               for i, a in enumerate(attacks)]
    threads += [threading.Thread(target=go, args=(f"honest{i}", HONEST, True)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[f"hostile{i}"].outcome for i in range(3)] == ["crashed", "crashed",
                                                                 "tampered"]
    for i in range(2):
        honest = results[f"honest{i}"]
        assert honest.ok
        assert (honest.codes == alone.codes).all()
        assert list(honest.answers) == list(alone.answers)
    assert bytes(tiny_sample.payload) == payload
    assert victim_file.read_bytes() == b"precious"


def test_an_answer_with_lone_surrogates_is_cleaned_not_fatal(tiny_sample, fast_limits):
    code = HONEST.replace("return world.location_at(-1)", "return 'box\\udc80' + chr(0xD800)")
    result = run_code(code, tiny_sample, fast_limits)
    assert result.ok
    for answer in result.answers[result.applies()]:
        answer.encode("utf-8")


CONTROLS = "\\x1b[2J\\x1b]0;x\\x07\\r\\n\\x00\\u202e"


def test_control_characters_never_reach_the_record(tiny_sample, fast_limits):
    """Escapes, bell, NUL, CR/LF and a bidi override in answers and messages: each becomes
    U+FFFD in ``RunResult.answers`` and so in the counterexample table, and in messages."""
    code = HONEST.replace("return world.location_at(-1)",
                          f"return world.location_at(-1) + '{CONTROLS}'")
    honest = run_code(HONEST, tiny_sample, fast_limits)
    runs = [run_code(code, tiny_sample, fast_limits) for _ in range(2)]
    r = "\ufffd"
    for run in runs:
        assert run.ok and (run.codes == honest.codes).all()
        hits = run.applies()
        expected = [a + f"{r}[2j{r}]0;x" + r * 5 for a in honest.answers[hits]]
        assert list(run.answers[hits]) == expected
    gold = np.asarray([normalise(g) for g in tiny_sample.gold], dtype=object)
    verdict, shared = decide(runs[0], runs[1], gold)
    assert verdict.verdict == "invalid" and len(shared)
    assert all(runs[0].answers[i].isprintable() for i in shared)
    failed = run_code(f"raise ValueError('{CONTROLS}')\n" + HONEST, tiny_sample, fast_limits)
    assert failed.outcome == "load_error"
    assert failed.message == f"ValueError: {r}[2J{r}]0;x" + r * 5


def test_error_text_is_printable_and_bounded(tiny_sample, fast_limits):
    code = HONEST.replace("return q.depth == 1", "raise ValueError('|\\x1b[31m' * 500)")
    result = run_code(code, tiny_sample, fast_limits)
    assert result.ok and result.error_samples
    text = result.error_samples[0]["error"]
    assert len(text) <= 300 and text.isprintable()


def test_a_descendant_holding_the_pipes_does_not_hold_the_parent():
    """The parent stops listening soon after its child exits and kills the whole group."""
    proc = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & echo $!; exit 0"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )
    start = time.perf_counter()
    out, _err, problem = _collect(proc, b"", wall_s=30, cap=1 << 20)
    elapsed = time.perf_counter() - start
    _kill(proc)
    assert problem == "" and elapsed < EXIT_GRACE_S + 5
    stat = Path(f"/proc/{int(out)}/stat")
    for _ in range(100):  # killed: gone, or a zombie until its new parent reaps it
        if not stat.exists() or stat.read_text().split(") ")[1].startswith("Z"):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the descendant outlived the run")


def _signed(body: bytes, key: bytes) -> bytes:
    return body + b"\n" + hmac.new(key, body, hashlib.sha256).hexdigest().encode()


KEY = b"k" * 32
MALFORMED = {
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "not json": b"\xff\xfe garbage",
    "invalid utf-8 string": b'{"outcome": "ok", "message": "\xc3\x28", "n_questions": 1}',
    "lone surrogate": json.dumps({"outcome": "load_error", "message": "\ud800",
                                  "n_questions": 3}).encode(),
    "NaN timing": b'{"outcome": "ok", "message": "", "n_questions": 1, "codes": "0",'
                  b' "table": [], "preds": [], "run_s": NaN}',
    "index out of range": json.dumps({"outcome": "ok", "message": "", "n_questions": 1,
                                      "codes": "1", "table": [], "preds": [5]}).encode(),
    "wrong length": json.dumps({"outcome": "ok", "message": "", "n_questions": 3,
                                "codes": "0", "table": [], "preds": []}).encode(),
    "unknown outcome": json.dumps({"outcome": "valid", "message": "",
                                   "n_questions": 3}).encode(),
    "extra field": json.dumps({"outcome": "load_error", "message": "", "n_questions": 3,
                               "verdict": "valid"}).encode(),
    "bad code": json.dumps({"outcome": "ok", "message": "", "n_questions": 3,
                            "codes": "019", "table": ["a"], "preds": [0]}).encode(),
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_signed_output_is_bad_output(body):
    n = 1 if b'"n_questions": 1' in body else 3
    with pytest.raises(_Refused) as err:
        read_report(_signed(body, KEY), KEY, n)
    assert err.value.outcome == "bad_output"


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000), st.booleans())
def test_the_decoder_never_raises_anything_else(raw, sign):
    """Any bytes: a report, or a refusal; unsigned bytes are always 'tampered'."""
    try:
        read_report(_signed(raw, KEY) if sign else raw, KEY, 3)
    except _Refused as exc:
        assert exc.outcome == ("bad_output" if sign else "tampered")
    else:
        assert sign



def test_answers_whose_methods_raise_cannot_stop_the_run(tiny_sample, fast_limits):
    """Past the policy, ``predict`` returns subclasses whose text, hash and slicing raise: the
    harness reads the base value, and a value it cannot read is that question's bad answer."""
    code = """
class Loud(str):
    def __str__(self):
        raise SystemExit(3)
    __repr__ = __getitem__ = __hash__ = __eq__ = __str__

class Huge(int):
    def __repr__(self):
        raise SystemExit(3)
    __str__ = __index__ = __hash__ = __repr__

def applies(world, q):
    return q.depth == 1

def predict(world, q):
    if q.kind == "location":
        return Loud(world.location_at(-1))
    return Huge(10 ** 5000)
"""
    result = run_code(code, tiny_sample, fast_limits, ast_policy=False)
    honest = run_code(HONEST, tiny_sample, fast_limits)
    assert result.ok, result.message
    kinds = tiny_sample.questions["kind"].to_numpy()
    depth1 = tiny_sample.questions["depth"].to_numpy() == 1
    assert (result.codes[depth1 & (kinds == "property")] == 5).all()
    location = depth1 & (kinds == "location")
    assert list(result.answers[location]) == list(honest.answers[location])


def test_an_exception_whose_text_raises_is_recorded_by_its_type(tiny_sample, fast_limits):
    code = """
class Mute(Exception):
    def __str__(self):
        raise SystemExit(3)

def applies(world, q):
    raise Mute()

def predict(world, q):
    return "x"
"""
    result = run_code(code, tiny_sample, fast_limits, ast_policy=False)
    assert result.ok, result.message
    assert result.counts()["applies_error"] == tiny_sample.n_questions
    assert result.error_samples[0]["error"] == "Mute"


TRACEBACK_AFTER_FILTER = """
import json, os, sys
from cogrsi_lib.audit import child
if sys.argv[1] == "silenced":
    out = child.silence()
else:  # a sink like the harness's, Python's own traceback printing left in place
    out = os.dup(1)
    sys.stderr = open(os.devnull, "w")
child.seal(out)
json.loads("not json")  # raises from frames in the standard library's source files
"""


def test_an_exception_escaping_the_harness_never_prints_a_traceback():
    """Printing a traceback opens the source files, which the filter punishes with SIGSYS;
    the silenced child exits with its own status instead."""
    from cogrsi_lib.audit.child import HARNESS_FAILED

    root = str(Path(__file__).resolve().parents[2])
    status = {
        how: subprocess.run([sys.executable, "-c", TRACEBACK_AFTER_FILTER, how], cwd=root,
                            env={"PYTHONPATH": root}, capture_output=True, timeout=60).returncode
        for how in ("silenced", "default")
    }
    assert status == {"silenced": HARNESS_FAILED, "default": -signal.SIGSYS}


def _isolation_record(body: bytes, key: bytes = KEY) -> bytes:
    mac = hmac.new(key, ISOLATION_TAG + body, hashlib.sha256).hexdigest().encode()
    return body + b"\n" + mac + b"\n"


def test_the_isolation_record_is_read_signed_and_printable():
    record = _isolation_record(json.dumps({"isolation": "uid 1\x1b[2J"}).encode())
    assert read_isolation(record + b"after", KEY) == ("uid 1\ufffd[2J", b"after")
    for out, outcome in [
        (record.replace(b"uid 1", b"uid 0"), "tampered"),  # changed after signing
        (_isolation_record(b'{"isolation": "x"}', b"j" * 32), "tampered"),  # another key
        (_isolation_record(b'{"isolation": "x", "seccomp": true}'), "bad_output"),
        (_isolation_record(b'{"isolation": "' + b"x" * 201 + b'"}'), "bad_output"),
    ]:
        with pytest.raises(_Refused) as err:
            read_isolation(out, KEY)
        assert err.value.outcome == outcome


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=500), st.booleans())
def test_the_isolation_decoder_never_raises_anything_else(body, sign):
    out = (_isolation_record(body) if sign else body + b"\n") + b"rest"
    try:
        text, rest = read_isolation(out, KEY)
    except _Refused as exc:
        assert exc.outcome == ("bad_output" if sign and b"\n" not in body else "tampered")
    else:
        assert sign and rest == b"rest" and text.isprintable()
