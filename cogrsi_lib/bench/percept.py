"""Percept-ToMi and Percept-FANToM (Jung et al., EMNLP 2024): gold perceivers.

The PercepToM release has no licence, so these samples are not shipped: they are read from
``$COGRSI_SHARED_BENCHMARKS`` (default ``../shared/benchmarks``), ``percept-tomi`` and
``percept-fantom``.

Percept-ToMi (``dataset/Percept-ToMi.csv``, 600 story-question pairs): a comma-separated CSV
with header ``index, qTypeRaw, qType, story, question, char1, char2, perceivers,
story_with_perceivers, persp_ctx, cands, answer``; ``story``, ``perceivers``, ``cands`` and
``story_with_perceivers`` are Python literals (``ast.literal_eval``, not JSON).  It is a
CogRSI test-only benchmark and supplies gold perceivers (Table 27).  Scoring (repo
``eval_percept_tomi.py``): right iff the answer is a substring of the reply.

Percept-FANToM (``dataset/Percept_FANToM/*.csv``) has no gold answers: it annotates who
perceived each utterance of FANToM conversation parts.  :func:`load_fantom_perceivers` reads
them per ``part_id`` and :func:`attach_perceivers` adds them to FANToM items;
:func:`load_fantom_questions` reads the flattened question list (ids and types).
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import polars as pl

from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, right

TOMI_CSV = "dataset/Percept-ToMi.csv"
TOMI_COLUMNS = ("index", "qTypeRaw", "qType", "story", "question", "char1", "char2",
                "perceivers", "story_with_perceivers", "persp_ctx", "cands", "answer")
FANTOM_DIR = "dataset/Percept_FANToM"


def _literal(path: Path, record: str, column: str, text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as err:
        raise BenchmarkFormatError(path, record, f"{column} is not a Python literal ({err})"
                                   ) from err


def load_tomi(root: Path) -> list[Item]:
    """Percept-ToMi's 600 questions, with per-sentence gold perceivers in ``extra``."""
    path = root / TOMI_CSV
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in TOMI_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise BenchmarkFormatError(path, "header", f"missing column(s) {', '.join(missing)}")
        rows = list(reader)
    items: list[Item] = []
    for k, row in enumerate(rows):
        record = f"row {k + 2} (index {row['index']})"
        story = _literal(path, record, "story", row["story"])
        perceivers = _literal(path, record, "perceivers", row["perceivers"])
        cands = _literal(path, record, "cands", row["cands"])
        if not (isinstance(story, list) and isinstance(perceivers, list)
                and len(story) == len(perceivers)):
            raise BenchmarkFormatError(path, record, "story and perceivers must be lists of "
                                                     "equal length")
        key = hashlib.sha1("\n".join(story).encode()).hexdigest()[:12]
        items.append(Item(
            benchmark="percept-tomi",
            id=f"percept-tomi/{row['index']}",
            story_id=f"percept-tomi/{key}",
            context="\n".join(f"{n} {s}." for n, s in enumerate(story, start=1)),
            question=row["question"],
            question_type=row["qTypeRaw"],
            gold=row["answer"].strip(),
            source=f"{path.name}:{record}",
            extra={"qType": row["qType"], "char1": row["char1"], "char2": row["char2"] or None,
                   "perceivers": perceivers, "persp_ctx": row["persp_ctx"],
                   "candidates": list(cands) if isinstance(cands, list) else []},
        ))
    return validate_items(items, path)


def judge_tomi(item: Item, response: str) -> Judgement:
    ok = item.gold in response
    return right(item.gold if ok else None, ok)


def load_fantom_perceivers(root: Path) -> dict[str, list[tuple[str, tuple[str, ...]]]]:
    """``part_id`` -> [(utterance, perceivers)] from ``...conv_with_perceivers.csv``."""
    path = root / FANTOM_DIR / "Percept-FANToM-conv_with_perceivers.csv"
    out: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for k, row in enumerate(csv.DictReader(f)):
            record = f"row {k + 2}"
            if not row.get("part_id"):
                raise BenchmarkFormatError(path, record, "missing part_id")
            try:
                turns = json.loads(row["conversation_with_perceivers"])
            except (KeyError, json.JSONDecodeError) as err:
                raise BenchmarkFormatError(path, record, f"bad conversation_with_perceivers "
                                                         f"({err})") from err
            parsed = []
            for turn in turns:
                if not (isinstance(turn, dict) and len(turn) == 1):
                    raise BenchmarkFormatError(path, record, "each turn must be "
                                                             "{utterance: [perceivers]}")
                (utterance, who), = turn.items()
                parsed.append((utterance, tuple(who)))
            out[row["part_id"]] = parsed
    return out


def load_fantom_questions(root: Path) -> pl.DataFrame:
    """The flattened FANToM questions Percept-FANToM annotates: index, question, type, set."""
    path = root / FANTOM_DIR / "flattened_fantom.csv"
    df = pl.read_csv(path, infer_schema=False)
    missing = [c for c in ("index", "question", "question_type", "set_id") if c not in df.columns]
    if missing:
        raise BenchmarkFormatError(path, "header", f"missing column(s) {', '.join(missing)}")
    return df.select(
        pl.col("index").cast(pl.Int64), "question", "question_type", "set_id",
        pl.col("set_id").str.split("-").list.slice(0, 2).list.join("-").alias("part_id"),
    )


def attach_perceivers(
    items: Iterable[Item], perceivers: Mapping[str, list[tuple[str, tuple[str, ...]]]]
) -> list[Item]:
    """FANToM items with ``extra["gold_perceivers"]`` where Percept-FANToM has their part."""
    out = []
    for it in items:
        part = it.extra.get("part_id")
        if part in perceivers:
            it = replace(it, extra={**it.extra, "gold_perceivers": perceivers[part]})
        out.append(it)
    return out


_RAW = "https://raw.githubusercontent.com/chanijung/PercepToM/39e502a317322007d67659b0ca03573aedb0b013"

BENCHMARK = register(Benchmark(
    name="percept-tomi",
    title="Percept-ToMi",
    suites=("test_only",),
    unit="story",
    data_dir="percept-tomi",
    required=(TOMI_CSV,),
    load=load_tomi,
    judge=judge_tomi,
    sources=(Source(url=f"{_RAW}/{TOMI_CSV}", dest=TOMI_CSV,
                    sha256="9109505e318448b675e646555b6b183ad4ab8715d2e9ee37abe662c306ca896d"),),
    paper="Jung et al., EMNLP 2024",
    sample="shared",
    shared=True,
    release="Jung et al. PercepToM (eval_percept_tomi.py: answer is a substring of the reply)",
))
