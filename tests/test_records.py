"""The records viewer: filters, rendering and the CLI, on a committed stage output."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from cogrsi_lib.cli import app
from cogrsi_lib.records import RecordsError, filter_records, load_records, render_record

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reader_items(tmp_path_factory) -> Path:
    """reports/reader_eval/items.parquet as dvc.lock records it (the in-repo DVC remote)."""
    from dvc.api import DVCFileSystem

    dest = tmp_path_factory.mktemp("reader_eval") / "items.parquet"
    DVCFileSystem(str(ROOT)).get_file("reports/reader_eval/items.parquet", str(dest))
    return dest


def test_shows_a_real_stage_output_with_its_item_text(reader_items):
    frame = load_records(reader_items)
    system = frame["system"][0]
    result = CliRunner().invoke(app, ["records", "show", str(reader_items),
                                      "-f", f"system={system}", "-f", "source=pairs", "-n", "2"])
    assert result.exit_code == 0, result.output
    n = frame.filter((pl.col("system") == system) & (pl.col("source") == "pairs")).height
    assert f"{n} of {frame.height} records match; showing 2 from 0" in result.output
    assert result.output.count("--- record ") == 2
    for field in ("story:", "question:", "options_json:", "samples_json:", "status: ",
                  "answer: ", "gold: ", "calls: ", "completion_tokens: "):
        assert field in result.output, field
    # the leading fields come before the rest
    out = result.output
    assert out.index("story:") < out.index("question:") < out.index("gold: ")
    assert out.index("gold: ") < out.index("completion_tokens: ") < out.index("perception_json")


def test_json_lines_decode_the_json_columns(reader_items):
    result = CliRunner().invoke(app, ["records", "show", str(reader_items), "--json", "-n", "3",
                                      "-c", "item_id,samples_json,correct"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == 3 and set(rows[0]) == {"item_id", "samples_json", "correct"}
    assert isinstance(rows[0]["samples_json"], list) and "status" in rows[0]["samples_json"][0]


FRAME = pl.DataFrame({"id": ["a", "b", "c", "d"], "ok": [True, False, True, None],
                      "text": ["red box", "blue box", None, "red chest"],
                      "score": [1.0, 0.0, 0.5, None], "n": [0, 1, 2, 3],
                      "extra_json": ['{"k": [1, 2]}', "[]", "{bad", None]})


@pytest.mark.parametrize(("filters", "ids"), [
    (["ok=true"], ["a", "c"]),
    (["ok=True"], ["a", "c"]),
    (["ok=FALSE"], ["b"]),
    (["ok=false"], ["b"]),
    (["ok=null"], ["d"]),
    (["ok!=true"], ["b", "d"]),
    (["ok!=True"], ["b", "d"]),
    (["text~red"], ["a", "d"]),
    (["text~red", "ok=true"], ["a"]),
    (["text=blue box"], ["b"]),
    (["id!=a", "id!=b"], ["c", "d"]),
    (["score<1"], ["b", "c"]),
    (["score<=1"], ["a", "b", "c"]),
    (["score>0"], ["a", "c"]),
    (["score>=0.5"], ["a", "c"]),
    (["score=1"], ["a"]),
    (["score=1.0"], ["a"]),
    (["score!=1"], ["b", "c", "d"]),
    (["score=null"], ["d"]),
    (["n>-1", "n<=2"], ["a", "b", "c"]),
])
def test_filters(filters, ids):
    assert filter_records(FRAME, filters)["id"].to_list() == ids


@pytest.mark.parametrize(("spec", "message"), [
    ("nope=1", "no column 'nope'"), ("id", "expected COL=VALUE"), ("=x", "expected COL=VALUE"),
    ("text<3", "'text' is not numeric"), ("ok>0", "'ok' is not numeric"),
    ("score<high", "'high' is not a number"), ("ok=yes", "'ok' is boolean"),
])
def test_bad_filters_are_named(spec, message):
    with pytest.raises(RecordsError, match=message):
        filter_records(FRAME, [spec])


@given(st.lists(st.one_of(st.none(), st.integers(-50, 50)), max_size=30),
       st.integers(-60, 60), st.sampled_from(["<", "<=", ">", ">=", "=", "!="]))
def test_numeric_filters_agree_with_comparing_numbers(values, bound, op):
    frame = pl.DataFrame({"x": values}, schema={"x": pl.Int64}).with_row_index("i")
    compare = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__,
               "=": int.__eq__, "!=": int.__ne__}[op]
    # a missing value passes no comparison but "!=" (it is not equal to any number)
    expected = [i for i, v in enumerate(values)
                if (compare(v, bound) if v is not None else op == "!=")]
    assert filter_records(frame, [f"x{op}{bound}"])["i"].to_list() == expected


def test_render_decodes_json_and_keeps_text_that_is_not_json():
    first = render_record(FRAME.row(0, named=True))
    assert "extra_json:\n    {\n      \"k\": [" in first
    assert render_record(FRAME.row(2, named=True)).count("text") == 0  # empty fields left out
    assert "extra_json: {bad" in render_record(FRAME.row(2, named=True))
    assert render_record(FRAME.row(3, named=True), ["id", "ok"]) == "id: d\nok: None"


def test_text_that_looks_like_json_is_shown_as_written():
    # only JSON columns are decoded: a model's reply that is JSON stays as the model wrote it
    row = {"id": "x", "text": '{"a":  1}', "extra_json": '{"a":  1}'}
    out = render_record(row)
    assert 'text: {"a":  1}' in out and 'extra_json:\n    {\n      "a": 1\n    }' in out


def test_unreadable_inputs_fail_clearly(tmp_path):
    with pytest.raises(RecordsError, match="no records file"):
        load_records(tmp_path / "missing.parquet")
    (tmp_path / "x.txt").write_text("a")
    with pytest.raises(RecordsError, match="not a records file"):
        load_records(tmp_path / "x.txt")
    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(RecordsError, match="cannot be read as parquet"):
        load_records(tmp_path / "broken.parquet")
    result = CliRunner().invoke(app, ["records", "show", str(tmp_path / "missing.parquet")])
    assert result.exit_code == 2 and "no records file" in result.output
