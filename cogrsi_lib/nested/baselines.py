"""Accuracy of the shortcut heuristics per depth, on the adversarial partition and on all
items (plan §1.4, §7, §16 Gate A: "shortcut baselines acceptably low on adversarial
partitions")."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

import polars as pl

from cogrsi_lib.nested.facts import ADVERSARIAL
from cogrsi_lib.nested.heuristics import HEURISTICS, NOT_IN_LIFT, Heuristic, is_shortcut
from cogrsi_lib.nested.items import NestedItem

ALL = "all"
SUBSETS = (ADVERSARIAL, ALL)
_SCHEMA = {"heuristic": pl.Utf8, "subset": pl.Utf8, "depth": pl.Int64, "n": pl.Int64,
           "correct": pl.Int64, "accuracy": pl.Float64, "shortcut": pl.Boolean}


def as_replies(items: Iterable[NestedItem], heuristic: Heuristic) -> list[str]:
    """A heuristic's answers written as strict JSON replies, for :func:`score.score`."""
    return [json.dumps({"answer": heuristic(it)}) for it in items]


def baseline_table(
    items: Sequence[NestedItem], heuristics: Mapping[str, Heuristic] = HEURISTICS
) -> pl.DataFrame:
    """Long table: heuristic, subset (adversarial or all), depth, n, correct, accuracy, shortcut.

    ``shortcut`` is False where the heuristic is the task itself (e.g. first-order at R1).
    """
    depths = sorted({it.depth for it in items})
    rows = []
    for name, fn in heuristics.items():
        hits = [fn(it) == it.gold for it in items]
        for subset in SUBSETS:
            for depth in depths:
                sel = [h for it, h in zip(items, hits, strict=True)
                       if it.depth == depth and (subset == ALL or it.partition == ADVERSARIAL)]
                if sel:
                    rows.append({
                        "heuristic": name, "subset": subset, "depth": depth, "n": len(sel),
                        "correct": sum(sel), "accuracy": sum(sel) / len(sel),
                        "shortcut": is_shortcut(name, depth),
                    })
    return pl.DataFrame(rows, schema=_SCHEMA)


def baseline_wide(long: pl.DataFrame, subset: str = ADVERSARIAL) -> pl.DataFrame:
    """One row per heuristic, one accuracy column per depth (``R0``..``R4``) for ``subset``;
    null where the heuristic is the task itself rather than a shortcut."""
    part = long.filter(pl.col("subset") == subset)
    order = list(dict.fromkeys(part["heuristic"].to_list()))
    depths = sorted(set(part["depth"].to_list()))
    rows = []
    for name in order:
        row: dict[str, object] = {"heuristic": name}
        for d in depths:
            cell = part.filter((pl.col("heuristic") == name) & (pl.col("depth") == d))
            row[f"R{d}"] = cell["accuracy"][0] if cell.height and cell["shortcut"][0] else None
        rows.append(row)
    schema = {"heuristic": pl.Utf8} | {f"R{d}": pl.Float64 for d in depths}
    return pl.DataFrame(rows, schema=schema)


def best_shortcut(long: pl.DataFrame, subset: str = ALL) -> pl.DataFrame:
    """Per depth: the most accurate shortcut heuristic on ``subset`` and its accuracy (plan §7);
    heuristics in ``NOT_IN_LIFT`` are not candidates."""
    part = long.filter((pl.col("subset") == subset) & pl.col("shortcut")
                       & ~pl.col("heuristic").is_in(sorted(NOT_IN_LIFT)))
    return (
        part.sort(["depth", "accuracy", "heuristic"], descending=[False, True, False])
        .group_by("depth", maintain_order=True).first()
        .select("depth", pl.col("heuristic").alias("best_heuristic"),
                pl.col("accuracy").alias("best_heuristic_accuracy"))
    )
