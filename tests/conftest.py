"""Fixtures shared by every test folder, and the test tiers.

Tiers (markers, declared in ``pyproject.toml``): ``model`` runs the embedded model, ``vllm``
runs vLLM's engine or server, ``e2e`` runs stage notebooks or the DVC pipeline, ``slow`` marks
a full-size run. README's test command runs every tier; ``pytest -m "not model and not vllm
and not e2e"`` is the inner loop. A test that uses the ``embedded_model`` fixture is marked
``model`` here, and a notebook ``e2e``; any other test that loads the embedded model without
one of those markers fails, so the inner loop never loads it unnoticed.

Under pytest-xdist (``pytest -n 2``) every file that runs a model, and the notebook that
trains one, goes to one worker as one unit, so each model is loaded or served once per run,
with the thread counts of a serial run (so the same replies); the other worker takes the
model-free files meanwhile, one file at a time. The vLLM files come first in the unit
(:data:`FIRST`): a ``vllm serve`` answering a few requests at a time keeps about one core
busy, so it shares the cores best with the model-free files. The model-free e2e files (the
rerun checks, the notebooks whose CI settings use scripted stand-ins: :func:`_after_vllm`) go
to the other worker last, and each waits until the models' unit is past the ``vllm serve``
file (:data:`WAIT_FOR`: the server's tests and the rehearsal, whose many processes share the
cores with the server): beside vLLM's server they made its replies take two to eight times as
long (at equal priority and at ``nice`` 10). vLLM's in-process engine tests, next, run beside
them (measured: the wait fell from 132 s to 17 s, the engine's adapter test rose from about
28 s to 60 s). Past the wait, that worker runs at ``nice`` 19
(:data:`YIELD_NICE`), so that the embedded model's torch threads, which slowed three- to
fourfold beside the notebooks' kernels at equal priority, keep the cores first. Tried and
measured slower: two model units side by side (vLLM's busy loop and torch's
threads oversubscribe the two cores and both slow down many times over).
A run restricted with ``-m`` keeps xdist's own scheduling, and nothing waits.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import pytest

#: markers under which a test may load the embedded model
MAY_LOAD_MODEL = ("model", "vllm", "e2e")


#: what puts a test file in a models' unit: a tier marker or the embedded model's fixture
_MODEL_FILE = re.compile(r"mark\.(model|vllm|e2e|slow)\b|\bembedded_model\b")
MODELS_UNIT = "models"
#: test files collected before the others, in this order (in every run, so every xdist
#: worker agrees)
FIRST = ("tests/llm/test_llm_vllm_serve.py", "tests/llm/test_llm_vllm_real.py")
#: the notebooks whose CI settings run a model (the others use scripted stand-ins)
MODEL_NOTEBOOKS = ("notebooks/train.ipynb",)
#: the files the model-free e2e files wait for: the ``vllm serve`` file
WAIT_FOR = FIRST[:1]
#: the longest a file of :func:`_after_vllm` waits for them (then it runs anyway)
WAIT_S = 1500.0
#: the niceness of the worker (and the kernels and pipelines it starts) once past the wait:
#: the embedded model's torch threads, on the models' unit meanwhile, come first
YIELD_NICE = 19


def _after_vllm(path: str) -> bool:
    """A model-free e2e file: the rerun checks, a notebook that runs no model."""
    return path.endswith("tests/test_reruns.py") or (
        path.endswith(".ipynb") and not path.endswith(MODEL_NOTEBOOKS))


@functools.cache
def _unit(path: str) -> str | None:
    """The models' unit for a test file that runs a model, None for a model-free one."""
    if _after_vllm(path):
        return None
    if path.endswith(".ipynb"):
        return MODELS_UNIT
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return None
    return MODELS_UNIT if _MODEL_FILE.search(text) else None


