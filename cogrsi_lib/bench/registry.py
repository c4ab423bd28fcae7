"""Benchmarks registered by name: a loader plus the benchmark's own scorer (CogRSI §3).

In the style of lm-evaluation-harness, a benchmark is one module of this package that calls
:func:`register` with a :class:`Benchmark`; adding a benchmark touches that one file
(:func:`_discover` imports every module of the package; only a benchmark's registers).
Each benchmark says how to load its official release, how its rule judges one reply, how
its questions aggregate into its reported metrics (``summarize``; the key ``"score"`` is the
headline number, the one "Main" averages) and which rows that headline is the mean of
(``units``, for the paired bootstrap).

Main is the mean over the eight main benchmarks (CogRSI §3): :data:`MAIN_BENCHMARKS`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cogrsi_lib.bench.protocol import (
    PROMPT_NOT_REPRODUCED,
    PROTOCOLS,
    UNIFORM_PROMPT,
    Deviation,
    Protocol,
)
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.bench.scoring import Judgement, accuracy, mean_by

__all__ = [
    "MAIN_BENCHMARKS",
    "Benchmark",
    "Source",
    "available",
    "benchmark_root",
    "data_root",
    "get",
    "judge_all",
    "load",
    "names",
    "register",
    "shared_root",
]

#: The eight benchmarks whose mean is "Main" (CogRSI §3), in the paper's order.
MAIN_BENCHMARKS: tuple[str, ...] = (
    "fantom", "simpletom", "exploretom", "hi-tom", "opentom", "tombench", "cogtom", "bigtom",
)

DATA_ENV = "COGRSI_DATA"
SHARED_ENV = "COGRSI_SHARED_BENCHMARKS"


@dataclass(frozen=True)
class Source:
    """One file of an official release: where to get it, where it goes, its sha256.

    ``dest`` is relative to the benchmark's directory under ``data/benchmarks``.
    ``sha256=None`` means no checksum is pinned yet: ``cogrsi bench fetch`` then records the
    checksum of the first download in ``data/benchmarks/CHECKSUMS.json`` and verifies later
    downloads against it.  ``extract_to`` (a folder relative to the benchmark's directory)
    marks an archive (``.zip``/``.tar.gz``): it is unpacked there, without its single common
    top-level folder if it has one, and not kept.
    """

    url: str
    dest: str
    sha256: str | None = None
    extract_to: str | None = None


Units = Callable[[Sequence[Item], Sequence[Judgement]], pl.DataFrame]


def units_by(cell: Callable[[Item], str]) -> Units:
    """Headline rows: one per question, in the cell ``cell(item)`` (headline = the mean of
    the per-cell accuracies, e.g. ToMBench's mean over tasks)."""

    def units(items: Sequence[Item], judgements: Sequence[Judgement]) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "unit_id": [it.id for it in items],
                "cluster": [it.story_id for it in items],
                "cell": [cell(it) for it in items],
                "value": [float(j.value) for j in judgements],
            },
            schema={"unit_id": pl.Utf8, "cluster": pl.Utf8, "cell": pl.Utf8,
                    "value": pl.Float64},
        )

    return units


#: Default headline rows: one per question, in one cell (headline = accuracy).
item_units: Units = units_by(lambda it: "all")


