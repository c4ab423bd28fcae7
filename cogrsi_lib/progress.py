"""Progress bars, phase lines and timings of long work, kept out of stage outputs.

``cogrsi stage`` sets :data:`ENV` to a log file outside ``reports/`` and echoes that file to
its own standard error while the notebook runs, so ``dvc repro`` shows where a stage is and
the executed notebook (a stage output) stays byte-identical from run to run. It also turns
off other libraries' tqdm bars there (:data:`QUIET`; ours set ``disable=False``), which would
print speeds into the notebook. Anywhere else
(JupyterLab, scripts, tests) bars and lines go to standard error.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

from tqdm.std import tqdm as _tqdm

__all__ = ["ENV", "log", "phase", "progress", "timed"]

#: the environment variable naming the progress log of a stage run
ENV = "COGRSI_PROGRESS"
#: environment of a stage's kernel: other libraries' bars off, and the warning tqdm gives in
#: a kernel without ipywidgets (it names a local path) silenced
QUIET = {"TQDM_DISABLE": "1", "PYTHONWARNINGS": "ignore:IProgress not found"}
#: seconds between two updates of one bar written to the log
LOG_INTERVAL = 10.0

log = logging.getLogger("cogrsi")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # cursor moves tqdm writes for nested bars
T = TypeVar("T")
_sinks: dict[str, IO[str]] = {}


class _LineWriter:
    """A file that turns tqdm's carriage-return refreshes into whole lines."""

    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
        self._last = ""

    def write(self, text: str) -> int:
        for part in _ANSI.sub("", text).replace("\r", "\n").split("\n"):
            line = part.rstrip()
            if line.strip() and line != self._last:  # a bar's closing refresh repeats it
                self._file.write(line + "\n")
                self._last = line
        return len(text)

    def flush(self) -> None:
        self._file.flush()


def _sink() -> IO[str] | None:
    """The run's log when :data:`ENV` names one, else ``None`` (standard error)."""
    path = os.environ.get(ENV)
    if not path:
        return None
    if path not in _sinks:
        _sinks[path] = _LineWriter(path)  # type: ignore[assignment]
    return _sinks[path]


def _logger() -> logging.Logger:
    sink = _sink()
    target = sink if sink is not None else sys.stderr
    handler = next((h for h in log.handlers if getattr(h, "_cogrsi", False)), None)
    if handler is None or getattr(handler, "stream", None) is not target:
        if handler is not None:
            log.removeHandler(handler)
        handler = logging.StreamHandler(target)
        handler._cogrsi = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log


def phase(message: str, *args: Any) -> None:
    """One line saying which phase of a stage starts (or what it found)."""
    _logger().info(message, *args)


def progress(iterable: Iterable[T] | None = None, *, desc: str, total: int | None = None,
             unit: str = "it") -> Iterator[T] | Any:
    """A tqdm bar over ``iterable`` (or a manual one with ``update``), logged as lines during
    a stage run and drawn as usual elsewhere."""
    sink = _sink()
    if sink is not None:
        return _tqdm(iterable, desc=desc, total=total, unit=unit, file=sink,
                     mininterval=LOG_INTERVAL, ncols=100, ascii=True, disable=False)
    return _tqdm(iterable, desc=desc, total=total, unit=unit, file=sys.stderr, mininterval=1.0,
                 disable=False)


@contextmanager
def timed(name: str) -> Iterator[None]:
    """Log how long the block took (timings go to the log, never into stage outputs)."""
    start = time.perf_counter()
    phase("%s ...", name)
    try:
        yield
    finally:
        phase("%s: %.1f s", name, time.perf_counter() - start)
