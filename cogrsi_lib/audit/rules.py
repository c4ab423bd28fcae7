"""Where the audited rule texts come from (CogRSI App. C J105: the audited population).

The paper audits every candidate that reached registration in four loop arms, each the
entry an add or revise writes, or a whole single principle.  A rules source is either
``handwritten`` (:mod:`cogrsi_lib.audit.handwritten`, with known verdicts) or a file of
candidates (parquet, jsonl or csv) with at least ``rule_id`` and ``text``; the optional
columns ``arm``, ``seed``, ``round``, ``admitted`` and ``trial_gain`` feed the tables by
arm and the trial-gain figure. The loops stage writes its candidates in this form
(``reports/loops/audit_candidates.parquet``). Several sources are audited together, each
rule under its own arm; a rule id given twice is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from cogrsi_lib.audit.handwritten import RULES

RULE_SCHEMA = {
    "rule_id": pl.Utf8, "text": pl.Utf8, "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64,
    "admitted": pl.Boolean, "trial_gain": pl.Float64, "expected": pl.Utf8,
}  # fmt: skip
HANDWRITTEN_ARM = "hand-written"
#: the rules source that names the hand-written rules
HANDWRITTEN = "handwritten"


def handwritten_rules() -> pl.DataFrame:
    return pl.DataFrame(
        [{"rule_id": r.rule_id, "text": r.text, "arm": HANDWRITTEN_ARM, "seed": None,
          "round": None, "admitted": None, "trial_gain": None, "expected": r.expected}
         for r in RULES],
        schema=RULE_SCHEMA,
    )


def read_rules(path: str | Path) -> pl.DataFrame:
    """A candidates file in the :data:`RULE_SCHEMA` columns (missing optional ones are null)."""
    path = Path(path)
    if path.suffix == ".parquet":
        df = pl.read_parquet(path)
    elif path.suffix in (".jsonl", ".ndjson"):
        df = pl.read_ndjson(path)
    elif path.suffix == ".csv":
        df = pl.read_csv(path)
    else:
        raise ValueError(f"rules file {path} must be .parquet, .jsonl or .csv")
    missing = {"rule_id", "text"} - set(df.columns)
    if missing:
        raise ValueError(f"rules file {path} lacks column(s) {sorted(missing)}")
    cols = []
    for name, dtype in RULE_SCHEMA.items():
        col = pl.col(name) if name in df.columns else pl.lit(None)
        cols.append(col.cast(dtype).alias(name))
    out = df.select(cols).with_columns(pl.col("arm").fill_null("unknown"))
    if out["rule_id"].n_unique() != out.height:
        raise ValueError(f"rules file {path} repeats a rule_id")
    return out


def _load_one(source: str, root: str | Path | None) -> pl.DataFrame:
    if source == HANDWRITTEN:
        return handwritten_rules()
    path = Path(source)
    if not path.is_absolute() and root is not None:
        path = Path(root) / path
    if not path.is_file():
        raise FileNotFoundError(f"rules file {source} not found (at {path}); the loops stage "
                                "writes reports/loops/audit_candidates.parquet")
    return read_rules(path)


def load_rules(source: str | Sequence[str], root: str | Path | None = None) -> pl.DataFrame:
    """``handwritten``, a path (relative paths from ``root``), or a list of them, in order."""
    sources = [source] if isinstance(source, str) else list(source)
    rules = pl.concat([_load_one(s, root) for s in sources])
    twice = rules.filter(pl.col("rule_id").is_duplicated())["rule_id"].unique().sort()
    if twice.len():
        raise ValueError(f"rule id(s) given by more than one rules source: {twice.to_list()}")
    return rules


def handwritten_part(rules: pl.DataFrame) -> pl.DataFrame:
    """The hand-written rules among ``rules`` (those with reference translations)."""
    return rules.filter(pl.col("arm") == HANDWRITTEN_ARM)
