"""Pair records: one row per pair version, as polars frames and parquet (CogRSI App. C).

Every column comes from the structured pair: the world's JSON (what ``cogrsi oracle
answer`` reads), the rendered story and question, the oracle's gold with how it was fixed,
and the target's access facts.  ``build_splits`` makes the gate and evaluation splits.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import polars as pl

from cogrsi_lib.oracle.lies import lie_condition
from cogrsi_lib.pairs.generate import Pair, generate_split
from cogrsi_lib.pairs.lexicon import SPLITS
from cogrsi_lib.pairs.variants import FORMS, VARIANTS

SCHEMA: dict[str, pl.DataType] = {
    "pair_id": pl.Utf8,
    "split": pl.Utf8,
    "form": pl.Utf8,
    "variant": pl.Utf8,
    "kind": pl.Utf8,
    "side": pl.Utf8,
    "access": pl.Utf8,
    "condition": pl.Utf8,
    "varied_fact": pl.Utf8,
    "target": pl.Utf8,
    "at_move": pl.Utf8,
    "saw_move": pl.Boolean,
    "told": pl.Utf8,
    "looked": pl.Boolean,
    "access_fact": pl.Utf8,
    "world_json": pl.Utf8,
    "question_json": pl.Utf8,
    "story": pl.Utf8,
    "question": pl.Utf8,
    "gold": pl.Utf8,
    "gold_via": pl.Utf8,
    "gold_source": pl.Int64,
    "reality": pl.Utf8,
    "initial": pl.Utf8,
    "false_belief": pl.Boolean,
    "options": pl.List(pl.Utf8),
    "lie_condition": pl.Utf8,
    "testimony": pl.Utf8,
    "opening": pl.Utf8,
}


def pair_rows(pair: Pair) -> list[dict]:
    """The two records of one pair, side a first."""
    rows = []
    for v in pair.versions:
        rows.append({
            "pair_id": pair.pair_id,
            "split": pair.split,
            "form": pair.form,
            "variant": pair.variant.name,
            "kind": pair.kind,
            "side": v.side,
            "access": v.condition.name,
            "condition": v.condition.pooled,
            "varied_fact": pair.varied,
            "target": pair.cast.target,
            "at_move": v.facts.at_move,
            "saw_move": v.facts.saw_move,
            "told": v.facts.told,
            "looked": v.facts.looked,
            "access_fact": v.facts.describe(pair.cast.target, str(v.gold.reality), pair.form),
            "world_json": v.world.to_json(),
            "question_json": json.dumps(v.question.to_dict(), sort_keys=True,
                                        separators=(",", ":")),
            "story": v.story,
            "question": v.question_text,
            "gold": str(v.gold.value),
            "gold_via": v.gold.via,
            "gold_source": v.gold.source,
            "reality": str(v.gold.reality),
            "initial": v.world.location,
            "false_belief": v.gold.false_belief,
            "options": list(v.world.containers),
            "lie_condition": lie_condition(v.world),
            "testimony": v.world.testimony,
            "opening": v.world.opening,
        })
    return rows


def to_frame(pairs: Iterable[Pair]) -> pl.DataFrame:
    """One row per pair version, in pair order."""
    rows = [r for p in pairs for r in pair_rows(p)]
    return pl.DataFrame(rows, schema=SCHEMA, orient="row") if rows else pl.DataFrame(
        schema=SCHEMA)


def build_splits(
    gate_seed: int = 11,
    eval_seed: int = 23,
    n_gate_narrative: int = 48,
    n_gate_dialogue: int = 48,
    n_eval_narrative: int = 160,
    n_eval_dialogue: int = 160,
) -> dict[str, pl.DataFrame]:
    """The gate and evaluation splits (``params.yaml: pairs``), drawn with different seeds."""
    if gate_seed == eval_seed:
        raise ValueError("the gate and evaluation splits must be drawn with different seeds")
    return {
        "gate": to_frame(generate_split("gate", gate_seed, n_gate_narrative, n_gate_dialogue)),
        "eval": to_frame(generate_split("eval", eval_seed, n_eval_narrative, n_eval_dialogue)),
    }


def write_splits(splits: Mapping[str, pl.DataFrame], out: str | Path) -> dict[str, Path]:
    """Write ``<split>.parquet`` for each split; returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for split, df in splits.items():
        path = out / f"{split}.parquet"
        df.write_parquet(path, statistics=False)
        paths[split] = path
    return paths


