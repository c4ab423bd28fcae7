"""The records viewer: filters, rendering and the CLI, on every model stage's records."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from stage_records import stage_records
from typer.testing import CliRunner

from cogrsi_lib.cli import app
from cogrsi_lib.records import RecordsError, filter_records, load_records, render_record
from cogrsi_lib.records_schema import CORE, STAGES, stage_schema


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every stage's records as ``records.parquet`` files."""
    paths = {}
    for stage in STAGES:
        folder = tmp_path_factory.mktemp(stage)
        paths[stage] = stage_schema(stage).write(stage_records(stage), folder)
    return paths


@pytest.mark.parametrize("stage", STAGES)
def test_shows_every_stage_the_same_way_core_first(stage, written):
    path = written[stage]
    frame = load_records(path)
    system = frame["system"][0]
    n = frame.filter(pl.col("system") == system).height
    result = CliRunner().invoke(app, ["records", "show", str(path), "-f", f"system={system}",
                                      "-n", "2"])
    assert result.exit_code == 0, result.output
    assert f"{n} of {frame.height} records match; showing {min(2, n)} from 0" in result.output
    assert result.output.count("--- record ") == min(2, n)
    first = result.output.split("--- record ")[1]
    names = [line.split(":")[0] for line in first.splitlines()[1:]
             if line and not line.startswith(" ")]
    core = [c for c in names if c in CORE]
    # the core columns lead, in their declared order; the stage's own follow
    assert names[:len(core)] == core == [c for c in CORE if c in core]
    assert {"stage", "system", "item_id", "prompt", "reply", "parse_status", "calls"} <= set(core)
    # the prompt's messages and the replies are laid out verbatim, under their call
    row = frame.filter(pl.col("system") == system).row(0, named=True)
    call, messages = next(iter(json.loads(row["prompt"]).items()))
    assert f"[{call}] {messages[-1]['role']}" in first
    assert messages[-1]["content"].splitlines()[0] in first


def test_a_reader_record_has_its_item_text_samples_and_costs(written):
    result = CliRunner().invoke(app, ["records", "show", str(written["reader_eval"]),
                                      "-f", "system=cogrsi", "-f", "source=pairs", "-n", "1"])
    assert result.exit_code == 0, result.output
    for field in ("story:", "question:", "options_json:", "samples_json:", "parse_status: ",
                  "answer: ", "gold: ", "calls: ", "completion_tokens: "):
        assert field in result.output, field
    out = result.output
    assert out.index("prompt:") < out.index("reply:") < out.index("gold: ")
    assert out.index("gold: ") < out.index("completion_tokens: ") < out.index("samples_json")


def test_json_lines_decode_the_json_columns(written):
    result = CliRunner().invoke(app, ["records", "show", str(written["reader_eval"]), "--json",
                                      "-n", "3", "-c", "item_id,samples_json,prompt,correct"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == 3 and set(rows[0]) == {"item_id", "samples_json", "prompt", "correct"}
    assert isinstance(rows[0]["samples_json"], list) and "status" in rows[0]["samples_json"][0]
    assert all(isinstance(m, dict) for msgs in rows[0]["prompt"].values() for m in msgs)


def test_numeric_and_boolean_filters_on_a_stage(written):
    frame = load_records(written["pddl_mind"])
    for spec, expected in (("calls>=3", frame), ("calls<3", frame.head(0)),
                           ("correct=TRUE", frame.filter(pl.col("correct"))),
                           ("correct=False", frame.filter(~pl.col("correct"))),
                           ("score<1", frame.filter(pl.col("score") < 1))):
        result = CliRunner().invoke(app, ["records", "show", str(written["pddl_mind"]),
                                          "-f", spec, "-n", "0"])
        assert result.exit_code == 0, result.output
        assert f"{expected.height} of {frame.height} records match" in result.output, spec


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


def test_prompt_and_reply_are_laid_out_as_written():
    row = {"item_id": "x", "text": '{"a": 1}',
           "reply": json.dumps({"answer": ['{"answer": "B"}', "line 1\nline 2"]}),
           "prompt": json.dumps({"answer": [{"role": "system", "content": "Be brief."},
                                            {"role": "user", "content": "Q?\nA. box"}]})}
    out = render_record(row)
    assert "prompt:\n    [answer] system\n      Be brief.\n    [answer] user\n      Q?\n" in out
    assert ('    [answer 0]\n      {"answer": "B"}\n'
            '    [answer 1]\n      line 1\n      line 2') in out
    # a column that is not declared JSON is shown as it is, even when it looks like JSON
    assert 'text: {"a": 1}' in out
    assert out.index("item_id") < out.index("prompt:") < out.index("reply:") < out.index("text:")


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


def test_options_are_shown_with_the_letters_they_are_asked_by():
    text = render_record({"question": "Where?", "options_json": '["box", "basket", "bag"]'})
    assert "options_json:\n    A. box\n    B. basket\n    C. bag" in text
    many = render_record({"options_json": json.dumps([str(i) for i in range(28)])})
    assert "    Z. 25\n    AA. 26\n    AB. 27" in many
