"""CogRSI Table 3 (§5.1, App. E.2): each system's score on the eight main benchmarks and
Main, their mean, per model; block A on the main test sample (held-out sample 2, ``S3``) and
block B on the confirmatory sample (held-out sample 3, ``S4``).

The input is each block's :meth:`cogrsi_lib.reader.evaluate.ReaderRuns.bench_table`: the
uniform protocol's headline per model, system and benchmark, the mean over the runs. The
columns follow :data:`cogrsi_lib.bench.MAIN_BENCHMARKS` (a main benchmark not run here stays
empty); ``main`` is the mean over those that ran and ``benchmarks`` says how many, so a Main
over fewer than eight is never mistaken for the paper's. Test-only benchmarks (ToMi and the
rest of Table 17) are left out.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from cogrsi_lib.bench.registry import MAIN_BENCHMARKS

#: Table 3's blocks: the sample each is scored on
BLOCKS = {"A": "main test sample (S3)", "B": "confirmatory sample (S4)"}

COLUMNS = {"block": pl.Utf8, "sample": pl.Utf8, "model": pl.Utf8, "system": pl.Utf8,
           "runs": pl.Int64, **dict.fromkeys(MAIN_BENCHMARKS, pl.Float64),
           "main": pl.Float64, "benchmarks": pl.Int64}


def main_table(blocks: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """Table 3 from each block's benchmark scores (``{"A": ..., "B": ...}``; a block with no
    rows is left out): one row per block, model and system."""
    rows = []
    for block, scores in blocks.items():
        if not scores.height:
            continue
        main = scores.filter(pl.col("benchmark").is_in(MAIN_BENCHMARKS)
                             & (pl.col("protocol") == "uniform"))
        for (model, system), group in main.group_by(["model", "system"], maintain_order=True):
            by = dict(zip(group["benchmark"], group["score"], strict=True))
            ran = [v for v in by.values() if v is not None]
            rows.append({"block": block, "sample": BLOCKS.get(block, block), "model": model,
                         "system": system, "runs": group["runs"].max(),
                         **{b: by.get(b) for b in MAIN_BENCHMARKS},
                         "main": sum(ran) / len(ran) if ran else None, "benchmarks": len(ran)})
    return pl.DataFrame(rows, schema=COLUMNS)
