"""Benchmark loaders, their own scorers, and sample manifests (CogRSI §3, App. E).

>>> from cogrsi_lib import bench
>>> items = bench.load("tombench")              # official release under data/benchmarks
>>> judgements = bench.judge_all("tombench", items, {it.id: "[[A]]" for it in items})
>>> bench.get("tombench").summarize(items, judgements)["score"]  # doctest: +SKIP

Each benchmark is one module registering a :class:`Benchmark` (loader + scorer); see
:mod:`cogrsi_lib.bench.registry`.
"""

from cogrsi_lib.bench.registry import (
    MAIN_BENCHMARKS,
    Benchmark,
    Source,
    available,
    benchmark_root,
    data_root,
    get,
    judge_all,
    load,
    names,
    register,
    shared_root,
)
from cogrsi_lib.bench.schema import ITEM_SCHEMA, BenchmarkFormatError, Item, items_to_frame
from cogrsi_lib.bench.scoring import Judgement

__all__ = [
    "ITEM_SCHEMA",
    "MAIN_BENCHMARKS",
    "Benchmark",
    "BenchmarkFormatError",
    "Item",
    "Judgement",
    "Source",
    "available",
    "benchmark_root",
    "data_root",
    "get",
    "items_to_frame",
    "judge_all",
    "load",
    "names",
    "register",
    "shared_root",
]
