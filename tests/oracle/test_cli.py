"""``cogrsi oracle answer FILE.json``: the issue's example, explain mode, stdin, bad input.

Most tests drive ``cogrsi_lib.oracle.cli.app`` through typer's CliRunner (stdout and
stderr kept apart); one runs the installed ``cogrsi`` console script in a subprocess,
and skips with a reason while the oracle group is not mounted there.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogrsi_lib.oracle.cli import app
from cogrsi_lib.oracle.state import MAX_DEPTH

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "oracle" / "issue_example.json"

# Hand reasoning for the issue example (SEMANTICS.md), before looking at any output:
#   opening: marble in the basket, Anne and Sally in the room, awake; color red.
#   e0 Sally leaves.                       perceived by Anne, Sally
#   e1 Anne moves the marble to the box.   perceived by Anne only (Sally is out)
#                                          -> reality box; [Anne] box; [Anne, Sally] basket
#   e2 Sally enters.                       no open container, so no late view
#   e3 Anne sleeps, e4 Anne wakes.         no belief changes
#   e5 Anne whispers to Sally "basket" (a lie): [Sally], [Anne, Sally], [Sally, Anne] = basket
#   e6 Sally peeks.                        only [Sally] = box (the true location)
#   e7 Anne paints it blue (visible).      perceived by Anne and Sally: [Sally] color = blue
# Questions: reality -> "box"; [Anne, Sally] -> latest writer is the whisper e5 (the peek
# writes only [Sally]) -> "basket"; [Sally] color -> e7 -> "blue".
EXPECTED = ["box", "basket", "blue"]

runner = CliRunner()


def write(tmp_path: Path, raw: dict | str) -> Path:
    path = tmp_path / "world.json"
    path.write_text(raw if isinstance(raw, str) else json.dumps(raw), encoding="utf-8")
    return path


def example() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_issue_example_answers() -> None:
    result = runner.invoke(app, ["answer", str(FIXTURE)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED
    assert result.stderr == ""


def test_issue_example_explain() -> None:
    """--explain gives each answer's access facts."""
    result = runner.invoke(app, ["answer", "--explain", str(FIXTURE)])
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert [a["value"] for a in out] == EXPECTED
    assert out[0] == {"value": "box", "reality": "box", "source": 1, "via": "reality",
                      "false_belief": False}
    assert out[1] == {"value": "basket", "reality": "box", "source": 5, "via": "whisper",
                      "false_belief": True}
    assert out[2] == {"value": "blue", "reality": "blue", "source": 7, "via": "change",
                      "false_belief": False}


def test_stdin_input() -> None:
    result = runner.invoke(app, ["answer", "-"], input=FIXTURE.read_text(encoding="utf-8"))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == EXPECTED


def test_no_questions_prints_empty_list(tmp_path: Path) -> None:
    raw = example()
    del raw["questions"]
    result = runner.invoke(app, ["answer", str(write(tmp_path, raw))])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []


def _bad(tmp_path: Path, raw: dict | str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["answer", str(write(tmp_path, raw))])
    return result.exit_code, result.stdout, result.stderr


def _with_events(events: list[dict]) -> dict:
    raw = example()
    raw["events"] = events
    return raw


@pytest.mark.parametrize(
    ("events", "index", "problem"),
    [
        ([{"type": "leave", "agent": "Sally"}, {"type": "move", "agent": "Zed", "to": "box"}],
         1, "unknown agent 'Zed'"),
        ([{"type": "leave", "agent": "Sally"}, {"type": "move", "agent": "Sally", "to": "box"}],
         1, "Sally is absent"),
        ([{"type": "move", "agent": "Anne", "to": "box"},
          {"type": "move", "agent": "Sally", "to": "box"}],
         1, "where the marble already is"),
        ([{"type": "sleep", "agent": "Anne"}, {"type": "leave", "agent": "Sally"},
          {"type": "whisper", "speaker": "Sally", "listener": "Anne", "location": "box"}],
         2, "Sally is absent"),
        ([{"type": "teleport", "agent": "Anne"}], 0, "unknown event type"),
        ([{"type": ["move"], "agent": "Anne", "to": "box"}], 0, "unknown event type"),
        ([{"type": "move", "agent": "Anne", "to": "box", "with": "a hat"}], 0,
         "unknown field(s) ['with']"),
        ([{"type": "whisper", "speaker": "Anne", "location": "box"}], 0,
         "lacks field(s) ['listener']"),
    ],
    ids=["unknown-agent", "absent-mover", "move-to-same-place", "absent-speaker", "bad-type",
         "unhashable-type", "unknown-field", "missing-field"],
)
def test_bad_event_exits_nonzero_naming_index_and_problem(
    tmp_path: Path, events: list[dict], index: int, problem: str
) -> None:
    code, out, err = _bad(tmp_path, _with_events(events))
    assert code == 2
    assert out == ""
    assert f"event {index}: " in err
    assert problem in err


def test_malformed_json_exits_nonzero(tmp_path: Path) -> None:
    code, out, err = _bad(tmp_path, '{"agents": ["Anne"], "events": [')
    assert code == 2
    assert out == ""
    assert "malformed JSON" in err