class WorkQueue(OrderedDict):
    """xdist's queue of scopes (files, and the models' unit): the models' unit first and the
    files that wait for its ``vllm serve`` file (:func:`_after_vllm`) last, whatever order xdist
    inserts the others in (``--loadscope-reorder``: the scopes with most tests first), so the
    other worker runs every model-free file before it waits."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def __setitem__(self, scope, tests) -> None:
        super().__setitem__(scope, tests)
        if scope == MODELS_UNIT:
            self.move_to_end(scope, last=False)
        for waiting in [s for s in self if _after_vllm(str(self.root / s))]:
            self.move_to_end(waiting)


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("markexpr"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath

    class ModelsTogether(LoadScopeScheduling):
        """The models' unit handed out first; one unit per file for the rest."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            self.workqueue = WorkQueue(root)

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return _unit(str(root / path)) or path

    return ModelsTogether(config, log)


def pytest_collection_modifyitems(config, items) -> None:
    rank = {config.rootpath / f: k for k, f in enumerate(FIRST)}

    def order(item) -> int:
        return len(FIRST) + 1 if _after_vllm(str(item.path)) else rank.get(item.path, len(FIRST))

    items.sort(key=order)  # stable: the rest in their order
    for item in items:
        if "embedded_model" in getattr(item, "fixturenames", ()):
            item.add_marker("model")
        if item.path.suffix == ".ipynb":
            item.add_marker("e2e")


def pytest_collection_finish(session) -> None:
    """The last test of :data:`WAIT_FOR` that this run runs (after ``-k`` and ``-m``)."""
    waited = {session.config.rootpath / f for f in WAIT_FOR}
    tests = [item.nodeid for item in session.items if item.path in waited]
    session.config.stash[_WAITED_FOR] = tests[-1] if tests else None


_WAITED_FOR = pytest.StashKey[str | None]()


def _barrier(config) -> Path | None:
    """The file the models' unit writes once past :data:`WAIT_FOR`; None when nothing should
    wait for it (no xdist, ``-m`` given, or those files not in the run)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # the same in every worker of a run
    if not run or config.getoption("markexpr") or not config.stash.get(_WAITED_FOR, None):
        return None
    return Path(tempfile.gettempdir()) / f"cogrsi-tests-{run}.vllm-done"


class AfterVllm:
    """The wait, as a plugin of its own: a conftest's item hooks reach only the items below
    its folder, and the notebooks are outside tests/."""

    def __init__(self, config) -> None:
        self.config = config

    def pytest_runtest_logfinish(self, nodeid, location) -> None:
        if nodeid != self.config.stash.get(_WAITED_FOR, None):
            return
        barrier = _barrier(self.config)
        if barrier is not None:
            for old in barrier.parent.glob("cogrsi-tests-*.vllm-done"):  # earlier runs'
                if time.time() - old.stat().st_mtime > 86400:
                    old.unlink(missing_ok=True)
            barrier.touch()

    def pytest_runtest_setup(self, item) -> None:
        barrier = _barrier(self.config)
        if barrier is None or not _after_vllm(str(item.path)):
            return
        deadline = time.monotonic() + WAIT_S
        while not barrier.exists() and time.monotonic() < deadline:
            time.sleep(2.0)
        os.nice(max(0, YIELD_NICE - os.nice(0)))  # once: this worker runs only these now


def pytest_configure(config) -> None:
    config.pluginmanager.register(AfterVllm(config), "cogrsi-after-vllm")


@pytest.fixture(autouse=True)
def _embedded_model_only_where_marked(request, monkeypatch):
    if any(request.node.get_closest_marker(m) for m in MAY_LOAD_MODEL):
        return
    from cogrsi_lib.llm import embedded

    def refuse(*_args, **_kwargs):
        raise AssertionError(f"{request.node.nodeid} loads the embedded model: mark it "
                             f"with one of {MAY_LOAD_MODEL}")

    monkeypatch.setattr(embedded, "loaded_weights", refuse)


@pytest.fixture(scope="session")
def embedded_model():
    """The embedded CPU model, loaded once per test session (skipped, with the reason, when
    the ``embedded`` extra or the weights package is not installed)."""
    from cogrsi_lib.llm.embedded import EmbeddedBackend, embedded_available

    ok, why = embedded_available()
    if not ok:
        pytest.skip(f"embedded model unavailable: {why}")
    return EmbeddedBackend(max_batch=8)
