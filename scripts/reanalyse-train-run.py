"""Re-derive a finished train run's comparison tables and figures from its records.

The long configuration's run (``params.train-long.yaml``, outputs in ``reports/train-long``,
kept with ``dvc add``) took about 100 minutes on 2 cores. When the train stage's analysis
changes (statistics, tables, figures), this applies the current analysis to that run's saved
records, as the train notebook's analysis cells do, without training or asking the models
again: ``base_vs_trained``, ``parse_rates``, ``transfer`` and their figure, and the
comparison in ``summary.json``. Then ``dvc add reports/train-long && dvc push``.

    python scripts/reanalyse-train-run.py [--params params.train-long.yaml] \
        [--run reports/train-long]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl
import yaml

from cogrsi_lib import stage_params
from cogrsi_lib.reports import save_chart, write_json, write_table
from cogrsi_lib.train import compare, report

#: columns of records written before the shared record schema (cogrsi_lib/records_schema.py)
LEGACY = {"model": "system", "set": "source", "status": "parse_status"}


def current_columns(records: pl.DataFrame) -> pl.DataFrame:
    """Records under today's column names (a run saved before the shared schema used
    ``model``/``set``/``status`` for the system, source and parse status)."""
    if "system" in records.columns:
        return records
    return records.rename({old: new for old, new in LEGACY.items() if old in records.columns})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--params", default="params.train-long.yaml")
    parser.add_argument("--run", default="reports/train-long")
    args = parser.parse_args()
    out = Path(args.run)
    section = yaml.safe_load(Path(args.params).read_text(encoding="utf-8"))["train"]
    p = stage_params.load("train", section)
    records = current_columns(pl.read_parquet(out / "records.parquet"))
    table = compare.compare(records, n_resamples=p.bootstrap_resamples, seed=p.eval_seed)
    write_table(table, out / "base_vs_trained",
                title="Base vs trained: accuracy and paired difference")
    save_chart(report.comparison_chart(table), out / "base_vs_trained")
    write_table(compare.parse_rates(records), out / "parse_rates",
                title="Replies that parsed, per model and set")
    write_table(report.transfer_summary(table), out / "transfer",
                title="Where training helps (Benjamini-Hochberg over all rows; underpowered "
                      "rows never count)")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary["comparison"] = table.to_dicts()
    write_json(summary, out / "summary.json")
    print(f"{out}: {table.height} comparison rows re-derived from {records.height} records")


if __name__ == "__main__":
    main()
