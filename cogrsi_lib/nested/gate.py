"""Benchmark-integrity checks of a generated item set (plan §16 Gate A, §5.7).

Each check is recomputed from the structured worlds by the oracle, not read from the
items' stored fields: the oracle scores 100% at every depth, adversarial items differ
from reality and every shallower prefix, true-belief items equal reality, every cell is
full, and no shortcut heuristic reaches ``limit`` accuracy on an adversarial partition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from cogrsi_lib.nested.baselines import best_shortcut
from cogrsi_lib.nested.curve import ORACLE
from cogrsi_lib.nested.facts import ADVERSARIAL, TRUE_BELIEF
from cogrsi_lib.nested.heuristics import oracle_answer
from cogrsi_lib.nested.items import Generation, NestedItem

SHORTCUT_LIMIT = 0.5


class IntegrityError(AssertionError):
    """A generated item set fails a Gate A check."""


def integrity_table(
    gen: Generation, baselines: pl.DataFrame, curves: pl.DataFrame,
    limit: float = SHORTCUT_LIMIT,
) -> pl.DataFrame:
    """One row per check: name, value, requirement, passed."""
    items = gen.items
    rows = []

    def put(name: str, value: float, need: str, passed: bool) -> None:
        rows.append({"check": name, "value": float(value), "requirement": need,
                     "passed": bool(passed)})

    oracle = curves.filter(pl.col("predictor") == ORACLE)["accuracy"]
    put("oracle accuracy (min over depths and subsets)", oracle.min(), "== 1", oracle.min() == 1)
    put("stored gold == oracle answer", _share(items, _stored), "== 1",
        all(_stored(it) for it in items))
    adv = [it for it in items if it.partition == ADVERSARIAL]
    tb = [it for it in items if it.partition == TRUE_BELIEF]
    put("adversarial: answer != reality", _share(adv, _differs_from_reality), "== 1",
        all(_differs_from_reality(it) for it in adv))
    put("adversarial: answer != every shallower prefix", _share(adv, _differs_from_prefixes),
        "== 1", all(_differs_from_prefixes(it) for it in adv))
    put("true belief: answer == reality", _share(tb, _equals_reality), "== 1",
        all(_equals_reality(it) for it in tb))
    short = min(gen.cell_counts().values()) / gen.config.n_per_cell
    put("cells filled (min share of n_per_cell)", short, "== 1", short == 1)
    best = best_shortcut(baselines, ADVERSARIAL)
    top = best["best_heuristic_accuracy"].max() if best.height else 0.0
    put("best shortcut accuracy on adversarial partitions (max over depths)", top,
        f"< {limit}", top < limit)
    return pl.DataFrame(rows)


def require(table: pl.DataFrame) -> None:
    """Raise :class:`IntegrityError` naming every failed check."""
    failed = table.filter(~pl.col("passed"))["check"].to_list()
    if failed:
        raise IntegrityError(f"Gate A checks failed: {failed}")


def _gold(it: NestedItem) -> str:
    return oracle_answer(it.world, it.chain)


def _stored(it: NestedItem) -> bool:
    return it.gold == _gold(it)


def _differs_from_reality(it: NestedItem) -> bool:
    return _gold(it) != oracle_answer(it.world, ())


def _differs_from_prefixes(it: NestedItem) -> bool:
    gold = _gold(it)
    return all(gold != oracle_answer(it.world, it.chain[:j]) for j in range(1, it.depth))


def _equals_reality(it: NestedItem) -> bool:
    return _gold(it) == oracle_answer(it.world, ())


def _share(items: Sequence[NestedItem], test: Callable[[NestedItem], bool]) -> float:
    return sum(map(test, items)) / len(items) if items else 1.0
