"""The loops stage's records: every answer of the reader the stage keeps (CogRSI §5.2, C.2).

``records.parquet`` (:data:`RECORDS`) holds the final cohort, answered under every learned
principle, no principle and the expert principle, for every seed (``cohort`` ``final``,
``system`` the principle's label: an arm, ``none``, ``expert`` or ``gepa``), and the same
principles' answers on Table 1's test questions (``cohort`` ``test_main`` or ``bigtom_u``); with
``log_items`` also every round's cohorts as each loop answered them (``system`` the arm,
``round``, ``cohort`` ``discovery``/``trial<k>``/``gate_pairs``, ``role`` ``incumbent`` or
``candidate``, and the candidate's index), which each loop first writes with its round
(``runs/<arm>/seed<k>/rounds/rNN/items.parquet``). ``run`` is the seed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import polars as pl

from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import principle_id
from cogrsi_lib.reader.records import ITEM_COLUMNS, ItemRecord
from cogrsi_lib.records_schema import RecordSchema

FINAL = "final"
#: the loops' records: the core, the reader's columns and where in the loop the answer fell
RECORDS = RecordSchema("loops", {
    **ITEM_COLUMNS, "principle_id": pl.Utf8, "group": pl.Utf8, "round": pl.Int64,
    "cohort": pl.Utf8, "role": pl.Utf8, "candidate": pl.Int64,
})
#: the final cohort's scores as the tables read them (``records`` restricted and renamed)
SCORE_SCHEMA = {"label": pl.Utf8, "principle_id": pl.Utf8, "item_id": pl.Utf8,
                "story_id": pl.Utf8, "group": pl.Utf8, "answer": pl.Utf8, "gold": pl.Utf8,
                "correct": pl.Boolean, "n_options": pl.Int64, "seed": pl.Int64}


def _item_columns(item: ReaderItem) -> dict[str, str | None]:
    source = item.meta.get("source")
    return {"source": None if source is None else str(source),
            "group": str(item.meta.get("group", ""))}


def item_records(records: Sequence[ItemRecord], items: Sequence[ReaderItem],
                 **columns: object) -> pl.DataFrame:
    """``records`` (one per item of ``items``, in order) as loops records, with ``columns``
    (``run``, ``system``, ``cohort``, ...) on every row."""
    rows = [{**r.to_row(), **_item_columns(it), **columns}
            for r, it in zip(records, items, strict=True)]
    return RECORDS.frame(rows)


def round_records(records: Sequence[ItemRecord], known: Iterable[ReaderItem], arm: str,
                  seed: int, round_: int, cohort: str, role: str,
                  candidate: int | None) -> pl.DataFrame:
    """One round's answers on one cohort as loops records; ``known`` are the items the loop
    draws from (their source and group are looked up by id)."""
    by_id: Mapping[str, ReaderItem] = {it.item_id: it for it in known}
    rows = []
    for r in records:
        it = by_id.get(r.item_id)
        rows.append({**r.to_row(), **(_item_columns(it) if it is not None else {}),
                     "run": seed, "system": arm, "round": round_, "cohort": cohort,
                     "role": role, "candidate": candidate})
    return RECORDS.frame(rows)


def final_records(answers: Mapping[str, Sequence[ItemRecord]], items: Sequence[ReaderItem],
                  principles: Mapping[str, str], seed: int, cohort: str = FINAL
                  ) -> pl.DataFrame:
    """The final cohort's (or Table 1's test questions': ``cohort``) answers under each
    labelled principle (``answers[label]``: one record per item of ``items``)."""
    parts = [item_records(answers[label], items, run=seed, system=label,
                          principle_id=principle_id(text), cohort=cohort)
             for label, text in principles.items()]
    return pl.concat(parts) if parts else RECORDS.empty()


def final_scores(records: pl.DataFrame) -> pl.DataFrame:
    """The final cohort's rows of ``records`` in :data:`SCORE_SCHEMA` (``label`` is the
    system, ``seed`` the run)."""
    final = records.filter(pl.col("cohort") == FINAL)
    return final.select(
        pl.col("system").alias("label"), "principle_id", "item_id", "story_id", "group",
        "answer", "gold", pl.col("correct").fill_null(False), "n_options",
        pl.col("run").alias("seed"))


def stage_records(parts: Iterable[pl.DataFrame]) -> pl.DataFrame:
    """Parts (final cohorts, round items read back from the runs) as one records frame."""
    frames = [RECORDS.conform(p) for p in parts if p.height]
    return pl.concat(frames) if frames else RECORDS.empty()


__all__ = ["FINAL", "RECORDS", "SCORE_SCHEMA", "final_records", "final_scores",
           "item_records", "round_records", "stage_records"]
