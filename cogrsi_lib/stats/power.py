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


def _finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def _judged(diff: float | None, low: float | None, high: float | None, n: int,
            min_n: int) -> tuple[float | None, str]:
    """The row's minimum detectable effect (None without an interval) and why it cannot
    carry a finding ("" when it can)."""
    mde = minimum_detectable_effect(low, high) if _finite(low, high) else None
    if n < min_n:
        return mde, f"n = {n} < {min_n}"
    if mde is None or diff is None or not _finite(diff):
        return mde, "no interval"
    if abs(diff) < mde:
        return mde, f"|difference| {abs(diff):.3g} < detectable {mde:.3g}"
    return mde, ""


def why_underpowered(diff: float | None, low: float | None, high: float | None, n: int,
                     min_n: int = MIN_N) -> str:
    """Why the row cannot carry a finding ("" when it can)."""
    return _judged(diff, low, high, n, min_n)[1]


def underpowered(diff: float | None, low: float | None, high: float | None, n: int,
                 min_n: int = MIN_N) -> bool:
    return bool(why_underpowered(diff, low, high, n, min_n))


def with_power(table: Any, diff: str = "diff", n: str = "n", low: str = "low",
               high: str = "high", min_n: int = MIN_N) -> Any:
    """``table`` (polars) with ``mde`` and ``underpowered`` columns, and ``power_note`` (why
    a row is underpowered, empty when it is not)."""
    import polars as pl

    judged = [_judged(r[diff], r[low], r[high], int(r[n]), min_n)
              for r in table.select(diff, low, high, n).iter_rows(named=True)]
    mde = [m for m, _ in judged]
    notes = [why for _, why in judged]
    return table.with_columns(pl.Series("mde", mde, dtype=pl.Float64),
                              pl.Series("underpowered", [bool(x) for x in notes],
                                        dtype=pl.Boolean),
                              pl.Series("power_note", notes, dtype=pl.Utf8))
