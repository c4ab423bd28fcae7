"""Multiple comparisons: Holm correction over a family (CogRSI Tables 4, 26; App. D), and
Benjamini-Hochberg for the many strata of a transfer table.

"Holm: significant after Holm correction over the eight benchmarks (bootstrap p-values,
familywise 0.05)" (Table 26).  A thin wrapper over ``statsmodels``' ``multipletests``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl
from statsmodels.stats.multitest import multipletests

__all__ = ["benjamini_hochberg", "holm"]


def holm(p_values: Mapping[str, float], alpha: float = 0.05) -> pl.DataFrame:
    """Holm step-down adjustment of a family of p-values.

    Returns one row per hypothesis, in the given order: ``hypothesis``, ``p_value``,
    ``p_holm`` (adjusted, monotone, capped at 1) and ``reject`` (at familywise ``alpha``).
    """
    names = list(p_values)
    p = np.array([p_values[n] for n in names], dtype=float)
    if np.any((p < 0) | (p > 1) | ~np.isfinite(p)):
        raise ValueError("p-values must be finite and in [0, 1]")
    if not names:
        return pl.DataFrame(schema={"hypothesis": pl.Utf8, "p_value": pl.Float64,
                                    "p_holm": pl.Float64, "reject": pl.Boolean})
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="holm")
    return pl.DataFrame({"hypothesis": names, "p_value": p, "p_holm": adjusted,
                         "reject": reject.astype(bool)})


def benjamini_hochberg(p_values: list[float], alpha: float = 0.05) -> tuple[list[float],
                                                                            list[bool]]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate ``alpha``) and rejections,
    in the given order."""
    if not p_values:
        return [], []
    p = np.asarray(p_values, dtype=float)
    if np.any((p < 0) | (p > 1) | ~np.isfinite(p)):
        raise ValueError("p-values must be finite and in [0, 1]")
    reject, adjusted, _, _ = multipletests(p, alpha=alpha, method="fdr_bh")
    return [float(x) for x in adjusted], [bool(x) for x in reject]
