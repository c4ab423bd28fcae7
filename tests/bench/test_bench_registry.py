"""The benchmark registry: a benchmark module registers itself; no list of other modules."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import textwrap

import pytest

import cogrsi_lib.bench as bench
from cogrsi_lib.bench import registry

NEW_BENCHMARK = '''
"""A benchmark added as one module."""

from cogrsi_lib.bench.registry import Benchmark, register
from cogrsi_lib.bench.scoring import Judgement

BENCHMARK = register(Benchmark(
    name="toybench", title="Toy", suites=("test_only",), unit="story", data_dir="toybench",
    required=("toy.jsonl",), load=lambda root: [], judge=lambda item, reply: Judgement(0.0, None),
))
'''

NEW_HELPER = '''
"""A helper beside the loaders: it registers nothing."""

def normalise(text: str) -> str:
    return text.strip().lower()
'''


@pytest.fixture
def extra_modules(monkeypatch, tmp_path):
    """A new benchmark module and a new helper module in the package's path."""
    (tmp_path / "toybench.py").write_text(textwrap.dedent(NEW_BENCHMARK), encoding="utf-8")
    (tmp_path / "toyhelper.py").write_text(textwrap.dedent(NEW_HELPER), encoding="utf-8")
    monkeypatch.setattr(bench, "__path__", [*bench.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield
    for name in ("toybench", "toyhelper"):
        sys.modules.pop(f"cogrsi_lib.bench.{name}", None)


def test_a_new_benchmark_module_registers_and_a_new_helper_does_not(extra_modules) -> None:
    names = bench.names()  # discovery imports both new modules; only one registers
    assert "cogrsi_lib.bench.toyhelper" in sys.modules
    assert "toybench" in names and "toyhelper" not in names
    assert bench.get("toybench").title == "Toy" and names[:8] == list(registry.MAIN_BENCHMARKS)


def test_every_module_level_benchmark_is_registered_and_by_one_module() -> None:
    """Every module of the package is imported; each Benchmark it defines is registered
    (a benchmark built but never registered would be silently missing)."""
    names = bench.names()
    owners: dict[str, str] = {}
    for info in pkgutil.iter_modules(bench.__path__):
        module = importlib.import_module(f"cogrsi_lib.bench.{info.name}")
        for value in vars(module).values():
            if isinstance(value, registry.Benchmark):
                assert registry._REGISTRY.get(value.name) is value, (info.name, value.name)
                owners.setdefault(value.name, info.name)
    assert sorted(owners) == sorted(names)
    assert set(registry.MAIN_BENCHMARKS) <= set(names)


def test_a_name_is_registered_once() -> None:
    other = registry.Benchmark(**{**vars(bench.get("tomi")), "title": "Another ToMi"})
    with pytest.raises(ValueError, match="already registered"):
        registry.register(other)