def accuracy_summary(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Default summary: accuracy overall (the headline) and per question type."""
    out = {"score": accuracy(judgements), "accuracy": accuracy(judgements)}
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    return out


@dataclass(frozen=True)
class Benchmark:
    """A benchmark: its official format's loader and its own scoring rule.

    ``load(root)`` reads the release under ``root`` (the benchmark's data directory);
    ``judge(item, reply)`` applies the per-question rule; ``summarize(items, judgements)``
    gives the reported metrics with the headline under ``"score"``; ``units(items,
    judgements)`` gives the rows (``unit_id, cluster, cell, value``) whose mean over cells of
    per-cell means is the headline, so that a bootstrap over ``cluster`` reproduces it.
    ``unit`` names the sampling unit (``story_id``) for manifests. ``sample`` says what the
    tests read: ``"real"`` (a cut of the release in ``data/``), ``"shared"`` (a real sample
    read from ``../shared/benchmarks``, not shipped) or ``"synthetic"`` (fixtures in the
    documented format, because no sample could be obtained).
    """

    name: str
    title: str
    suites: tuple[str, ...]
    unit: str
    data_dir: str
    required: tuple[str, ...]
    load: Callable[[Path], list[Item]]
    judge: Callable[[Item, str], Judgement]
    summarize: Callable[[Sequence[Item], Sequence[Judgement]], dict[str, float]] = \
        accuracy_summary
    units: Units = item_units
    sources: tuple[Source, ...] = ()
    paper: str = ""
    sample: str = "real"
    shared: bool = False
    official: Protocol | None = None
    uniform_deviations: tuple[Deviation, ...] = ()
    release: str = ""
    official_deviations: tuple[Deviation, ...] = ()

    def root(self, base: str | Path | None = None) -> Path:
        """The benchmark's data directory (under ``base`` if given)."""
        return benchmark_root(self, base)

    def is_available(self, base: str | Path | None = None) -> bool:
        return all((self.root(base) / rel).exists() for rel in self.required)

    def protocol(self, name: str = "uniform") -> Protocol:
        """The ``official`` or ``uniform`` protocol of this benchmark."""
        if name not in PROTOCOLS:
            raise ValueError(f"unknown protocol {name!r} (known: {', '.join(PROTOCOLS)})")
        release = self.official.release if self.official is not None else self.release
        uniform = Protocol("uniform", self.judge, self.summarize, self.units, release=release,
                           deviations=(UNIFORM_PROMPT, *self.uniform_deviations))
        if name == "uniform":
            return uniform
        if self.official is not None:
            return self.official
        return Protocol("official", self.judge, self.summarize, self.units,
                        release=self.release,
                        deviations=(PROMPT_NOT_REPRODUCED, *self.official_deviations))


_REGISTRY: dict[str, Benchmark] = {}


def register(benchmark: Benchmark) -> Benchmark:
    """Add a benchmark to the registry (names are unique)."""
    if benchmark.name in _REGISTRY and _REGISTRY[benchmark.name] is not benchmark:
        raise ValueError(f"benchmark {benchmark.name!r} is already registered")
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _discover() -> None:
    """Import every module of this package: a benchmark module registers its benchmark when
    imported, the others (loaders' helpers, scoring, reports, the CLI) register nothing, so
    no list tells them apart."""
    package = importlib.import_module("cogrsi_lib.bench")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")


def get(name: str) -> Benchmark:
    """The registered benchmark called ``name``."""
    _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown benchmark {name!r} (known: {', '.join(names())})") from None


def names(suite: str | None = None) -> list[str]:
    """Registered benchmark names (in a ``suite`` if given): main ones first, in order."""
    _discover()
    order = {n: i for i, n in enumerate(MAIN_BENCHMARKS)}
    chosen = [b for b in _REGISTRY.values() if suite is None or suite in b.suites]
    return [b.name for b in sorted(chosen, key=lambda b: (order.get(b.name, 99), b.name))]


def _repo_root() -> Path:
    from cogrsi_lib.pipeline import find_repo_root

    return find_repo_root(Path(__file__).parent) or find_repo_root() or Path.cwd()


def data_root() -> Path:
    """``data/benchmarks`` of the repository, or ``$COGRSI_DATA`` when set."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else _repo_root() / "data" / "benchmarks"


def shared_root() -> Path:
    """Shared, not-shipped samples: ``$COGRSI_SHARED_BENCHMARKS`` or ``../shared/benchmarks``."""
    env = os.environ.get(SHARED_ENV)
    return Path(env) if env else (_repo_root() / ".." / "shared" / "benchmarks").resolve()


def benchmark_root(benchmark: Benchmark | str, base: str | Path | None = None) -> Path:
    """Directory of one benchmark: ``base/<data_dir>``, by default under :func:`data_root`
    (for a not-shipped benchmark: under :func:`shared_root` unless fetched into data/)."""
    bench = get(benchmark) if isinstance(benchmark, str) else benchmark
    if base is None:
        base = data_root()
        if bench.shared and not all((base / bench.data_dir / r).exists() for r in bench.required):
            base = shared_root()  # not shipped: read the shared copy unless one was fetched
    return Path(base) / bench.data_dir


def available(name: str, base: str | Path | None = None) -> bool:
    """Whether the benchmark's required files exist."""
    return get(name).is_available(base)


def load(name: str, root: str | Path | None = None) -> list[Item]:
    """Load benchmark ``name`` from ``root`` (default: its directory under data/benchmarks)."""
    bench = get(name)
    path = Path(root) if root is not None else bench.root()
    missing = [rel for rel in bench.required if not (path / rel).exists()]
    if missing:
        hint = (f"set ${SHARED_ENV}" if bench.shared else f"run `cogrsi bench fetch {name}`")
        raise FileNotFoundError(f"{bench.title}: missing {', '.join(missing)} under {path} "
                                f"({hint})")
    return bench.load(path)


def judge_all(
    name: str, items: Sequence[Item], responses: Mapping[str, str | Sequence[str]],
    protocol: str = "uniform",
) -> list[Judgement]:
    """Judge every item's reply (``responses[item.id]``: one reply, or one per view of the
    protocol) under ``protocol``; a missing reply is malformed."""
    proto = get(name).protocol(protocol)
    return [proto.score(it, responses[it.id]) if it.id in responses else Judgement(0.0, None)
            for it in items]
