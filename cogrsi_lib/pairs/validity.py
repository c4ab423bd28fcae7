"""Pair validity: a pair counts only if both of its versions are answered right (CogRSI §3).

``pair_validity(records, predictions)`` scores one answer per pair version.  An answer
is compared with the gold container after light normalisation (case, surrounding space,
a leading "the", trailing punctuation); an answer that names no option, a null answer
(a reply the reader could not parse) and a version with no prediction at all each count
as wrong, and are counted separately (``n_unparsed``, ``n_missing``).  Item accuracy is
reported by variant and, as in Table 9, by access condition with narrative and dialogue
pooled; pair validity overall, by form and by variant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from cogrsi_lib.pairs.lexicon import SPLITS
from cogrsi_lib.pairs.records import sort_by_variant

STATUSES = ("right", "wrong", "unparsed", "missing")
KEY = ["pair_id", "side"]
_ITEM_COLUMNS = ["split", "form", "variant", "kind", "pair_id", "side", "access", "condition",
                 "gold", "options"]
_CONDITIONS = ("watch", "leave", "asleep", "told", "lied", "look")

Predictions = pl.DataFrame | Mapping[tuple[str, str], str | None]


def normalize_answer(text: str) -> str:
    """Lower-case, trim, drop a leading article and trailing punctuation: " The Box." -> "box"."""
    out = re.sub(r"\s+", " ", text.strip().lower())
    out = re.sub(r"[.!?,;:]+$", "", out).strip()
    return re.sub(r"^the ", "", out)


def predictions_frame(predictions: Predictions) -> pl.DataFrame:
    """Predictions as a frame ``pair_id, side, answer`` (answer null: unparsed reply).

    Accepts such a frame or a mapping ``{(pair_id, side): answer or None}``.
    """
    schema = {"pair_id": pl.Utf8, "side": pl.Utf8, "answer": pl.Utf8}
    if isinstance(predictions, pl.DataFrame):
        missing = [c for c in schema if c not in predictions.columns]
        if missing:
            raise ValueError(f"predictions lack column(s) {missing}")
        return predictions.select([pl.col(c).cast(t) for c, t in schema.items()])
    rows = [(pid, side, ans) for (pid, side), ans in predictions.items()]
    return pl.DataFrame(rows, schema=schema, orient="row")


def score_items(records: pl.DataFrame, predictions: Predictions) -> pl.DataFrame:
    """One row per pair version: the answer, its status (right, wrong, unparsed, missing)."""
    preds = predictions_frame(predictions)
    dupes = preds.group_by(KEY, maintain_order=True).len().filter(pl.col("len") > 1)
    if dupes.height:
        raise ValueError(f"more than one prediction for {dupes.select(KEY).rows()[:5]}")
    unknown = preds.join(records.select(KEY), on=KEY, how="anti", maintain_order="left")
    if unknown.height:
        raise ValueError(f"predictions for unknown items {unknown.select(KEY).rows()[:5]}")
    items = records.select(_ITEM_COLUMNS).join(
        preds.with_columns(_has=pl.lit(True)), on=KEY, how="left", maintain_order="left"
    )
    statuses = []
    for has, ans, gold, options in items.select(["_has", "answer", "gold", "options"]).iter_rows():
        if not has:
            statuses.append("missing")
            continue
        norm = None if ans is None else normalize_answer(ans)
        names = {normalize_answer(o): o for o in options}
        if norm is None or norm not in names:
            statuses.append("unparsed")
        else:
            statuses.append("right" if names[norm] == gold else "wrong")
    return (items.drop("_has")
            .with_columns(status=pl.Series(statuses, dtype=pl.Utf8))
            .with_columns(correct=pl.col("status") == "right"))


def _rank(column: str, order: tuple[str, ...]) -> pl.Expr:
    return pl.col(column).replace_strict({v: i for i, v in enumerate(order)}, default=len(order),
                                         return_dtype=pl.Int64)


def _item_stats() -> list[pl.Expr]:
    return [
        pl.len().cast(pl.Int64).alias("n_items"),
        pl.col("correct").sum().cast(pl.Int64).alias("items_right"),
        pl.col("correct").mean().alias("item_accuracy"),
        (pl.col("status") == "missing").sum().cast(pl.Int64).alias("n_missing"),
        (pl.col("status") == "unparsed").sum().cast(pl.Int64).alias("n_unparsed"),
    ]


def _summary(items: pl.DataFrame, pairs: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    item_part = items.group_by(keys, maintain_order=True).agg(_item_stats())
    pair_part = pairs.group_by(keys, maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_pairs"),
        pl.col("valid").sum().cast(pl.Int64).alias("valid_pairs"),
        pl.col("valid").mean().alias("pair_validity"),
    )
    return item_part.join(pair_part, on=keys, how="left", maintain_order="left").sort(keys)


@dataclass(frozen=True)
class PairValidity:
    """Scores of one set of predictions on pair records."""

    items: pl.DataFrame
    pairs: pl.DataFrame
    overall: pl.DataFrame
    by_form: pl.DataFrame
    by_variant: pl.DataFrame
    by_condition: pl.DataFrame

    def table(self) -> pl.DataFrame:
        """Overall, by-form and by-variant rows in one frame ("all" where a key is pooled)."""
        overall = self.overall.with_columns(form=pl.lit("all"), variant=pl.lit("all"),
                                            kind=pl.lit("all"))
        by_form = self.by_form.with_columns(variant=pl.lit("all"), kind=pl.lit("all"))
        cols = self.by_variant.columns
        out = pl.concat([self.by_variant, by_form.select(cols), overall.select(cols)])
        return sort_by_variant(out)


def pair_validity(records: pl.DataFrame, predictions: Predictions) -> PairValidity:
    """Item accuracy and pair validity of ``predictions`` on ``records`` (CogRSI §3, App. C).

    A pair is valid only if both versions are right; a version with a missing or
    unparsed prediction is wrong.
    """
    items = score_items(records, predictions)
    pairs = (items.group_by(["split", "form", "variant", "kind", "pair_id"], maintain_order=True)
             .agg(pl.len().alias("n_versions"),
                  pl.col("correct").filter(pl.col("side") == "a").first().alias("right_a"),
                  pl.col("correct").filter(pl.col("side") == "b").first().alias("right_b"))
             .with_columns(valid=(pl.col("n_versions") == 2)
                           & pl.col("right_a").fill_null(False)
                           & pl.col("right_b").fill_null(False))
             .sort(["split", "pair_id"]))
    by_condition = (items.group_by(["split", "condition"], maintain_order=True).agg(_item_stats())
                    .with_columns(_s=_rank("split", SPLITS), _c=_rank("condition", _CONDITIONS))
                    .sort(["_s", "_c", "split", "condition"]).drop(["_s", "_c"]))
    return PairValidity(
        items=items,
        pairs=pairs,
        overall=_summary(items, pairs, ["split"]),
        by_form=_summary(items, pairs, ["split", "form"]),
        by_variant=sort_by_variant(_summary(items, pairs, ["split", "form", "variant", "kind"])),
        by_condition=by_condition,
    )
