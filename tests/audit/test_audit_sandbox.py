"""Malicious and broken translations are contained and recorded, never a crash of the audit."""

from __future__ import annotations

import signal
import textwrap

import numpy as np
import pytest

from cogrsi_lib.audit.child import HARNESS_FAILED
from cogrsi_lib.audit.sandbox import (
    CODE_NAMES,
    SandboxLimits,
    exit_outcome,
    run_code,
    run_many,
)

OK_FUNCS = """
def applies(world, q):
    return q.depth == 1


def predict(world, q):
    return world.location_at(-1)
"""

MALICIOUS = {
    "read a file": ("data = open('/etc/passwd').read()\n" + OK_FUNCS, "load_error", "open"),
    "import os": ("import os\nos.system('touch /tmp/pwned')\n" + OK_FUNCS, "rejected", "os"),
    "dunder escape": ("x = ().__class__.__bases__[0].__subclasses__()\n" + OK_FUNCS,
                      "rejected", "__subclasses__"),
    "getattr escape": ("x = getattr((), '__cl' + 'ass__')\n" + OK_FUNCS, "load_error",
                       "__class__"),
    "fullwidth dunder": ("x = ().__\uff43lass__\n" + OK_FUNCS, "rejected", "__class__"),
    "generator frame": ("g = (i for i in [1])\nf = g.gi_frame\n" + OK_FUNCS, "rejected",
                        "gi_frame"),
    "network": ("import socket\n" + OK_FUNCS, "rejected", "socket"),
    "infinite loop": ("while True:\n    pass\n" + OK_FUNCS, "timeout", "CPU"),
    "loop in applies": ("def applies(world, q):\n    while True:\n        pass\n\n"
                        "def predict(world, q):\n    return 'x'\n", "timeout", "CPU"),
    "loop that swallows the limit": (
        "def applies(world, q):\n    while True:\n        try:\n            pass\n"
        "        except:\n            pass\n\ndef predict(world, q):\n    return 'x'\n",
        "timeout", ""),
    "huge allocation": ("x = [0] * (10 ** 11)\n" + OK_FUNCS, "memory", "memory"),
    "growing allocation": ("x = []\nwhile True:\n    x.append(' ' * 10 ** 6)\n" + OK_FUNCS,
                           "memory", "memory"),
    "exit": ("raise SystemExit(0)\n" + OK_FUNCS, "load_error", "SystemExit"),
    "syntax error": ("def applies(world, q:\n    return True\n", "syntax_error", "line 1"),
    "missing predict": ("def applies(world, q):\n    return True\n", "load_error", "predict"),
    "class": ("class Rule:\n    pass\n" + OK_FUNCS, "rejected", "class"),
}


@pytest.mark.parametrize("case", MALICIOUS.values(), ids=MALICIOUS.keys())
def test_malicious_code_is_contained_and_recorded(case, tiny_sample, fast_limits):
    code, outcome, words = case
    if outcome == "memory":  # filling memory costs CPU (page faults), more on a loaded machine:
        # room enough that the memory limit, not the CPU one, is what stops it
        fast_limits = fast_limits.model_copy(update={"cpu_s": 10})
    result = run_code(code, tiny_sample, fast_limits)
    assert result.outcome == outcome, (result.message, result.stderr)
    assert words in result.message
    assert result.codes is None and result.answers is None
    assert result.wall_s < fast_limits.wall_s


def test_a_good_run_reports_every_question(tiny_sample, fast_limits):
    result = run_code(OK_FUNCS, tiny_sample, fast_limits)
    assert result.ok
    depth = tiny_sample.questions["depth"].to_numpy()
    assert len(result.codes) == tiny_sample.n_questions
    assert (result.applies() == (depth == 1)).all()
    where = tiny_sample.questions.filter(depth=0, kind="location")
    reality = dict(zip(where["world_id"], where["gold"], strict=True))
    world_of = tiny_sample.questions["world_id"].to_list()
    for i in range(tiny_sample.n_questions):
        if depth[i] == 1:
            assert result.answers[i] == reality[world_of[i]].casefold()


def test_per_question_failures_are_counted_not_fatal(tiny_sample, fast_limits):
    code = textwrap.dedent("""
    def applies(world, q):
        if q.depth == 0:
            return 1 / 0
        return True

    def predict(world, q):
        if q.depth == 1:
            return None
        if q.kind == "property":
            return ["not", "a", "scalar"]
        return q.candidates[0]
    """)
    result = run_code(code, tiny_sample, fast_limits)
    assert result.ok
    counts = result.counts()
    q = tiny_sample.questions
    assert counts["applies_error"] == q.filter(depth=0).height
    assert counts["no_answer"] == q.filter(depth=1).height
    assert counts["bad_answer"] == q.filter(depth=2, kind="property").height
    assert counts["answer"] == q.filter(depth=2, kind="location").height
    assert sum(counts.values()) == q.height and set(counts) == set(CODE_NAMES)
    assert result.error_samples[0]["where"] == "applies"
    assert "ZeroDivisionError" in result.error_samples[0]["error"]
    assert result.summary()["n_errors"] == counts["applies_error"] + counts["bad_answer"]


