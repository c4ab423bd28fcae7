"""Wilson 95% intervals of proportions (statsmodels), for tables and for the charts' bars."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["wilson", "wilson_bounds"]


def wilson(k: int, n: int) -> tuple[float, float] | tuple[None, None]:
    """The Wilson 95% interval of ``k`` successes in ``n``, as shares; (None, None) at n = 0."""
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return None, None
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def wilson_bounds(shares: Sequence[float], ns: Sequence[int]) -> tuple[list[float], list[float]]:
    """Per row, the Wilson 95% interval of an observed share over its n, as shares (the
    successes are the share times n, rounded); the whole [0, 1] where n is 0, since nothing
    was measured there."""
    lows, highs = [], []
    for share, n in zip(shares, ns, strict=True):
        low, high = wilson(round(share * n), n) if n else (0.0, 1.0)
        lows.append(low)
        highs.append(high)
    return lows, highs
