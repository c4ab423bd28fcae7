"""Report writers: tables, charts and JSON, deterministic on disk."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import altair as alt
import numpy as np
import polars as pl
import pytest

from cogrsi_lib.reports import markdown_table, save_chart, write_json, write_table


@pytest.fixture
def df() -> pl.DataFrame:
    return pl.DataFrame(
        {"arm": ["base", "loop|v2", None], "acc": [0.5, 0.8125, 2 / 3], "n": [10, 20, 30]}
    )


def test_write_table_csv_and_markdown(tmp_path: Path, df: pl.DataFrame) -> None:
    csv_path, md_path = write_table(df, tmp_path / "sub" / "acc.by_arm", title="Accuracy")

    assert csv_path == tmp_path / "sub" / "acc.by_arm.csv"
    assert md_path == tmp_path / "sub" / "acc.by_arm.md"
    assert pl.read_csv(csv_path).equals(df)

    lines = md_path.read_text().splitlines()
    assert lines[0] == "# Accuracy" and lines[1] == ""
    assert [c.strip() for c in lines[2].strip("|").split("|")] == ["arm", "acc", "n"]
    assert lines[3].startswith("|:--") and lines[3].endswith(":|")  # numbers right-aligned
    assert len(lines) == 7
    body = "\n".join(lines[4:])
    assert "| base" in body and "0.8125" in body and "0.6667" in body
    assert "loop\\|v2" in body  # a pipe inside a cell does not split it


def test_write_table_without_title_is_deterministic(tmp_path: Path, df: pl.DataFrame) -> None:
    _, md1 = write_table(df, tmp_path / "a")
    first = md1.read_bytes()
    _, md2 = write_table(df, tmp_path / "a")
    assert md2.read_bytes() == first
    assert first.startswith(b"| arm") and first.endswith(b"|\n")


def test_markdown_table_empty_frame() -> None:
    text = markdown_table(pl.DataFrame({"a": [], "b": []}, schema={"a": pl.Utf8, "b": pl.Int64}))
    assert text.splitlines()[0].split() == ["|", "a", "|", "b", "|"]


def test_save_chart_svg_and_spec(tmp_path: Path, df: pl.DataFrame) -> None:
    chart = alt.Chart(df.drop_nulls()).mark_bar().encode(x="arm:N", y="acc:Q")
    svg_path, json_path = save_chart(chart, tmp_path / "figs" / "acc")

    assert svg_path == tmp_path / "figs" / "acc.svg"
    assert json_path == tmp_path / "figs" / "acc.vl.json"
    svg = svg_path.read_text()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    spec = json.loads(json_path.read_text())
    assert spec["mark"] in ("bar", {"type": "bar"})
    assert spec["encoding"]["y"]["field"] == "acc"
    assert "vega-lite" in spec["$schema"]

    again = save_chart(chart, tmp_path / "figs" / "acc")
    assert again[0].read_text() == svg and again[1].read_text() == json_path.read_text()


def test_save_chart_png(tmp_path: Path, df: pl.DataFrame) -> None:
    chart = alt.Chart(df.drop_nulls()).mark_point().encode(x="n:Q", y="acc:Q")
    paths = save_chart(chart, tmp_path / "pt", png=True)
    assert [p.name for p in paths] == ["pt.svg", "pt.vl.json", "pt.png"]
    assert paths[2].read_bytes().startswith(b"\x89PNG")


@dataclasses.dataclass
class Verdict:
    rule: str
    passed: bool


def test_write_json_normalises_and_sorts(tmp_path: Path) -> None:
    obj = {
        "b": np.int64(3),
        "a": [np.float64(0.25), math.nan, float("inf")],
        "set": {"y", "x"},
        "path": Path("reports/x"),
        "verdict": Verdict("r1", True),
        "arr": np.arange(3),
        "frame": pl.DataFrame({"k": [1, 2]}),
        1: "int key",
    }
    path = write_json(obj, tmp_path / "deep" / "out.json")
    text = path.read_text()
    assert text.endswith("}\n")
    assert json.loads(text) == {
        "1": "int key",
        "a": [0.25, None, None],
        "arr": [0, 1, 2],
        "b": 3,
        "frame": [{"k": 1}, {"k": 2}],
        "path": "reports/x",
        "set": ["x", "y"],
        "verdict": {"passed": True, "rule": "r1"},
    }
    assert list(json.loads(text)) == sorted(json.loads(text))
    write_json(obj, path)
    assert path.read_text() == text


def test_write_json_rejects_unknown_types(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="cannot write object as JSON"):
        write_json({"x": object()}, tmp_path / "bad.json")


def test_save_chart_large_data(tmp_path: Path) -> None:
    big = pl.DataFrame({"i": list(range(6000))}).with_columns(sq=pl.col("i") ** 2)
    svg_path, json_path = save_chart(
        alt.Chart(big).mark_line().encode(x="i", y="sq"), tmp_path / "b"
    )
    assert svg_path.read_text().startswith("<svg")
    assert len(next(iter(json.loads(json_path.read_text())["datasets"].values()))) == 6000


def test_an_empty_table_says_why_instead_of_a_blank_grid(tmp_path: Path) -> None:
    empty = pl.DataFrame(schema={"rule": pl.Utf8, "n": pl.Int64})
    write_table(empty, tmp_path / "t", title="Kept", why_empty="nothing was admitted.")
    md = (tmp_path / "t.md").read_text()
    assert md == "# Kept\n\nNo rows on this run: nothing was admitted.\n\nColumns: rule, n.\n"
    assert (tmp_path / "t.csv").read_text() == "rule,n\n"
    write_table(empty, tmp_path / "u")
    assert (tmp_path / "u.md").read_text().startswith("No rows on this run.")
    full = pl.DataFrame({"rule": ["a"], "n": [1]})
    write_table(full, tmp_path / "v", why_empty="unused")
    assert "unused" not in (tmp_path / "v.md").read_text()


def test_a_note_chart_is_saved_like_any_figure(tmp_path: Path) -> None:
    from cogrsi_lib.reports import note_chart

    svg, spec = save_chart(note_chart("Trial gain", "no rule records a trial gain " * 5),
                           tmp_path / "note")
    assert "Trial gain" in svg.read_text() and "trial gain" in svg.read_text()
    assert len(json.loads(spec.read_text())["data"]["values"]) >= 2  # wrapped lines


def test_charts_are_laid_out_and_drawn_in_one_named_font(tmp_path: Path, df: pl.DataFrame) -> None:
    """Text is measured in the font the SVG names first, so a viewer that has it draws labels
    at the widths they were laid out with; a chart's own font is kept."""
    from cogrsi_lib.reports import CHART_FONT

    chart = alt.Chart(df).mark_bar().encode(x="a:Q", y="b:N").properties(title="a title")
    svg, spec = save_chart(chart, tmp_path / "named")
    text = svg.read_text(encoding="utf-8")
    assert f'font-family="{CHART_FONT}"' in text and 'font-family="sans-serif"' not in text
    assert json.loads(spec.read_text(encoding="utf-8"))["config"]["font"] == CHART_FONT
    own, _ = save_chart(chart.configure(font="serif"), tmp_path / "own")
    assert 'font-family="serif"' in own.read_text(encoding="utf-8")