def test_print_and_recursion_do_not_break_the_run(tiny_sample, fast_limits):
    code = textwrap.dedent("""
    print("noise " * 1000)

    def deep(n):
        return deep(n + 1)

    def applies(world, q):
        print(q.text)
        if q.depth == 2:
            return deep(0)
        return q.depth == 1

    def predict(world, q):
        return q.candidates[-1]
    """)
    result = run_code(code, tiny_sample, fast_limits)
    assert result.ok and result.counts()["applies_error"] > 0
    assert result.counts()["answer"] == tiny_sample.questions.filter(depth=1).height


def test_wall_time_limit_kills_the_process(tiny_sample):
    result = run_code(OK_FUNCS, tiny_sample, SandboxLimits(wall_s=0.01))
    assert result.outcome == "timeout" and "wall" in result.message


def test_no_code_is_an_outcome(tiny_sample):
    assert run_code(None, tiny_sample).outcome == "no_code"
    assert run_code("  \n", tiny_sample, no_code_reason="capped").message == "capped"


def test_run_many_keeps_order_and_survives_bad_neighbours(tiny_sample, fast_limits):
    codes = ["import os\n" + OK_FUNCS, OK_FUNCS, "x = [0] * 10 ** 11\n" + OK_FUNCS, None]
    results = run_many(codes, tiny_sample, fast_limits, workers=2)
    assert [r.outcome for r in results] == ["rejected", "ok", "memory", "no_code"]


def test_an_answer_too_long_to_print_is_a_bad_answer_for_that_question_only(tiny_sample,
                                                                            fast_limits):
    """``str(10 ** 5000)`` raises; the question is ``bad_answer`` and the run goes on."""
    code = textwrap.dedent("""
    def applies(world, q):
        return q.depth == 1

    def predict(world, q):
        if q.kind == "location":
            return 10 ** 5000
        return world.value_at(q.property, -1)
    """)
    honest = run_code(code.replace("10 ** 5000", "world.location_at(-1)"), tiny_sample,
                      fast_limits)
    result = run_code(code, tiny_sample, fast_limits)
    assert result.ok, result.message
    q = tiny_sample.questions
    location = (q["kind"] == "location").to_numpy()
    depth1 = (q["depth"] == 1).to_numpy()
    assert (result.codes[depth1 & location] == CODE_NAMES.index("bad_answer")).all()
    assert (result.codes == np.where(depth1 & location, CODE_NAMES.index("bad_answer"),
                                     honest.codes)).all()
    kept = depth1 & ~location
    assert kept.any() and list(result.answers[kept]) == list(honest.answers[kept])


def test_non_ascii_identifiers_and_named_escapes_compile_in_the_sandbox(tiny_sample,
                                                                         fast_limits):
    """The parser needs ``unicodedata`` for them; the child has it before it may open files."""
    code = "\u03c0 = 3.14\nbullet = '\\N{BULLET}'\n" + OK_FUNCS.replace(
        "return q.depth == 1", "gr\u00f6\u00dfe = q.depth\n    return gr\u00f6\u00dfe == 1")
    assert "\u03c0" in code and "\\N{BULLET}" in code
    result = run_code(code, tiny_sample, fast_limits)
    honest = run_code(OK_FUNCS, tiny_sample, fast_limits)
    assert result.ok, result.message
    assert (result.codes == honest.codes).all()
    assert list(result.answers) == list(honest.answers)


def test_running_out_of_memory_while_compiling_is_memory(tiny_sample):
    code = "x = [" + "0," * 1_000_000 + "]\n" + OK_FUNCS
    result = run_code(code, tiny_sample, SandboxLimits(wall_s=60, cpu_s=30, memory_mb=64))
    assert result.outcome == "memory" and "compiling" in result.message, result.message


SIGKILL, SIGXCPU = -int(signal.SIGKILL), -int(signal.SIGXCPU)


@pytest.mark.parametrize(("rc", "cpu", "outcome", "words"), [
    (-int(signal.SIGSYS), 0.1, "crashed", "forbidden system call"),
    (SIGKILL, 3.2, "timeout", "CPU-time limit"),  # the hard limit, at least the limit + 1 s
    (SIGKILL, 1.5, "crashed", "SIGKILL from outside"),  # under it: not the CPU limit
    (SIGKILL, None, "crashed", "SIGKILL from outside"),
    (SIGXCPU, 2.0, "timeout", "CPU-time limit"),
    (SIGXCPU, 0.3, "crashed", "SIGXCPU"),
    (-int(signal.SIGSEGV), 0.3, "crashed", "SIGSEGV"),
    (HARNESS_FAILED, 0.3, "crashed", "harness failed"),
    (3, 0.3, "crashed", "status 3 without a result"),
    (0, 0.3, "crashed", "status 0 without a result"),
])
def test_a_child_without_a_result_is_recorded_as_what_ended_it(rc, cpu, outcome, words):
    found, message = exit_outcome(rc, cpu, 2.0)
    assert found == outcome and words in message
