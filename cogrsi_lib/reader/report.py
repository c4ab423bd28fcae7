"""Tables computed from records (CogRSI §5.1 and G.7: calls per question, token ratio).

``cost_table`` gives, per system, calls and tokens per question and the token ratio against
SC k=6 (the paper: the reader makes 7.3 calls and uses 1.51x the tokens of SC k=6);
``accuracy_table`` gives accuracy with the count of unparsed answers, perception fallbacks
and arbitration calls. Inputs are :class:`ItemRecord` lists or their frames.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cogrsi_lib.reader.records import ItemRecord, records_to_frame

REFERENCE = "sc6"


def _frame(records: Sequence[ItemRecord] | Any) -> Any:
    import polars as pl

    if isinstance(records, pl.DataFrame):
        return records
    return records_to_frame(list(records))


def cost_table(records: Sequence[ItemRecord] | Any, reference: str = REFERENCE) -> Any:
    """Per system: questions, calls/question, tokens/question, cached share, token ratio."""
    import polars as pl

    df = _frame(records)
    t = (
        df.group_by("system", maintain_order=True)
        .agg(
            pl.len().alias("questions"),
            pl.col("calls").mean().alias("calls_per_q"),
            pl.col("prompt_tokens").mean().alias("prompt_tokens_per_q"),
            pl.col("completion_tokens").mean().alias("completion_tokens_per_q"),
            pl.col("total_tokens").mean().alias("tokens_per_q"),
            (pl.col("cached_calls").sum() / pl.col("calls").sum()).alias("cached_share"),
            pl.col("latency_s").sum().alias("latency_s"),
        )
        .sort("system")
    )
    ref = t.filter(pl.col("system") == reference)["tokens_per_q"]
    ratio = pl.col("tokens_per_q") / ref[0] if len(ref) and ref[0] else pl.lit(None)
    return t.with_columns(ratio.alias(f"token_ratio_vs_{reference}"))


def accuracy_table(records: Sequence[ItemRecord] | Any) -> Any:
    """Per system: accuracy over gold-bearing items, unparsed answers and reader events."""
    import polars as pl

    df = _frame(records)
    return (
        df.group_by("system", maintain_order=True)
        .agg(
            pl.len().alias("questions"),
            pl.col("correct").cast(pl.Float64).mean().alias("accuracy"),
            (pl.col("parse_status") == "unparsed").sum().alias("unparsed_answers"),
            pl.col("unparsed_samples").sum().alias("unparsed_samples"),
            pl.col("n_samples").sum().alias("samples"),
            (pl.col("perception_status") == "malformed").sum().alias("perception_fallbacks"),
            pl.col("arbitration_ran").sum().alias("arbitrations"),
        )
        .sort("system")
    )