def test_bad_question_exits_nonzero(tmp_path: Path) -> None:
    raw = example()
    raw["questions"] = [{"kind": "location", "chain": ["Anne", "Anne"]}]
    code, out, err = _bad(tmp_path, raw)
    assert (code, out) == (2, "")
    assert "question 0: " in err and "twice in a row" in err


def test_missing_file_exits_nonzero(tmp_path: Path) -> None:
    result = runner.invoke(app, ["answer", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "cannot read" in result.stderr


def test_mounted_under_the_main_cli() -> None:
    """``cogrsi oracle answer`` through the package's top-level app (skips if not mounted)."""
    try:
        from cogrsi_lib.cli import app as main_app
    except ImportError as exc:  # pragma: no cover - depends on the lead's wiring
        pytest.skip(f"cogrsi_lib.cli not importable yet: {exc}")
    result = runner.invoke(main_app, ["oracle", "answer", str(FIXTURE)])
    if result.exit_code != 0 and "No such command" in result.stderr:
        pytest.skip("the oracle group is not mounted in cogrsi_lib.cli yet")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == EXPECTED


def _console_script() -> list[str]:
    exe = Path(sys.executable).with_name("cogrsi")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("cogrsi")
    if found is None:
        pytest.skip("the `cogrsi` console script is not installed")
    return [found]


def test_installed_console_script(tmp_path: Path) -> None:
    """The installed ``cogrsi`` script: the example, and one refusal on stderr with status 2."""
    cmd = _console_script()
    done = subprocess.run([*cmd, "oracle", "answer", str(FIXTURE)], capture_output=True,
                          text=True, timeout=60)
    if done.returncode != 0 and "No such command" in done.stderr:
        pytest.skip("the oracle group is not mounted in cogrsi_lib.cli yet")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == EXPECTED
    bad = write(tmp_path, _with_events([{"type": "move", "agent": "Anne", "to": "basket"}]))
    done = subprocess.run([*cmd, "oracle", "answer", str(bad)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "event 0: " in done.stderr and "already is" in done.stderr


def _with(**changes) -> bytes:
    raw = example()
    raw.update(changes)
    return json.dumps(raw).encode()


HOSTILE_INPUTS = {
    "invalid UTF-8": b'{"agents": ["Anne\xff"]}',
    "UTF-16 with a byte-order mark": json.dumps(example()).encode("utf-16"),
    "deep nesting": b"[" * 200_000 + b"]" * 200_000,
    "NaN value": json.dumps(example()).replace('"red"', "NaN").encode(),
    "Infinity value": json.dumps(example()).replace('"red"', "-Infinity").encode(),
    "overflowing number": json.dumps(example()).replace('"red"', "1e400").encode(),
    "huge integer": json.dumps(example()).replace('"red"', "9" * 5000).encode(),
    "duplicate key": json.dumps(example())[:-1].encode() + b', "object": "ring"}',
    "a chain deeper than MAX_DEPTH": _with(
        agents=[f"A{i}" for i in range(8)],
        initial={"location": example()["initial"]["location"]},
        events=[], questions=[{"kind": "location",
                               "chain": [f"A{i % 2}" for i in range(MAX_DEPTH + 1)]}],
    ),
    "unknown testimony policy": _with(testimony="loudest"),
    "a hidden observer inside the room": _with(events=[
        {"type": "move", "agent": "Anne", "to": "box", "hidden_observers": ["Sally"]}]),
}


def test_deep_chains_over_many_agents_are_answered_lazily() -> None:
    """Only the asked chains and their prefixes are tracked: depth 12 and MAX_DEPTH over 8
    agents (n (n-1)^(k-1) = 8 * 7^15 chains in all) are answered at once."""
    agents = [f"A{i}" for i in range(8)]
    events = [{"type": "leave", "agent": "A1"}, {"type": "move", "agent": "A0", "to": "box"},
              {"type": "enter", "agent": "A1"},
              {"type": "whisper", "speaker": "A0", "listener": "A1", "location": "box"}]
    questions = [{"kind": "location", "chain": [agents[i % 2] for i in range(k)]}
                 for k in (12, MAX_DEPTH)]
    questions.append({"kind": "location", "chain": agents * 2})
    raw = _with(agents=agents, initial={"location": "basket"}, events=events,
                questions=questions)
    result = runner.invoke(app, ["answer", "-"], input=raw)
    assert result.exit_code == 0, result.stderr
    # the whisper reaches every chain over {A0, A1}; A2.. never saw the move
    assert json.loads(result.stdout) == ["box", "box", "basket"]


@pytest.mark.parametrize("data", HOSTILE_INPUTS.values(), ids=HOSTILE_INPUTS.keys())
def test_hostile_input_is_refused_on_one_line_with_status_2(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "world.json"
    path.write_bytes(data)
    for args, stdin in ((["answer", str(path)], None), (["answer", "-"], data)):
        result = runner.invoke(app, args, input=stdin)
        assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
