"""Write report artifacts (tables, charts, JSON) deterministically.

Every writer takes a path *stem* (no suffix) or a full path, creates parent directories and
writes byte-identical files for identical inputs (no timestamps, sorted JSON keys), so DVC
outputs are reproducible.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import vl_convert as vlc
from pydantic import BaseModel
from tabulate import tabulate

__all__ = ["markdown_table", "save_chart", "write_json", "write_replies", "write_table"]

#: the charts' font, named so that text is laid out with the widths it is drawn with: vega
#: measures labels with the first family it finds, and an SVG viewer (a browser, rsvg-convert)
#: falls back to a generic sans-serif of other widths, which clips legends and titles when it
#: is wider; DejaVu Sans is the widest common one, so a narrower fallback only leaves room
CHART_FONT = "DejaVu Sans, Verdana, sans-serif"


def _with_suffix(stem: str | Path, suffix: str) -> Path:
    stem = Path(stem)
    return stem.with_name(stem.name + suffix)


def _cell(value: Any, floatfmt: str) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return format(value, floatfmt)
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pl.DataFrame, floatfmt: str = ".4g") -> str:
    """GitHub markdown (pipe) table: numbers right-aligned, floats as `floatfmt`, nulls empty."""
    align = ["right" if dtype.is_numeric() else "left" for dtype in df.dtypes]
    rows = [[_cell(v, floatfmt) for v in row] for row in df.rows()]
    return tabulate(
        rows, headers=df.columns, tablefmt="pipe", disable_numparse=True, colalign=align or None
    )


def write_table(
    df: pl.DataFrame, stem: str | Path, title: str | None = None, floatfmt: str = ".4g",
    why_empty: str | None = None,
) -> tuple[Path, Path]:
    """Write `stem.csv` (full precision) and `stem.md` (markdown, optional `# title`). A
    table without rows is never left blank: its markdown says so, with `why_empty`, the
    reason the run could not fill it (the CSV keeps the header)."""
    csv_path, md_path = _with_suffix(stem, ".csv"), _with_suffix(stem, ".md")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    df.write_csv(csv_path)
    heading = f"# {title}\n\n" if title else ""
    if df.height:
        body = markdown_table(df, floatfmt)
    else:
        body = "No rows on this run" + (f": {why_empty.rstrip('.')}." if why_empty else ".")
        body += f"\n\nColumns: {', '.join(df.columns)}." if df.columns else ""
    md_path.write_text(heading + body + "\n", encoding="utf-8")
    return csv_path, md_path


def note_chart(title: str, note: str, width: int = 420) -> alt.Chart:
    """A chart that states why its figure could not be drawn on this run (so every declared
    plot exists, and says what is missing)."""
    lines = textwrap.wrap(note, 60)
    data = alt.Data(values=[{"line": line, "y": i} for i, line in enumerate(lines)])
    return (alt.Chart(data, title=title)
            .mark_text(align="left", baseline="top", fontSize=13, x=10)
            .encode(y=alt.Y("y:O", axis=None), text="line:N")
            .properties(width=width, height=22 * len(lines)))


def _vl_version(spec: Mapping[str, Any]) -> str | None:
    """The vl-convert version matching the spec's `$schema`, when vl-convert has it."""
    match = re.search(r"/vega-lite/v(\d+)\.(\d+)", str(spec.get("$schema", "")))
    if match is None:
        return None
    version = f"{match[1]}.{match[2]}"
    return version if version in vlc.get_vegalite_versions() else None


def save_chart(
    chart: alt.TopLevelMixin, stem: str | Path, png: bool = False, scale: float = 2.0
) -> tuple[Path, ...]:
    """Write `stem.svg` and `stem.vl.json` (and `stem.png` if asked), rendered offline.

    The data is embedded in the spec whatever its size (altair's 5,000-row limit is lifted).
    """
    with alt.data_transformers.disable_max_rows():
        spec = chart.to_dict()
    spec.setdefault("config", {}).setdefault("font", CHART_FONT)
    svg_path, json_path = _with_suffix(stem, ".svg"), _with_suffix(stem, ".vl.json")
    svg_path.parent.mkdir(parents=True, exist_ok=True)
    version = _vl_version(spec)
    svg_path.write_text(vlc.vegalite_to_svg(spec, vl_version=version), encoding="utf-8")
    write_json(spec, json_path)
    paths: tuple[Path, ...] = (svg_path, json_path)
    if png:
        png_path = _with_suffix(stem, ".png")
        png_path.write_bytes(vlc.vegalite_to_png(spec, vl_version=version, scale=scale))
        paths += (png_path,)
    return paths


def show_chart(chart: alt.TopLevelMixin, stem: str | Path) -> Any:
    """:func:`save_chart`, then the saved SVG for inline display: unlike altair's own HTML
    output (which embeds a random element id) it is the same bytes on every run."""
    from IPython.display import SVG

    return SVG(filename=str(save_chart(chart, stem)[0]))


def _jsonable(obj: Any) -> Any:
    """Plain JSON data: NaN/inf become null, sets are sorted, numpy/polars/dataclasses and
    pydantic models unpacked."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, str | int | bool):
        return obj
    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, set | frozenset):
        return sorted((_jsonable(v) for v in obj), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return obj.as_posix()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _jsonable(dataclasses.asdict(obj))
    if isinstance(obj, BaseModel):  # typed settings (cogrsi_lib/settings.py)
        return _jsonable(obj.model_dump())
    if isinstance(obj, pl.DataFrame):
        return _jsonable(obj.to_dicts())
    if isinstance(obj, pl.Series):
        return _jsonable(obj.to_list())
    if hasattr(obj, "tolist"):  # numpy arrays and scalars
        return _jsonable(obj.tolist())
    if hasattr(obj, "isoformat"):  # dates and times
        return obj.isoformat()
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")


def write_json(obj: Any, path: str | Path) -> Path:
    """Write `obj` as indented JSON with sorted keys and a trailing newline."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_jsonable(obj), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")
    return path


REPLIES_TITLE = ("Replies by prompt family: calls, how many the backend constrained, parse rate "
                 "against the declared format, share that hit the token cap, mean reply tokens; "
                 "then the silent-failure checks: requests that failed (first reason), "
                 "multi-sample requests at temperature > 0 with all samples identical, replies "
                 "with thinking text, replies without server-reported usage")


def write_replies(tally: Any, stem: str | Path, max_failed_share: float = 0.05) -> pl.DataFrame:
    """The stage's per-family reply table (a :class:`~cogrsi_lib.llm.tally.ReplyTally`) as
    ``stem.csv``/``stem.md``; returns it. Then fails the stage (raises) when every request
    failed or more than ``max_failed_share`` of them did: the table is kept with the failed
    run for inspection (:func:`cogrsi_lib.pipeline.run_stage`), never published."""
    df = tally.frame()
    write_table(df, stem, title=REPLIES_TITLE)
    tally.check_failures(max_failed_share)
    return df
