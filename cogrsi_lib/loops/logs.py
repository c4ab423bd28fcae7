"""Round logs as parquet and the saved state a loop resumes from (CogRSI §4.2, App. C.2).

A loop's run folder holds one folder per finished round, ``rounds/r00``, ``rounds/r01``, ...,
each with the round's tables (``rounds``, ``candidates``, ``cohorts``, ``replies`` and
optionally ``items``) as parquet and ``state.json``: the library after the round, the cohort
sampler's position and the loop's settings. ``state.json`` is written last, atomically, so a
round folder without it is an interrupted round and is redone on resume.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

TABLES: dict[str, dict[str, pl.DataType]] = {
    "rounds": {
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "artifact": pl.Utf8,
        "incumbent_id": pl.Utf8, "incumbent_principle": pl.Utf8, "incumbent_size": pl.Int64,
        "discovery_n": pl.Int64, "discovery_correct": pl.Int64, "discovery_accuracy": pl.Float64,
        "trial_n": pl.List(pl.Int64), "trial_correct": pl.List(pl.Int64),
        "trial_accuracy": pl.Float64, "n_failures": pl.Int64, "n_groups": pl.Int64,
        "n_pair_failures": pl.Int64, "n_replies": pl.Int64, "n_rejected": pl.Int64,
        "n_candidates": pl.Int64, "n_admissible": pl.Int64, "admitted": pl.Int64,
        "admitted_operation": pl.Utf8, "admitted_written": pl.Utf8, "new_principle_id": pl.Utf8,
        "new_principle": pl.Utf8, "new_size": pl.Int64, "artifact_json": pl.Utf8,
    },
    "candidates": {
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "candidate": pl.Int64,
        "group": pl.Utf8, "operation": pl.Utf8, "entry": pl.Int64, "condition": pl.Utf8,
        "rule": pl.Utf8, "written": pl.Utf8, "principle": pl.Utf8, "principle_id": pl.Utf8,
        "incumbent_id": pl.Utf8, "diagnosis": pl.Utf8, "gains": pl.List(pl.Float64),
        "mean_gain": pl.Float64, "nonneg_cohorts": pl.Int64, "passes_margin": pl.Boolean,
        "passes_cohorts": pl.Boolean, "gates_run": pl.Boolean, "passes_gates": pl.Boolean,
        "gate_gain": pl.Float64, "gates_json": pl.Utf8, "shadow_gates_json": pl.Utf8,
        "shadow_gate_passed": pl.Boolean, "shadow_gate_gain": pl.Float64, "admissible": pl.Boolean,
        "admitted": pl.Boolean, "reason": pl.Utf8,
    },
    "cohorts": {
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "cohort": pl.Utf8,
        "role": pl.Utf8, "candidate": pl.Int64, "principle_id": pl.Utf8, "n": pl.Int64,
        "correct": pl.Int64, "accuracy": pl.Float64, "item_ids": pl.List(pl.Utf8),
    },
    "replies": {
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "reply": pl.Int64,
        "group": pl.Utf8, "group_size": pl.Int64, "status": pl.Utf8, "reason": pl.Utf8,
        "detail": pl.Utf8, "diagnosis": pl.Utf8, "text": pl.Utf8, "shown": pl.List(pl.Utf8),
        "candidate": pl.Int64, "prompt_tokens": pl.Int64, "completion_tokens": pl.Int64,
        "finish_reason": pl.Utf8,
    },
}


def frame(table: str, rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows as a frame with the table's fixed schema (missing keys are null)."""
    schema = TABLES[table]
    extra = {k for r in rows for k in r} - set(schema)
    if extra:
        raise ValueError(f"{table}: unknown columns {sorted(extra)}")
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema,
                        orient="row") if rows else pl.DataFrame(schema=schema)


def round_dir(run_dir: str | Path, r: int) -> Path:
    return Path(run_dir) / "rounds" / f"r{r:02d}"


def write_json_atomic(obj: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(obj, fh, ensure_ascii=False, sort_keys=True, indent=1)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_round(run_dir: str | Path, r: int, tables: Mapping[str, pl.DataFrame],
                state: Mapping[str, Any]) -> Path:
    """Write one finished round: its tables, then its state (the completion mark)."""
    d = round_dir(run_dir, r)
    d.mkdir(parents=True, exist_ok=True)
    stale = d / "state.json"
    if stale.exists():
        stale.unlink()
    for name, df in tables.items():
        df.write_parquet(d / f"{name}.parquet")
    write_json_atomic(dict(state), d / "state.json")
    return d


def finished_rounds(run_dir: str | Path) -> list[int]:
    """Rounds 0..k-1 that are complete, in order (stops at the first gap)."""
    out = []
    r = 0
    while (round_dir(run_dir, r) / "state.json").is_file():
        out.append(r)
        r += 1
    return out


def read_state(run_dir: str | Path, r: int) -> dict[str, Any]:
    return json.loads((round_dir(run_dir, r) / "state.json").read_text(encoding="utf-8"))


def read_table(run_dir: str | Path, table: str, rounds: Sequence[int] | None = None
               ) -> pl.DataFrame:
    """One table over the finished rounds (all of them by default)."""
    rs = finished_rounds(run_dir) if rounds is None else list(rounds)
    parts = [pl.read_parquet(p) for r in rs
             if (p := round_dir(run_dir, r) / f"{table}.parquet").is_file()]
    if not parts:
        return pl.DataFrame(schema=TABLES[table]) if table in TABLES else pl.DataFrame()
    return pl.concat(parts, how="diagonal_relaxed")
