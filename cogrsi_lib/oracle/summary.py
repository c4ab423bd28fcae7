"""Summaries of sampled worlds and questions for the ``oracle_worlds`` report."""

from __future__ import annotations

import polars as pl


def question_summary(questions: pl.DataFrame) -> pl.DataFrame:
    """Questions by kind and depth: count, false-belief share, and where answers come from."""
    return (
        questions.group_by("kind", "depth", maintain_order=True)
        .agg(
            pl.len().alias("questions"),
            pl.col("false_belief").mean().round(4).alias("false_belief_share"),
            (pl.col("via") == "whisper").mean().round(4).alias("from_whisper"),
            (pl.col("via") == "peek").mean().round(4).alias("from_peek"),
            (pl.col("via") == "view").mean().round(4).alias("from_view"),
            pl.col("chain_saw_last_change").mean().round(4).alias("chain_saw_last_change"),
        )
        .sort("kind", "depth")
    )


def event_summary(worlds: pl.DataFrame) -> pl.DataFrame:
    """How often each event type occurs, and in how many worlds."""
    exploded = worlds.select("world_id", "event_types").explode("event_types")
    return (
        exploded.drop_nulls("event_types")
        .group_by(pl.col("event_types").alias("event"), maintain_order=True)
        .agg(pl.len().alias("events"), pl.col("world_id").n_unique().alias("worlds"))
        .sort("events", descending=True)
    )
