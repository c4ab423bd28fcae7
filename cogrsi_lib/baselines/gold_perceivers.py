"""Perception or reasoning? CogRSI Table 27 (Appendix G.6): each system with its own
perception call and with gold perceivers in its place, nothing else changed.

Every named system runs twice on items that carry gold perceivers
(:mod:`cogrsi_lib.reader.gold`): as itself, and as ``<name>+gold``, whose config reads
``perceivers: gold``. A system that never calls perception (self-consistency) asks the same
requests both times, so its gold row is a control that must equal its own. The table gives
accuracy per model, source, system and perceivers on Table 27's four columns (first- and
second-order false and true belief) and over all questions, the runs pooled, and each gold
row's gain over the system's own.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from cogrsi_lib.baselines.learned import LEARNED, learned_reader
from cogrsi_lib.baselines.registry import make_system
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.evaluate import ReaderRuns
from cogrsi_lib.reader.gold import CELLS, table_cell
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.reader.system import System

#: Table 27's systems: SC (the control), PercepToM and the reader
SYSTEMS = ("sc6", "perceptom", "cogrsi")
#: the suffix of a system's run with gold perceivers
GOLD = "+gold"

COLUMNS = {"model": pl.Utf8, "source": pl.Utf8, "system": pl.Utf8, "perceivers": pl.Utf8,
           "calls_perception": pl.Boolean, "questions": pl.Int64, "runs": pl.Int64,
           **dict.fromkeys(CELLS.values(), pl.Float64), "all": pl.Float64,
           "gain": pl.Float64}


def with_and_without_gold(names: Sequence[str], backend: Backend, config: ReaderConfig,
                          principle: str | None, learned: str | None = None) -> list[System]:
    """Each named system as itself and as ``<name>+gold``, reading the items' gold
    perceivers instead of calling perception; with ``learned`` (a loop's principle), the
    reader with it (CogRSI-L, :mod:`cogrsi_lib.baselines.learned`) too."""
    gold_config = config.model_copy(update={"perceivers": "gold"})
    systems: list[System] = []
    for name in names:
        gold = make_system(name, backend, gold_config, principle)
        gold.name = name + GOLD
        systems += [make_system(name, backend, config, principle), gold]
    if learned is not None:
        systems += [learned_reader(backend, config, learned),
                    learned_reader(backend, gold_config, learned, LEARNED + GOLD)]
    return systems


def gold_perceivers_table(runs: ReaderRuns) -> pl.DataFrame:
    """Table 27 from the records of :func:`with_and_without_gold`'s systems: per model,
    source, system and perceivers (``model`` or ``gold``), accuracy on each column and over
    all questions, every run's records pooled; ``calls_perception`` says whether the system
    made a perception call of its own, and ``gain`` is a gold row's ``all`` minus the
    system's own."""
    frames = [r.items.with_columns(pl.lit(m).alias("model")) for m, r in runs.cells]
    if not frames or not sum(f.height for f in frames):
        return pl.DataFrame(schema=COLUMNS)
    keys = ["model", "source", "system", "perceivers"]
    items = pl.concat(frames).with_columns(
        pl.col("question_type").map_elements(table_cell, return_dtype=pl.Utf8).alias("cell"),
        pl.when(pl.col("system").str.ends_with(GOLD)).then(pl.lit("gold"))
        .otherwise(pl.lit("model")).alias("perceivers"),
        pl.col("system").str.strip_suffix(GOLD))
    overall = items.group_by(keys, maintain_order=True).agg(
        pl.col("perception_status").is_in(["ok", "malformed"]).any().alias("calls_perception"),
        pl.col("item_id").n_unique().alias("questions"), pl.col("run").n_unique().alias("runs"),
        pl.col("score").mean().alias("all"))
    by_cell = (items.filter(pl.col("cell").is_not_null())
               .group_by([*keys, "cell"], maintain_order=True).agg(pl.col("score").mean())
               .pivot(on="cell", index=keys, values="score"))
    table = overall.join(by_cell, on=keys, how="left", maintain_order="left")
    own = table.filter(pl.col("perceivers") == "model").select(
        "model", "source", "system", pl.col("all").alias("_own"))
    table = (table.join(own, on=["model", "source", "system"], how="left",
                        maintain_order="left")
             .with_columns(pl.when(pl.col("perceivers") == "gold")
                           .then(pl.col("all") - pl.col("_own")).alias("gain")))
    return table.select([(pl.col(c) if c in table.columns else pl.lit(None)).cast(t).alias(c)
                         for c, t in COLUMNS.items()])
