"""ExploreToM (Sclar et al., ICLR 2025): A*-searched adversarial story structures.

No sample could be obtained here (the release is on the Hugging Face hub,
``facebook/ExploreToM``), so this loader is written against the hub file's documented columns
and tested on a synthetic fixture in that format (``tests/fixtures/bench/exploretom``).
``ExploreToM-data-sample.csv`` has one row per question with ``story_structure`` (the
templated story), ``infilled_story`` (its prose), ``question``, ``expected_answer``,
``qprop=params`` (a Python tuple whose last element is the question's shape, e.g.
``memory-container_location``), ``qprop=nth_order`` (-1 for non-ToM questions),
``qprop=non_unique_mental_state``, ``sprop=is_false_belief_story_1st``,
``sprop=is_false_belief_story_1st_and_2nd``, ``sprop=story_accuracy_1st_raw``,
``sprop=story_accuracy_1st_infilled``, ``sprop=global_idx`` and the generation parameters
``param=story_type``, ``param=num_stories_total``, ``param=max_sentences``,
``param=num_people``, ``param=num_moves``, ``param=num_rooms``.

Samples are drawn by structural group (CogRSI App. E.2): rows with the same
``story_structure``.  CogRSI reports the mean of two partitions, E1 (physical access) and E2
(communication access); the partition is read from ``param=story_type``: story types with
information exchange (``info-exchange``, ``asymmetric``, the FANToM-like ``fantom-*`` and
``all*``) are E2, the rest E1.

Scoring (repo ``utils.py``, ``ModelAnswerEvaluator.verify_answer_to_question``): right iff the
expected answer occurs in the lower-cased reply (both sides lower-cased here).  The release
reports accuracy over questions (``compute_statistics.py``); the headline here is CogRSI's
mean of E1 and E2, with the accuracy over all questions and per ToM order beside it.
"""

from __future__ import annotations

import ast
import csv
import hashlib
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from cogrsi_lib.bench.protocol import Deviation
from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, mean_by, right

CSV_PATH = "ExploreToM-data-sample.csv"
REQUIRED_COLUMNS = ("story_structure", "infilled_story", "question", "expected_answer",
                    "qprop=params", "qprop=nth_order", "sprop=is_false_belief_story_1st",
                    "sprop=global_idx", "param=story_type")
COMMUNICATION_MARKERS = ("info-exchange", "asymmetric", "fantom")


def partition(story_type: str) -> str:
    """``E2`` (communication access) or ``E1`` (physical access) for a story type."""
    st = story_type.lower()
    if st.startswith("all") or any(m in st for m in COMMUNICATION_MARKERS):
        return "E2"
    return "E1"


def question_shape(params: str) -> str:
    """The shape named by ``qprop=params``' last element (``memory``, ``room_location``...)."""
    try:
        value = ast.literal_eval(params)
    except (ValueError, SyntaxError):
        value = params
    last = value[-1] if isinstance(value, tuple | list) and value else str(value)
    return str(last).split("-")[0].split(" ")[0]


def load(root: Path, context: str = "infilled_story") -> list[Item]:
    """Every row; ``context`` is ``infilled_story`` (the task as published) or
    ``story_structure``."""
    path = root / CSV_PATH
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise BenchmarkFormatError(path, "header", f"missing column(s) {', '.join(missing)}")
        rows = list(reader)
    items: list[Item] = []
    for k, row in enumerate(rows):
        record = f"row {k + 2}"
        for column in ("story_structure", "question", "expected_answer", context):
            if not (row.get(column) or "").strip():
                raise BenchmarkFormatError(path, record, f"empty {column!r}")
        group = hashlib.sha1(row["story_structure"].encode()).hexdigest()[:12]
        shape = question_shape(row["qprop=params"])
        nth = row["qprop=nth_order"].strip()
        items.append(Item(
            benchmark="exploretom",
            id=f"exploretom/{k:05d}",
            story_id=f"exploretom/{group}",
            context=row[context],
            question=row["question"],
            question_type=f"order{nth}:{shape}",
            gold=row["expected_answer"].strip(),
            source=f"{path.name}:{record}",
            extra={"partition": partition(row["param=story_type"]),
                   "story_type": row["param=story_type"], "nth_order": nth,
                   "global_idx": row["sprop=global_idx"], "params": row["qprop=params"],
                   "is_false_belief_story_1st": row["sprop=is_false_belief_story_1st"]},
        ))
    return validate_items(items, path)


def judge(item: Item, response: str) -> Judgement:
    ok = item.gold.lower() in response.lower()
    return right(item.gold if ok else None, ok)


def summarize(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Headline: mean of the E1 and E2 partition accuracies (CogRSI Table 18 note); beside
    it the accuracy over all questions, per ToM order (``order:n``; -1 for questions that
    are not about beliefs) and per question type."""
    per = mean_by(items, judgements, lambda it: it.extra["partition"])
    out = {f"partition:{k}": v for k, v in per.items()}
    out["score"] = sum(per.values()) / len(per) if per else float("nan")
    out["accuracy"] = accuracy(judgements)
    out.update({f"order:{k}": v for k, v in mean_by(items, judgements,
                                                      lambda it: it.extra["nth_order"]).items()})
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    return out


def units(items: Sequence[Item], judgements: Sequence[Judgement]) -> pl.DataFrame:
    """Every question, in its partition's cell."""
    return pl.DataFrame(
        {"unit_id": [it.id for it in items], "cluster": [it.story_id for it in items],
         "cell": [it.extra["partition"] for it in items],
         "value": [j.value for j in judgements]},
        schema={"unit_id": pl.Utf8, "cluster": pl.Utf8, "cell": pl.Utf8, "value": pl.Float64},
    )


#: Where the scorer and the headline (both protocols) differ from the release.
SCORER_DEVIATIONS = (
    Deviation(
        "parsing",
        "the expected answer looked up in the lower-cased reply",
        "both sides lower-cased",
    ),
    Deviation(
        "headline",
        "accuracy over questions: compute_statistics.py's cross-model table pools first- and "
        "second-order questions; its table per story type averages the stories' accuracies",
        "score = mean of the E1 (physical access) and E2 (communication access) partition "
        "accuracies (CogRSI Table 18); accuracy over all questions, per ToM order (order:n) "
        "and per question type beside it",
    ),
)

BENCHMARK = register(Benchmark(
    name="exploretom",
    title="ExploreToM",
    suites=("main",),
    unit="structural group",
    data_dir="exploretom",
    required=(CSV_PATH,),
    load=load,
    judge=judge,
    summarize=summarize,
    units=units,
    sources=(Source(
        url="https://huggingface.co/datasets/facebook/ExploreToM/resolve/"
            "a4ac6f257e0034945f829716047ae6306dc625a0/ExploreToM-data-sample.csv",
        dest=CSV_PATH),),
    paper="Sclar et al., ICLR 2025",
    sample="synthetic",
    release="facebookresearch/ExploreToM@6a93728 (utils.py: ModelAnswerEvaluator; "
            "compute_statistics.py)",
    official_deviations=SCORER_DEVIATIONS,
    uniform_deviations=SCORER_DEVIATIONS,
))
