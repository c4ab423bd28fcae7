"""Scoring learned principles on questions no registration step saw (CogRSI §5.2-5.3, C.2).

- :func:`score_principles`: per-question records of several principles on the same items
  (the final cohort of 300: no principle, the expert principle, the loop's principle).
- :func:`pair_scores`: pair validity of principles on counterfactual pair records.
- :func:`score_test_main` and :func:`bigtom_u_scores`: Table 1's Test Main (the main test
  sample, each benchmark by its own rule) and BigToM-U pair validity.
- :func:`heldout_candidates`: every candidate that reached registration and its incumbent on
  the first 120 questions of the final cohort (Table 5's held-out development questions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from cogrsi_lib.loops.devdata import pair_items
from cogrsi_lib.loops.records import FINAL, final_records
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.pairs.validity import pair_validity
from cogrsi_lib.reader.evaluate import item_score
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import EXPERT_PRINCIPLE, NO_PRINCIPLE, principle_id


def reference_principles() -> dict[str, str]:
    """The two fixed principles every loop is compared with."""
    return {"none": NO_PRINCIPLE, "expert": EXPERT_PRINCIPLE}


def score_principles(scorer: Scorer, items: Sequence[ReaderItem],
                     principles: Mapping[str, str], seed: int = 0) -> pl.DataFrame:
    """One record per (principle label, item) of seed ``seed``'s final cohort, in the loops'
    records (:data:`cogrsi_lib.loops.records.RECORDS`; the answer, whether it is right,
    the calls behind it); :func:`cogrsi_lib.loops.records.final_scores` tabulates them."""
    return cohort_records(scorer, items, principles, seed, FINAL)


#: columns of :func:`pair_scores` (fixed: a split without flip or same pairs keeps its types)
PAIR_SCORE_SCHEMA = {"label": pl.Utf8, "principle_id": pl.Utf8, "n_pairs": pl.Int64,
                     "valid_pairs": pl.Int64, "pair_validity": pl.Float64,
                     "flip_validity": pl.Float64, "same_validity": pl.Float64,
                     "item_accuracy": pl.Float64}


def pair_scores(scorer: Scorer, records: pl.DataFrame, principles: Mapping[str, str]
                ) -> pl.DataFrame:
    """Pair validity and item accuracy of each principle on pair records (one split)."""
    items = pair_items(records)
    rows = []
    every = scorer.answer_many(list(principles.values()), items)
    for (label, text), recs in zip(principles.items(), every, strict=True):
        preds = {(it.meta["pair_id"], it.meta["side"]): r.answer_text
                 for it, r in zip(items, recs, strict=True)}
        pv = pair_validity(records, preds)
        flip = pv.pairs.filter(pl.col("kind") == "flip")
        same = pv.pairs.filter(pl.col("kind") == "same")
        rows.append({"label": label, "principle_id": principle_id(text),
                     "n_pairs": pv.pairs.height, "valid_pairs": int(pv.pairs["valid"].sum()),
                     "pair_validity": 100.0 * float(pv.pairs["valid"].mean()),
                     "flip_validity": 100.0 * float(flip["valid"].mean()) if flip.height
                     else None,
                     "same_validity": 100.0 * float(same["valid"].mean()) if same.height
                     else None,
                     "item_accuracy": 100.0 * float(pv.items["correct"].mean())})
    return pl.DataFrame(rows, schema=PAIR_SCORE_SCHEMA)


#: columns of :func:`score_test_main`
TEST_MAIN_SCHEMA = {"label": pl.Utf8, "benchmark": pl.Utf8, "questions": pl.Int64,
               "score": pl.Float64}


def cohort_records(scorer: Scorer, items: Sequence[ReaderItem], principles: Mapping[str, str],
                   seed: int, cohort: str) -> pl.DataFrame:
    """The loops' records of each principle's answers on ``items`` (``cohort``: which
    questions they are, e.g. Table 1's ``test_main``)."""
    answers = dict(zip(principles, scorer.answer_many(list(principles.values()), items),
                       strict=True))
    return final_records(answers, items, principles, seed, cohort)


def score_test_main(scorer: Scorer, items: Sequence[ReaderItem],
                    principles: Mapping[str, str]) -> pl.DataFrame:
    """Per principle and benchmark (an item's source): the mean score, in points, by the
    benchmark's own rule (:func:`cogrsi_lib.reader.evaluate.item_score`) on the main test
    sample's questions; Table 1's Test Main is the mean over the benchmarks."""
    rows = []
    every = scorer.answer_many(list(principles.values()), list(items))
    for label, recs in zip(principles, every, strict=True):
        by_bench: dict[str, list[float]] = {}
        for it, rec in zip(items, recs, strict=True):
            by_bench.setdefault(str(it.meta["source"]), []).append(item_score(it, rec))
        rows += [{"label": label, "benchmark": name, "questions": len(scores),
                  "score": 100.0 * sum(scores) / len(scores)}
                 for name, scores in by_bench.items()]
    return pl.DataFrame(rows, schema=TEST_MAIN_SCHEMA)


def bigtom_u_scores(scorer: Scorer, items: Sequence[ReaderItem],
                    pairs: Sequence[tuple[str, str, str, str]],
                    principles: Mapping[str, str]) -> pl.DataFrame:
    """Pair validity of each principle on BigToM-U (CogRSI App. G): a pair counts when both
    versions are right by BigToM's rule; flip and same pairs also apart (the columns of
    :func:`pair_scores`)."""
    every = scorer.answer_many(list(principles.values()), list(items))
    rows = []
    for (label, text), recs in zip(principles.items(), every, strict=True):
        right = {it.item_id: item_score(it, rec) == 1.0
                 for it, rec in zip(items, recs, strict=True)}
        valid = {kind: [right[a] and right[b] for _, k, a, b in pairs if k == kind]
                 for kind in ("flip", "same")}
        both = valid["flip"] + valid["same"]
        rows.append({"label": label, "principle_id": principle_id(text),
                     "n_pairs": len(both), "valid_pairs": sum(both),
                     "pair_validity": 100.0 * sum(both) / len(both) if both else None,
                     "flip_validity": _share(valid["flip"]),
                     "same_validity": _share(valid["same"]),
                     "item_accuracy": _share(list(right.values()))})
    return pl.DataFrame(rows, schema=PAIR_SCORE_SCHEMA)


def _share(flags: Sequence[bool]) -> float | None:
    return 100.0 * sum(flags) / len(flags) if flags else None


def heldout_candidates(scorer: Scorer, candidates: pl.DataFrame, rounds: pl.DataFrame,
                       heldout: Sequence[ReaderItem]) -> pl.DataFrame:
    """``candidates`` with the held-out accuracy of each candidate and of its incumbent, the
    held-out gain (points) and ``helps`` (the candidate beats its incumbent there)."""
    items = list(heldout)
    inc = rounds.select("arm", "seed", "round", "incumbent_principle")
    df = candidates.join(inc, on=["arm", "seed", "round"], how="left", maintain_order="left")
    acc: dict[str, float] = {}

    def accuracy(text: str) -> float:
        if text not in acc:
            c = scorer.correct(text, items)
            acc[text] = 100.0 * sum(c) / len(c)
        return acc[text]

    cand_acc = [accuracy(t) for t in df["principle"]]
    inc_acc = [accuracy(t) for t in df["incumbent_principle"]]
    return df.with_columns(
        heldout_n=pl.lit(len(items), dtype=pl.Int64),
        heldout_candidate=pl.Series(cand_acc, dtype=pl.Float64),
        heldout_incumbent=pl.Series(inc_acc, dtype=pl.Float64),
    ).with_columns(
        heldout_gain=pl.col("heldout_candidate") - pl.col("heldout_incumbent"),
    ).with_columns(helps=pl.col("heldout_gain") > 1e-9, hurts=pl.col("heldout_gain") < -1e-9)

