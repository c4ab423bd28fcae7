"""Whether a comparison could have shown its own effect: the minimum detectable effect and
the ``underpowered`` mark that every comparison table carries (CogRSI App. D reports
intervals and corrected tests; this keeps small samples from being read as findings).

From a row's 95% interval the standard error is its half-width over 1.96; the minimum
detectable effect at 80% power and a two-sided 5% test is (1.96 + 0.84) standard errors. A
row is underpowered when its n is below :data:`MIN_N` or its observed difference is smaller
than that minimum detectable effect. An underpowered row is never called significant. (The
scorecard's gates also refuse an interval without width, :mod:`cogrsi_lib.scorecard.gates`.)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MIN_N", "minimum_detectable_effect", "underpowered", "why_underpowered",
           "with_power"]

Z_ALPHA = 1.959963984540054  # two-sided 5%
Z_POWER = 0.8416212335729143  # 80% power
#: the smallest n a comparison row may be judged on
MIN_N = 30


def minimum_detectable_effect(low: float, high: float) -> float:
    """The effect a test of this precision finds 80% of the time (from a 95% interval)."""
    return (Z_ALPHA + Z_POWER) * (high - low) / (2 * Z_ALPHA)


def why_underpowered(diff: float | None, low: float | None, high: float | None, n: int,
                     min_n: int = MIN_N) -> str:
    """Why the row cannot carry a finding ("" when it can)."""
    if n < min_n:
        return f"n = {n} < {min_n}"
    if diff is None or low is None or high is None or not all(
            math.isfinite(v) for v in (diff, low, high)):
        return "no interval"
    mde = minimum_detectable_effect(low, high)
    if abs(diff) < mde:
        return f"|difference| {abs(diff):.3g} < detectable {mde:.3g}"
    return ""


def underpowered(diff: float | None, low: float | None, high: float | None, n: int,
                 min_n: int = MIN_N) -> bool:
    return bool(why_underpowered(diff, low, high, n, min_n))


def with_power(table: Any, diff: str = "diff", n: str = "n", low: str = "low",
               high: str = "high", min_n: int = MIN_N) -> Any:
    """``table`` (polars) with ``mde`` and ``underpowered`` columns, and ``power_note`` (why
    a row is underpowered, empty when it is not)."""
    import polars as pl

    notes = [why_underpowered(r[diff], r[low], r[high], int(r[n]), min_n)
             for r in table.select(diff, low, high, n).iter_rows(named=True)]
    mde = [minimum_detectable_effect(r[low], r[high])
           if r[low] is not None and r[high] is not None else None
           for r in table.select(low, high).iter_rows(named=True)]
    return table.with_columns(pl.Series("mde", mde, dtype=pl.Float64),
                              pl.Series("underpowered", [bool(x) for x in notes],
                                        dtype=pl.Boolean),
                              pl.Series("power_note", notes, dtype=pl.Utf8))
