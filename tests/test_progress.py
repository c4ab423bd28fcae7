"""Progress bars and phase lines: whole lines in a stage's log, stderr elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys

from cogrsi_lib import progress


def test_a_stage_log_gets_whole_lines_without_cursor_moves(tmp_path, monkeypatch):
    log = tmp_path / "stage.log"
    monkeypatch.setenv(progress.ENV, str(log))
    with progress.progress(desc="outer", total=2) as outer:
        for _ in progress.progress(range(3), desc="inner"):
            pass
        outer.update(2)
    with progress.timed("a phase"):
        progress.phase("found %d things", 3)
    lines = log.read_text().splitlines()
    assert "\x1b" not in log.read_text() and "\r" not in log.read_text()
    assert any(line.startswith("inner: 100%") for line in lines)
    assert any(line.startswith("outer: 100%") for line in lines)
    assert len(lines) == len(set(lines))  # a bar's closing refresh is not repeated
    assert [line.split(" ", 1)[1] for line in lines[-3:]][:2] == ["a phase ...", "found 3 things"]
    assert lines[-1].split(" ", 1)[1].startswith("a phase: ")


def test_third_party_bars_are_off_but_ours_are_not():
    """A stage's kernel starts with QUIET in its environment (tqdm reads it on import)."""
    code = ("from tqdm import tqdm\n"
            "from cogrsi_lib.progress import progress\n"
            "assert tqdm(range(2)).disable\n"
            "for _ in progress(range(2), desc='ours'): pass\n")
    env = {k: v for k, v in os.environ.items() if k != progress.ENV} | progress.QUIET
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "ours: 100%" in done.stderr
