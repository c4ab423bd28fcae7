"""A stage's headline numbers as flat metrics: ``reports/<stage>/metrics.json``.

``summary.json`` keeps everything a stage reports (its reply tally, settings, row lists).
DVC reads metrics as flat numbers and drops lists, so ``dvc metrics show`` and
``dvc metrics diff`` read ``metrics.json`` instead: the summary's top-level numbers (and
mappings of numbers, such as counts by condition), and from its row lists the numbers that a
reader compares between runs, one key per row label: each system's accuracy with its
interval and n (every model stage's ``chance`` rows), the official scores per benchmark,
each system's accuracy with its own and with gold perceivers (CogRSI Table 27),
the loops' invalid share per admission rule, the trained model's accuracy and paired
difference per evaluation set, and the audit's count of each verdict.
:func:`cogrsi_lib.pipeline.run_stage` writes it beside the summary when a stage finishes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FILE = "metrics.json"

#: summary keys that are not headline numbers (tallies, settings, per-profile detail)
SKIP = frozenset({"replies", "config", "profiles", "arms"})

#: row lists read as ``{name: {label: {metric: value}}}``: summary key -> (name, label
#: fields joined by "/", row filter, {row field: metric})
ROWS: dict[str, tuple[str, tuple[str, ...], Mapping[str, Any], dict[str, str]]] = {
    "chance": ("systems", ("system", "label", "source"), {},
               {"accuracy": "accuracy", "low": "ci_low", "high": "ci_high", "items": "n"}),
    "gold_perceivers": ("gold_perceivers", ("system", "perceivers", "label", "source"), {},
                        {"all": "accuracy", "gain": "gain", "questions": "n"}),
    "official_scores": ("official", ("benchmark", "protocol"), {},
                        {"score": "score", "questions": "n"}),
    "figure7a": ("admission_rules", ("rule",), {},
                 {"invalid_share": "invalid_share", "kept": "kept"}),
    "comparison": ("base_vs_trained", ("set",), {"stratum": "all"},
                   {"base": "base", "trained": "trained", "diff": "diff", "low": "diff_low",
                    "high": "diff_high", "n": "n"}),
}
#: mappings of labels read as counts of each label: summary key -> name
COUNTS = {"reference_verdicts": "verdicts"}


def _number(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


def headline(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The flat headline metrics of a stage summary (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key in SKIP:
            continue
        if _number(value):
            out[key] = value
        elif isinstance(value, Mapping) and value and all(_number(v) for v in value.values()):
            out[key] = dict(value)
        elif key in COUNTS and isinstance(value, Mapping):
            counts: dict[str, int] = {}
            for label in value.values():
                counts[str(label)] = counts.get(str(label), 0) + 1
            out[COUNTS[key]] = dict(sorted(counts.items()))
        elif key in ROWS and isinstance(value, list):
            name, labels, where, fields = ROWS[key]
            for row in value:
                if not isinstance(row, Mapping) or any(row.get(k) != v
                                                       for k, v in where.items()):
                    continue
                label = "/".join(str(row[f]) for f in labels if row.get(f) is not None)
                got = {name: row[f] for f, name in fields.items() if _number(row.get(f))}
                if label and got:
                    out.setdefault(name, {})[label] = got
    return out


def write_metrics(out_dir: str | Path) -> Path | None:
    """``metrics.json`` from ``out_dir/summary.json``; None when the stage wrote no summary."""
    folder = Path(out_dir)
    summary = folder / "summary.json"
    if not summary.is_file():
        return None
    path = folder / FILE
    path.write_text(json.dumps(headline(json.loads(summary.read_text(encoding="utf-8"))),
                               indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
