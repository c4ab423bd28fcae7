"""Models × runs (cogrsi_lib/matrix.py): the schema's two ways to name models, the cells, and
the tables per run, over runs and side by side."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib import matrix, stage_params
from cogrsi_lib.stage_params import StageParamsError

FAKE = {"backend": "fake", "reply": {"answer": "A"}}


def test_one_model_is_a_one_model_matrix_and_models_a_list() -> None:
    one = stage_params.load("reader_eval", {"model": FAKE, "runs": 3})
    assert [c.run for c in one.cells()] == [0, 1, 2] and {c.index for c in one.cells()} == {0}
    assert one.model_list() == [one.model]
    other = {"backend": "fake", "reply": {"answer": "B"}}
    two = stage_params.load("reader_eval", {"models": [FAKE, other], "runs": 2})
    assert [(c.index, c.run) for c in two.cells()] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [m.reply for m in two.model_list()] == [{"answer": "A"}, {"answer": "B"}]
    # the unused default model is no model of the run (the checks and servers skip it)
    from cogrsi_lib.stage_check import model_specs

    assert [path for path, _ in model_specs(two, "reader_eval")] == [
        "reader_eval.models[0]", "reader_eval.models[1]"]
    assert [path for path, _ in model_specs(one, "reader_eval")] == ["reader_eval.model"]


@pytest.mark.parametrize("section, says", [
    ({"model": FAKE, "models": [FAKE]}, "not both"),
    ({"models": []}, "'models' is empty"),
    ({"runs": 0}, "runs"),
    ({"models": [{"backend": "fake", "rply": {}}]}, "rply"),
    ({"reader_config": {"run": 1}}, "'runs' numbers the runs"),
])
def test_a_bad_design_is_refused_by_name(section, says) -> None:
    with pytest.raises(StageParamsError, match=says):
        stage_params.load("reader_eval", section)


def test_two_models_of_one_name_are_refused() -> None:
    assert matrix.check_labels(["a", "b"]) == ["a", "b"]
    with pytest.raises(ValueError, match="both named 'a'"):
        matrix.check_labels(["a", "b", "a"])


@given(st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=4), min_size=1, max_size=3))
def test_over_runs_is_the_mean_sd_and_range_of_each_keys_runs(scores) -> None:
    rows = [{"model": "m", "system": f"s{k}", "run": r, "score": x}
            for k, runs in enumerate(scores) for r, x in enumerate(runs)]
    table = matrix.over_runs(pl.DataFrame(rows), ["model", "system"], ["score"])
    assert table["system"].to_list() == [f"s{k}" for k in range(len(scores))]
    for row, runs in zip(table.iter_rows(named=True), scores, strict=True):
        assert row["runs"] == len(runs)
        assert row["score"] == pytest.approx(sum(runs) / len(runs))
        assert (row["score_min"], row["score_max"]) == (min(runs), max(runs))
        if len(runs) == 1:
            assert row["score_sd"] is None
        else:
            mean = sum(runs) / len(runs)
            sd = math.sqrt(sum((x - mean) ** 2 for x in runs) / (len(runs) - 1))
            assert row["score_sd"] == pytest.approx(sd, abs=1e-9)


def test_per_cell_labels_rows_and_side_by_side_puts_models_in_columns() -> None:
    def table(result: float) -> pl.DataFrame:
        return pl.DataFrame({"system": ["a", "b"], "score": [result, 1 - result]})

    cells = [("m1", 0, 0.25), ("m1", 1, 0.75), ("m2", 0, 0.5)]
    stacked = matrix.per_cell(cells, table)
    assert stacked.columns[:2] == ["model", "run"] and stacked.height == 6
    mean = matrix.over_runs(stacked, ["model", "system"], ["score"])
    wide = matrix.side_by_side(mean, ["system"], "score")
    assert wide.columns == ["system", "m1", "m2"]
    assert wide.row(0) == ("a", 0.5, 0.5) and wide.row(1) == ("b", 0.5, 0.5)
    assert matrix.per_cell([("m", 0, 0.0)], lambda _r: pl.DataFrame()).height == 0
    both = matrix.by_model([("m1", table(0.0)), ("m2", pl.DataFrame())])
    assert both["model"].to_list() == ["m1", "m1"]
