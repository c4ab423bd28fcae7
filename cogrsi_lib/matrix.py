"""Models × runs: a model stage's design as the papers run it.

CogRSI reports every system as the mean of three runs per backbone (§5.1, Tables 3, 20 and
23), PDDL-Mind compares backbones (Table 2) and Actio five models (Table 10). A stage whose
schema is a :class:`MatrixParams` takes ``models:`` (a list of model specs) and ``runs:`` (how
many times each is run); a single ``model:`` stays valid as a one-model matrix. Each cell
(model, run) is evaluated on its own and its records carry ``model`` and ``run``
(:mod:`cogrsi_lib.records_schema`). :func:`per_cell` stacks a table of every cell with those
two columns (the per-run rows), :func:`by_model` a table of each model; :func:`over_runs`
gives each model's mean, run-to-run SD and range, and :func:`side_by_side` puts the models
in columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

import polars as pl
from pydantic import PositiveInt, field_validator, model_validator

from cogrsi_lib.llm.spec import RealModel
from cogrsi_lib.stage_params import ModelStageParams

__all__ = ["Cell", "GreedyMatrixParams", "MatrixParams", "by_model", "check_labels",
           "over_runs", "per_cell", "side_by_side"]


class Cell(NamedTuple):
    """One cell of the design: the model (its spec and position in ``models``) and the run."""

    index: int
    spec: Any
    run: int


class MatrixParams(ModelStageParams):
    """A model stage run over ``models`` × ``runs`` (its ``model`` is the one-model matrix)."""

    models: list[RealModel] | None = None
    runs: PositiveInt = 1

    @model_validator(mode="after")
    def _model_or_models(self) -> MatrixParams:
        if self.models is None:
            return self
        if "model" in self.model_fields_set:
            raise ValueError("give 'model' (one model) or 'models' (a list), not both")
        if not self.models:
            raise ValueError("'models' is empty: name at least one model")
        return self

    def inactive_fields(self) -> set[str]:
        """Fields that name no model of the run: ``model`` (its default) beside ``models``."""
        return {"model"} if self.models is not None else set()

    def model_list(self) -> list[Any]:
        """The models of the design, in order."""
        return list(self.models) if self.models is not None else [self.model]

    def cells(self, runs: int | None = None) -> list[Cell]:
        """Every (model, run), model by model; ``runs`` (at least the stage's) for a system
        that runs more often than the others (CogRSI-L: one run per loop seed)."""
        n = max(self.runs, runs or 0)
        return [Cell(i, spec, run) for i, spec in enumerate(self.model_list())
                for run in range(n)]


class GreedyMatrixParams(MatrixParams):
    """A :class:`MatrixParams` stage whose calls are all greedy: a second run would ask the
    same requests again, so ``runs`` is 1 and the design is its ``models``. ``GREEDY`` says
    what is greedy, in the stage's words."""

    GREEDY: ClassVar[str] = "the stage's calls are greedy"

    @field_validator("runs")
    @classmethod
    def _one_run(cls, runs: int) -> int:
        if runs != 1:
            raise ValueError(f"{cls.GREEDY}: a second run would ask the same requests again; "
                             "name more models instead")
        return runs


def check_labels(labels: Sequence[str]) -> list[str]:
    """The models' names as their backends give them; two models of one name are refused
    (their rows could not be told apart)."""
    seen = [x for i, x in enumerate(labels) if x in labels[:i]]
    if seen:
        raise ValueError(f"two models of the design are both named {seen[0]!r}: their rows "
                         "could not be told apart")
    return list(labels)


def per_cell(cells: Sequence[tuple[str, int, Any]],
             table: Callable[[Any], pl.DataFrame]) -> pl.DataFrame:
    """``table`` of each cell's result, ``(model, run, result)``, stacked with the cell's
    ``model`` and ``run`` as the first columns (an empty table adds no rows)."""
    parts = []
    for model, run, result in cells:
        t = table(result)
        if t.height:
            parts.append(t.select(pl.lit(model).alias("model"),
                                  pl.lit(run, dtype=pl.Int64).alias("run"), pl.all()))
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def by_model(parts: Sequence[tuple[str, pl.DataFrame]]) -> pl.DataFrame:
    """Each model's table, ``(model, table)``, stacked with ``model`` as the first column."""
    frames = [t.select(pl.lit(m).alias("model"), pl.all()) for m, t in parts if t.height]
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def over_runs(table: pl.DataFrame, keys: Sequence[str], values: Sequence[str]) -> pl.DataFrame:
    """Per ``keys`` (with ``model``): ``runs``, and for each of ``values`` its mean over the
    runs (under its own name), run-to-run SD (``<value>_sd``, sample SD, null for one run)
    and range (``<value>_min``, ``<value>_max``); rows in the order they first appear."""
    if table.height == 0:
        return table
    keys = list(keys)
    aggs: list[pl.Expr] = [pl.col("run").n_unique().alias("runs")]
    for v in values:
        aggs += [pl.col(v).mean().alias(v), pl.col(v).std(ddof=1).alias(f"{v}_sd"),
                 pl.col(v).min().alias(f"{v}_min"), pl.col(v).max().alias(f"{v}_max")]
    return table.group_by(keys, maintain_order=True).agg(aggs)


def side_by_side(table: pl.DataFrame, rows: Sequence[str], value: str) -> pl.DataFrame:
    """``value`` with one column per model (the models side by side), one row per ``rows``."""
    if table.height == 0:
        return table
    return table.pivot(on="model", index=list(rows), values=value, aggregate_function=None,
                       maintain_order=True)