def read_split(path: str | Path) -> pl.DataFrame:
    """Read a split written by :func:`write_splits`, checking its columns."""
    df = pl.read_parquet(path)
    if df.schema != pl.Schema(SCHEMA):
        raise ValueError(f"{path} does not hold pair records (columns {df.columns})")
    return df


def combined(splits: Mapping[str, pl.DataFrame] | pl.DataFrame) -> pl.DataFrame:
    """All records in one frame, splits in :data:`SPLITS` order."""
    if isinstance(splits, pl.DataFrame):
        return splits
    order = [s for s in SPLITS if s in splits] + [s for s in splits if s not in SPLITS]
    return pl.concat([splits[s] for s in order]) if order else pl.DataFrame(schema=SCHEMA)


def variant_order() -> pl.DataFrame:
    """Sort keys of forms and variants in the order of CogRSI App. C."""
    rows = [(f, v.name, i * 100 + j) for i, f in enumerate(FORMS)
            for j, v in enumerate(VARIANTS[f])]
    rows += [(f, "all", i * 100 + 99) for i, f in enumerate((*FORMS, "all"))]
    return pl.DataFrame(rows, schema={"form": pl.Utf8, "variant": pl.Utf8, "_order": pl.Int64},
                        orient="row")


def sort_by_variant(df: pl.DataFrame) -> pl.DataFrame:
    """Rows in split, form and variant order (App. C); totals ("all") after what they sum."""
    split_rank = {s: i for i, s in enumerate(SPLITS)}
    return (df.join(variant_order(), on=["form", "variant"], how="left", maintain_order="left")
            .with_columns(pl.col("_order").fill_null(10_000 * 100),
                          _split=pl.col("split").replace_strict(split_rank, default=len(SPLITS),
                                                                return_dtype=pl.Int64))
            .sort(["_split", "_order"], maintain_order=True)
            .drop(["_split", "_order"]))


def counts_table(splits: Mapping[str, pl.DataFrame] | pl.DataFrame) -> pl.DataFrame:
    """Pairs by split, form, variant and kind (each pair counted once), with totals."""
    df = combined(splits).filter(pl.col("side") == "a")
    keys = ["split", "form", "variant", "kind"]
    by_variant = df.group_by(keys, maintain_order=True).agg(pl.len().alias("pairs"))
    totals = (df.group_by(["split", "form"], maintain_order=True)
              .agg(pl.len().alias("pairs"))
              .with_columns(variant=pl.lit("all"), kind=pl.lit("all"))
              .select([*keys, "pairs"]))
    split_totals = (df.group_by("split", maintain_order=True).agg(pl.len().alias("pairs"))
                    .with_columns(form=pl.lit("all"), variant=pl.lit("all"), kind=pl.lit("all"))
                    .select([*keys, "pairs"]))
    out = pl.concat([by_variant, totals, split_totals]).with_columns(
        pl.col("pairs").cast(pl.Int64))
    return sort_by_variant(out.sort(keys))


def examples(splits: Mapping[str, pl.DataFrame] | pl.DataFrame, per_variant: int = 1
             ) -> pl.DataFrame:
    """The first ``per_variant`` pairs of each split and variant, both versions, for reading."""
    df = combined(splits)
    firsts = (df.filter(pl.col("side") == "a")
              .group_by(["split", "form", "variant"], maintain_order=True)
              .head(per_variant).select("pair_id"))
    cols = ["split", "form", "variant", "kind", "pair_id", "side", "access_fact", "story",
            "question", "gold"]
    picked = df.join(firsts, on="pair_id", how="semi", maintain_order="left").select(cols)
    return sort_by_variant(picked.sort(["pair_id", "side"]))
