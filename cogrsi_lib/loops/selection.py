"""Selection quality of registration (CogRSI Table 5, App. C.2 "Selection quality").

Every candidate that reached registration, admitted or not, and its incumbent are scored on
held-out development questions (:func:`cogrsi_lib.loops.evaluate.heldout_candidates`); a
candidate *helps* if it beats its incumbent there. Per arm:

- Adm.: rounds with an admission (count and share of rounds);
- Prec. / Harm.: shares of admitted updates that help / hurt;
- Recall: share of helpful candidates that were admitted;
- Missed: rounds with a helpful candidate and no admission (share of rounds);
- selection gap: in rounds with an admission, the best candidate's held-out gain minus the
  admitted one's, averaged.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl


def _pct(num: int, den: int) -> float | None:
    return 100.0 * num / den if den else None


def selection_quality(scored: pl.DataFrame, rounds: pl.DataFrame,
                      by: Sequence[str] = ("arm",)) -> pl.DataFrame:
    """Table 5 from held-out-scored candidates and the rounds table (all rounds count)."""
    by = list(by)
    keys = ["arm", "seed", "round"]
    out = []
    for grp, rnds in rounds.group_by(by, maintain_order=True):
        cands = scored.join(rnds.select(keys), on=keys, how="semi", maintain_order="left")
        per_round = (cands.group_by(keys, maintain_order=True).agg(
            pl.col("admitted").any().alias("adm"),
            pl.col("helps").any().alias("any_help"),
            pl.col("heldout_gain").max().alias("best"),
            pl.col("heldout_gain").filter(pl.col("admitted")).first().alias("adm_gain"),
        ))
        n_rounds = rnds.height
        admitted = cands.filter(pl.col("admitted"))
        n_adm = admitted.height
        helpful = cands.filter(pl.col("helps"))
        missed = per_round.filter(pl.col("any_help") & ~pl.col("adm")).height
        gaps = per_round.filter(pl.col("adm")).select(pl.col("best") - pl.col("adm_gain"))
        row = dict(zip(by, grp if isinstance(grp, tuple) else (grp,), strict=True))
        row.update({
            "rounds": n_rounds,
            "candidates": cands.height,
            "admissions": n_adm,
            "adm_share": _pct(per_round.filter(pl.col("adm")).height, n_rounds),
            "precision": _pct(admitted.filter(pl.col("helps")).height, n_adm),
            "harm": _pct(admitted.filter(pl.col("hurts")).height, n_adm),
            "helpful": helpful.height,
            "recall": _pct(helpful.filter(pl.col("admitted")).height, helpful.height),
            "missed": missed,
            "missed_share": _pct(missed, n_rounds),
            "selection_gap": float(gaps.to_series().mean()) if gaps.height else None,
        })
        out.append(row)
    return pl.DataFrame(out)
