"""CogToM (Tong et al., ACL 2026): 8,000+ bilingual multiple-choice items in 46 paradigms.

Neither a sample nor a public description of the released files could be found here: the
paper describes bilingual (Chinese/English) multiple-choice instances grouped into paradigms
and cognitive dimensions, and nothing more specific was reachable.  This loader therefore
reads the *most direct encoding of that description*, a JSONL file (or a JSON list) per
paradigm under ``data/``, one item per record, with these fields (aliases in
``FIELD_ALIASES`` cover the usual spellings):

``id``, ``paradigm``, ``dimension`` (optional), ``story``, ``question``, ``options``
(``{"A": text, ...}`` or a list of texts, lettered A, B, ...) and ``answer`` (an option
letter).  A ``language`` field (``en``/``zh``) may split the bilingual copies; the loader
keeps ``language="en"`` by default.  Records of one story share ``story_id`` when given, else
the story text.  It is tested on a synthetic fixture in exactly this format
(``tests/fixtures/bench/cogtom``); when the official release is available, check its field
names against ``FIELD_ALIASES`` first.  ``cogrsi bench fetch cogtom`` has no source to fetch.

Scoring: option match, accuracy overall (the headline) and per paradigm.
"""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path
from typing import Any

from cogrsi_lib.bench.protocol import Deviation
from cogrsi_lib.bench.registry import Benchmark, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, judge_option, mean_by

DATA = "data"
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "item_id", "index"),
    "paradigm": ("paradigm", "task", "paradigm_name"),
    "dimension": ("dimension", "ability", "category"),
    "story": ("story", "context", "scenario"),
    "question": ("question",),
    "options": ("options", "choices"),
    "answer": ("answer", "label", "answerKey"),
    "language": ("language", "lang"),
    "story_id": ("story_id",),
}


def _field(rec: dict[str, Any], name: str) -> Any:
    for key in FIELD_ALIASES[name]:
        if key in rec:
            return rec[key]
    return None


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, list):
            raise BenchmarkFormatError(path, None, "expected a JSON list of items")
        return [(f"[{k}]", rec) for k, rec in enumerate(data)]
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                out.append((f"line {lineno}", json.loads(line)))
            except json.JSONDecodeError as err:
                raise BenchmarkFormatError(path, f"line {lineno}", f"not JSON ({err})") from err
    return out


def _options(path: Path, record: str, raw: Any) -> tuple[tuple[str, str], ...]:
    if isinstance(raw, dict):
        pairs = [(str(k).strip(), str(v)) for k, v in raw.items()]
    elif isinstance(raw, list):
        pairs = [(string.ascii_uppercase[k], str(v)) for k, v in enumerate(raw)]
    else:
        raise BenchmarkFormatError(path, record, "options must be a mapping or a list")
    return tuple((lab, text.strip()) for lab, text in pairs)


def load(root: Path, language: str = "en") -> list[Item]:
    """Every ``data/*.jsonl`` / ``data/*.json`` file, items of one ``language``."""
    files = sorted((root / DATA).glob("*.jsonl")) + sorted((root / DATA).glob("*.json"))
    if not files:
        raise BenchmarkFormatError(root / DATA, None, "no .jsonl or .json files")
    items: list[Item] = []
    for path in files:
        for record, rec in _records(path):
            values = {name: _field(rec, name) for name in FIELD_ALIASES}
            lang = values["language"]
            if lang is not None and str(lang) != language:
                continue
            for name in ("id", "story", "question", "options", "answer"):
                if values[name] in (None, ""):
                    raise BenchmarkFormatError(path, record, f"missing field {name!r}")
            paradigm = str(values["paradigm"] or path.stem)
            story = str(values["story"])
            story_key = (values["story_id"]
                         or f"{paradigm}/{hashlib.sha1(story.encode()).hexdigest()[:12]}")
            items.append(Item(
                benchmark="cogtom",
                id=f"cogtom/{values['id']}",
                story_id=f"cogtom/{story_key}",
                context=story,
                question=str(values["question"]),
                question_type=paradigm,
                gold=str(values["answer"]).strip().rstrip(".").strip(),
                options=_options(path, record, values["options"]),
                source=f"{path.name}:{record}",
                extra={"dimension": values["dimension"], "language": lang or language},
            ))
    return validate_items(items, root / DATA)


def summarize(items: list[Item], judgements: list[Judgement]) -> dict[str, float]:
    """Accuracy (headline), per paradigm and per dimension."""
    out = {"score": accuracy(judgements), "accuracy": accuracy(judgements)}
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    out.update({f"dimension:{k}": v for k, v in mean_by(
        items, judgements, lambda it: it.extra.get("dimension")).items()})
    return out


#: Where the scorer (both protocols) differs from the release.
SCORER_DEVIATIONS = (
    Deviation(
        "data",
        "the release's format",
        "assumed format, synthetic fixture only",
    ),
)

BENCHMARK = register(Benchmark(
    name="cogtom",
    title="CogToM",
    suites=("main",),
    unit="story",
    data_dir="cogtom",
    required=(DATA,),
    load=load,
    judge=judge_option,
    summarize=summarize,
    paper="Tong et al., ACL 2026",
    sample="synthetic",
    release="no release available here: format assumed from the paper",
    official_deviations=SCORER_DEVIATIONS,
    uniform_deviations=SCORER_DEVIATIONS,
))
