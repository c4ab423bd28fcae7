"""Fixtures for the benchmark tests: real samples, synthetic fixtures, the shared samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench.schema import Item

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


@pytest.fixture(scope="session")
def fixtures() -> Path:
    """tests/fixtures/bench: synthetic files in the documented formats."""
    return FIXTURES


@pytest.fixture(scope="session")
def shared_benchmarks() -> Path:
    """The not-shipped shared samples (``../shared/benchmarks`` or $COGRSI_SHARED_BENCHMARKS)."""
    root = bench.shared_root()
    if not (root / "percept-tomi").is_dir() or not (root / "percept-fantom").is_dir():
        pytest.skip(f"shared benchmark samples not found at {root} (they are not shipped with "
                    f"the repository; set ${bench.registry.SHARED_ENV} to their folder)")
    return root


def real(name: str) -> list[Item]:
    """A shipped real sample; fail (not skip) if it is missing from data/."""
    b = bench.get(name)
    assert b.is_available(), f"{b.title} sample missing under {b.root()} (dvc pull?)"
    return bench.load(name)


def perfect_reply(item: Item) -> str:
    """A reply in the benchmark's native format that names the gold answer."""
    if item.benchmark == "tombench":
        return f"[[{item.gold}]]"
    if item.benchmark == "mmtom-qa":
        return item.gold
    if item.benchmark == "simpletom":
        return f"({item.gold})"
    if item.options:
        return f"{item.gold})"
    if item.gold_set or item.question_type.endswith(":list"):
        return ", ".join(item.gold_set)
    if item.benchmark == "opentom" and item.question_type == "attitude":
        return item.gold
    return item.gold
