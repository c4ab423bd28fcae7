"""The reader's component ablations (CogRSI Table 2, Appendix G.3): the grounded reader with
one part taken away, as reader systems, and Table 2's comparison of whole systems.

- ``cogrsi_noprinciple`` (Stage 2): no principle P (the annotated reading and arbitration
  run without it);
- ``cogrsi_plain`` (Stage 3): no annotated reading, so no perception call: all six samples
  read the plain story (a close split is still arbitrated, on the plain view);
- ``cogrsi_annotated`` (Stage 3): no plain reading: all six samples read the annotated view
  (plain only where perception failed, as the reader falls back);
- ``cogrsi_noarb`` (Stage 3): both readings, no arbitration: the vote's leader answers;
- ``cogrsi_neutralarb``: the arbiter without the principle, told only to pick the right
  candidate given the story (G.6: Table 12's neutral arbiter, not a Table 2 row); the samples
  keep the principle.

Each shares the reader's requests wherever it asks the same thing (the perception call; the
samples of a reading, whose cache keys do not depend on how many samples are drawn), so an
ablation costs only what it asks anew. The loop's principle in place of the expert one is
CogRSI-L (:mod:`cogrsi_lib.baselines.learned`), a Stage-2 row where the stage runs it. Table
2's Stage-1 row (Lib-A, a tool library without the reader) is not run.
"""

from __future__ import annotations

import polars as pl

from cogrsi_lib.baselines.learned import LEARNED
from cogrsi_lib.baselines.registry import reader_system
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.reader.evaluate import ReaderRuns
from cogrsi_lib.reader.reader import GroundedReader, ReaderConfig

#: the reader and its registered ablations: name -> (Table 2's stage, what is taken away)
ABLATIONS: dict[str, tuple[str, str]] = {
    "cogrsi": ("3", "nothing (the full reader)"),
    "cogrsi_noprinciple": ("2", "the principle"),
    "cogrsi_plain": ("3", "the annotated reading (and perception)"),
    "cogrsi_annotated": ("3", "the plain reading"),
    "cogrsi_noarb": ("3", "arbitration"),
}


#: Table 2's rows: the ablations, and the loop's principle in the expert one's place
ROWS: dict[str, tuple[str, str]] = {
    **ABLATIONS, LEARNED: ("2", "the expert principle, for the loop's (CogRSI-L)")}


@reader_system("cogrsi_noprinciple", standard=())
def _no_principle(backend: Backend, config: ReaderConfig, principle: str | None
                  ) -> GroundedReader:
    return GroundedReader(backend, "none", config, name="cogrsi_noprinciple")


@reader_system("cogrsi_plain", standard=())
def _plain_only(backend: Backend, config: ReaderConfig, principle: str | None
                ) -> GroundedReader:
    cfg = config.model_copy(update={"n_annotated": 0,
                                    "n_plain": config.n_annotated + config.n_plain})
    return GroundedReader(backend, principle, cfg, name="cogrsi_plain")


@reader_system("cogrsi_annotated", standard=())
def _annotated_only(backend: Backend, config: ReaderConfig, principle: str | None
                    ) -> GroundedReader:
    cfg = config.model_copy(update={"n_annotated": config.n_annotated + config.n_plain,
                                    "n_plain": 0})
    return GroundedReader(backend, principle, cfg, name="cogrsi_annotated")


@reader_system("cogrsi_noarb", standard=())
def _no_arbitration(backend: Backend, config: ReaderConfig, principle: str | None
                    ) -> GroundedReader:
    cfg = config.model_copy(update={"arbitration": False})
    return GroundedReader(backend, principle, cfg, name="cogrsi_noarb")


@reader_system("cogrsi_neutralarb", standard=())
def _neutral_arbiter(backend: Backend, config: ReaderConfig, principle: str | None
                     ) -> GroundedReader:
    cfg = config.model_copy(update={"neutral_arbiter": True})
    return GroundedReader(backend, principle, cfg, name="cogrsi_neutralarb")


COLUMNS = {"model": pl.Utf8, "system": pl.Utf8, "stage": pl.Utf8, "removes": pl.Utf8,
           "questions": pl.Int64, "score": pl.Float64, "difference": pl.Float64,
           "low": pl.Float64, "high": pl.Float64, "underpowered": pl.Boolean}


def ablation_table(runs: ReaderRuns) -> pl.DataFrame:
    """Table 2's reader rows that ran, per model (its runs pooled): the score over every
    question, and the difference from the full reader on the same questions with its paired
    bootstrap interval over stories (empty unless ``cogrsi`` and an ablation ran)."""
    items = runs.items
    present = [s for s in ROWS if s in set(items["system"].to_list())]
    if "cogrsi" not in present or len(present) < 2:
        return pl.DataFrame(schema=COLUMNS)
    paired = runs.paired_table("cogrsi")
    rows = []
    for model in runs.models:
        mine = runs.pooled(model).items
        for system in present:
            scores = mine.filter(pl.col("system") == system)["score"]
            d = (paired.filter((pl.col("model") == model) & (pl.col("system") == system))
                 if paired.height else paired)
            diff = d.row(0, named=True) if d.height else {}
            stage, removes = ROWS[system]
            rows.append({"model": model, "system": system, "stage": stage, "removes": removes,
                         "questions": scores.len(), "score": scores.mean(),
                         "difference": diff.get("difference", 0.0 if system == "cogrsi"
                                                else None),
                         "low": diff.get("low"), "high": diff.get("high"),
                         "underpowered": diff.get("underpowered")})
    return pl.DataFrame(rows, schema=COLUMNS)
