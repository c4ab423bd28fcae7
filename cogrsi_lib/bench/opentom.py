"""OpenToM (Xu et al., ACL 2024): narratives with location, multihop and attitude questions.

Official format (seacowx/OpenToM, ``data/opentom_data/*.json``): every file is one object
keyed by an 8-digit story id.  ``meta_data.json`` holds each story (``narrative``; the long
version is in ``meta_data_long.json``) and its ``plot_info`` (mover, eoi, original_place,
move_to_place, observer); each question file maps a story id to
``[{"question", "answer", "type"}]``.  The seven genre files hold the 13,708 normal-length
questions.

Scoring (repo ``src/evaluate/opentom_evaluator.py``): each reply, stripped, is mapped to a
class label and compared with the gold label; coarse location by yes/no, fine location by
lexical overlap with the original vs. final place, fullness and accessibility by phrase,
attitude by a/b/c or the label word.

* Official protocol (``src/run_baseline.py`` vanilla prompts, ``src/evaluate.py``): the
  release's system message and per-type template; unreadable ("corrupted") replies are dropped and
  their rate reported; per question type, accuracy and sklearn's macro-F1 (over gold and
  predicted labels) on the rest; multihop split into fullness and accessibility and pooled.
  The headline is the mean macro-F1 over the paper's seven columns.  Two release bugs are
  replaced by their intent (see :data:`OFFICIAL`): ``remove_determinant`` strips a leading
  "a"/"an"/"the" *prefix* ("attic" became "ttic"; here whole words), and ``plot_info`` is
  unpacked by position in an order the released data do not have (here by key).
* Uniform protocol: accuracy over all questions (an unreadable reply is wrong) is the
  headline, with accuracy and macro-F1 per question type beside it.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from pathlib import Path

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol
from cogrsi_lib.bench.registry import Benchmark, Source, item_units, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import Judgement, accuracy, macro_f1, mean_by
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

DATA = "data/opentom_data"
#: question file -> (genre, granularity) ; genres as in the paper's tables
QUESTION_FILES: dict[str, str] = {
    "location_cg_fo.json": "location-coarse-fo",
    "location_cg_so.json": "location-coarse-so",
    "location_fg_fo_new.json": "location-fine-fo",
    "location_fg_so_new.json": "location-fine-so",
    "multihop_fo.json": "multihop-fo",
    "multihop_so.json": "multihop-so",
    "attitude.json": "attitude",
}


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise BenchmarkFormatError(path, None, f"not JSON ({err})") from err
    if not isinstance(data, dict):
        raise BenchmarkFormatError(path, None, "expected an object keyed by story id")
    return data


def load(root: Path, long: bool = False) -> list[Item]:
    """All questions of the seven genre files, with the (long) narrative as context."""
    meta_path = root / DATA / ("meta_data_long.json" if long else "meta_data.json")
    meta = _read(meta_path)
    items: list[Item] = []
    for filename, genre in QUESTION_FILES.items():
        path = root / DATA / filename
        for story_id, questions in _read(path).items():
            if story_id not in meta:
                if long:
                    continue
                raise BenchmarkFormatError(path, story_id, f"story id not in {meta_path.name}")
            story = meta[story_id]
            text = story.get("long_narrative" if long else "narrative")
            if not text:
                raise BenchmarkFormatError(meta_path, story_id, "missing narrative")
            plot = story.get("plot_info")
            if isinstance(plot, str):  # some copies store it as a Python-literal string
                try:
                    plot = ast.literal_eval(plot)
                except (ValueError, SyntaxError) as err:
                    raise BenchmarkFormatError(meta_path, story_id, f"bad plot_info ({err})"
                                               ) from err
            if not isinstance(plot, dict):
                raise BenchmarkFormatError(meta_path, story_id, "missing plot_info")
            if not isinstance(questions, list):
                raise BenchmarkFormatError(path, story_id, "expected a list of questions")
            for k, q in enumerate(questions):
                record = f"{story_id}[{k}]"
                for name in ("question", "answer", "type"):
                    if not isinstance(q.get(name), str) or not q[name].strip():
                        raise BenchmarkFormatError(path, record, f"missing field {name!r}")
                kind = genre
                if genre.startswith("multihop"):
                    kind = genre.replace("multihop", "multihop-fullness" if "fullness" in
                                         q["question"] else "multihop-accessibility")
                items.append(Item(
                    benchmark="opentom",
                    id=f"opentom/{story_id}/{filename.removesuffix('.json')}/{k}",
                    story_id=f"opentom/{story_id}",
                    context=text,
                    question=q["question"],
                    question_type=kind,
                    gold=q["answer"].strip(),
                    source=f"{filename}:{record}",
                    extra={"genre": genre, "original_place": plot.get("original_place", ""),
                           "move_to_place": plot.get("move_to_place", ""),
                           "mover": plot.get("mover", ""), "observer": plot.get("observer", ""),
                           "choices": _choices(kind, q["answer"].strip(), plot)},
                ))
    return validate_items(items, root / DATA)


# ------------------------------------------------------------------------------ labels

#: The closed answer set of each question type (fine location: the two places).
CHOICES = {"location-coarse": ("yes", "no"),
           "multihop-fullness": ("more full", "less full", "equally full"),
           "multihop-accessibility": ("more accessible", "less accessible",
                                      "equally accessible"),
           "attitude": ("positive", "neutral", "negative")}


def _choices(kind: str, answer: str, plot: dict) -> list[str]:
    """The answer set of a question, when its gold answer is one of them (else none)."""
    if kind.startswith("location-fine"):
        options = [str(plot.get("original_place", "")), str(plot.get("move_to_place", ""))]
    else:
        options = list(next((v for k, v in CHOICES.items() if kind.startswith(k)), ()))
    return options if answer.lower() in [o.lower() for o in options] else []



def remove_determinant(word: str) -> str:
    """Drop a leading article (whole word only; see module note)."""
    for det in ("a ", "an ", "the "):
        if word.lower().startswith(det):
            return word[len(det):].strip()
    return word


def lexical_overlap(pred: str, location: str) -> float:
    """Share of the location's words found in the reply (``compute_lexical_overlap``)."""
    pred = pred.lower().replace("_", " ").replace("'s", "")
    loc_words = location.lower().replace("_", " ").replace("'s", "").split()
    if not loc_words:
        return 0.0
    seen: list[str] = []
    for word in pred.replace(".", "").split():
        if word in loc_words and word not in seen:
            seen.append(word)
    return len(seen) / len(loc_words)


def fine_location_labels(reply: str, answer: str, original: str, moved: str) -> tuple[str, str]:
    """(gold, predicted) among original / moved / tie, by lexical overlap."""
    answer, original, moved = (remove_determinant(x).lower() for x in (answer, original, moved))
    o, m = lexical_overlap(reply, original), lexical_overlap(reply, moved)
    pred = "original" if o > m else "moved" if m > o else "tie"
    gold = "original" if answer == original else "moved" if answer == moved else "?"
    return gold, pred


def coarse_location_labels(reply: str, answer: str) -> tuple[str, str]:
    reply, answer = reply.lower(), answer.lower()
    pred = ("no" if "no" in reply and "yes" not in reply
            else "yes" if "yes" in reply and "no" not in reply else "?")
    return ("no" if "no" in answer else "yes"), pred


def fullness_labels(reply: str, answer: str) -> tuple[str, str]:
    reply = reply.replace(".", "").lower()
    pred = "?"
    if any(p in reply for p in ("less full", "emptier", "more empty")):
        pred = "less full"
    elif any(p in reply for p in ("more full", "fuller")):
        pred = "more full"
    elif "equally full" in reply:
        pred = "equally full"
    return answer.lower(), pred


def accessibility_labels(reply: str, answer: str) -> tuple[str, str]:
    reply = reply.replace(".", "").lower()
    pred = next((p for p in ("more accessible", "less accessible", "equally accessible")
                 if p in reply), "?")
    gold = "equally accessible" if "|" in answer else answer.lower()
    return gold, pred


def attitude_labels(reply: str, answer: str) -> tuple[str, str]:
    token = reply.lower().split("\n\n")[-1].split(":")[-1].split(".")[0].strip()
    letters = {"a": "positive", "b": "neutral", "c": "negative"}
    if token in letters:
        pred = letters[token]
    else:
        found = [w for w in ("positive", "negative", "neutral") if w in token]
        pred = found[0] if len(found) == 1 else "?"
    return answer.lower(), pred


def labels(item: Item, reply: str) -> tuple[str, str]:
    """(gold label, predicted label) by the OpenToM evaluator's rule for this question."""
    kind = item.question_type
    if kind.startswith("location-fine"):
        return fine_location_labels(reply, item.gold, item.extra["original_place"],
                                    item.extra["move_to_place"])
    if kind.startswith("location-coarse"):
        return coarse_location_labels(reply, item.gold)
    if kind.startswith("multihop-fullness"):
        return fullness_labels(reply, item.gold)
    if kind.startswith("multihop-accessibility"):
        return accessibility_labels(reply, item.gold)
    return attitude_labels(reply, item.gold)


def judge(item: Item, response: str) -> Judgement:
    """The release's label rules on the stripped reply (``pred_label`` "?": corrupted;
    ``gold_label`` "?": a fine-location answer that is neither place, never scored)."""
    gold, pred = labels(item, response.strip())
    parsed = None if pred == "?" else pred
    return Judgement(1.0 if pred == gold else 0.0, parsed, gold_label=gold, pred_label=pred)


#: The paper's seven columns (Table 3): coarse and fine location, multihop (fullness and
#: accessibility pooled) and attitude, first and second order.
COLUMNS = ("location-coarse-fo", "location-coarse-so", "location-fine-fo", "location-fine-so",
           "multihop-fo", "multihop-so", "attitude")


def _column(kind: str) -> str:
    return kind.replace("-fullness", "").replace("-accessibility", "")


#: The release's integer class of each label.  Fullness and accessibility share 1-3, so the
#: pooled multihop macro-F1 of ``evaluate.py`` merges "less full" with "more accessible" etc.;
#: the official protocol keeps that.
RELEASE_CODE = {"original": "1", "moved": "2", "tie": "3", "no": "0", "yes": "1",
                "less full": "1", "more full": "2", "equally full": "3",
                "more accessible": "1", "less accessible": "2", "equally accessible": "3",
                "positive": "1", "negative": "2", "neutral": "3", "?": "?"}


def official_metrics(pairs: Sequence[tuple[str, str]]) -> dict[str, float]:
    """``evaluate.py`` on one group of (gold, predicted) labels: corrupted predictions and
    unscorable golds dropped, their share reported; accuracy and macro-F1 on the rest."""
    valid = [(g, p) for g, p in pairs if p != "?" and g != "?"]
    out = {"corrupted": (len(pairs) - len(valid)) / len(pairs) if pairs else float("nan")}
    golds, preds = [g for g, _ in valid], [p for _, p in valid]
    out["accuracy"] = (sum(g == p for g, p in valid) / len(valid)) if valid else float("nan")
    out["macro_f1"] = macro_f1(golds, preds)
    return out


def official_summarize(items: Sequence[Item], judgements: Sequence[Judgement]
                       ) -> dict[str, float]:
    """Per question type (multihop: fullness, accessibility and pooled), the release's
    accuracy, macro-F1 and corrupted rate; headline: mean macro-F1 over :data:`COLUMNS`."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for it, j in zip(items, judgements, strict=True):
        pair = (RELEASE_CODE.get(j.gold_label or "?", "?"),
                RELEASE_CODE.get(j.pred_label or "?", "?"))
        groups.setdefault(it.question_type, []).append(pair)
        if it.question_type.startswith("multihop"):
            groups.setdefault(_column(it.question_type), []).append(pair)
    out: dict[str, float] = {}
    for kind in sorted(groups):
        for metric, value in official_metrics(groups[kind]).items():
            out[f"{metric}:{kind}"] = value
    multihop = [k for k in groups if k.startswith("multihop-") and k != _column(k)]
    for column in {_column(k) for k in multihop}:  # the release: mean of the two rates
        rates = [out[f"corrupted:{k}"] for k in multihop if _column(k) == column]
        out[f"corrupted:{column}"] = sum(rates) / len(rates)
    f1s = [out[f"macro_f1:{c}"] for c in COLUMNS if f"macro_f1:{c}" in out]
    f1s = [f for f in f1s if f == f]
    out["score"] = sum(f1s) / len(f1s) if f1s else float("nan")
    bad = sum(1 for j in judgements if (j.pred_label or "?") == "?")
    out["corrupted"] = bad / len(judgements) if judgements else float("nan")
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "score", kv[0])))


def summarize(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Uniform: accuracy over all questions (headline), accuracy and macro-F1 per type."""
    out = {"score": accuracy(judgements), "accuracy": accuracy(judgements)}
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    for kind in sorted({it.question_type for it in items}):
        pairs = [(j.gold_label, j.pred_label) for it, j in zip(items, judgements, strict=True)
                 if it.question_type == kind]
        out[f"macro_f1:{kind}"] = macro_f1([g or "" for g, _ in pairs],
                                           [p or "" for _, p in pairs])
    return out


_RAW = "https://raw.githubusercontent.com/seacowx/OpenToM/3f22b66276b2d7ca5fe573c28c79cc0d077aafc5"
#: sha256 of the files at that commit (the copies in data/ are byte-identical)
SHA256 = {
    "meta_data.json": "db3a568059c665fcf924f67af00d77bcce8a6a587b034fa0476b954a66e259c8",
    "meta_data_long.json": "6008fed8ef8f195a20a239356425278d50a7e2a54cab6b4685730c2140f199d4",
    "location_cg_fo.json": "4486b3a7dcc029c3e2c05a242d9e6f2e8175a08590253c4ebecc228fe4b394da",
    "location_cg_so.json": "ef3a711096b660a3a23bf9103d1a2b9babf9b57ed516f233d46f65fd8079f2b3",
    "location_fg_fo_new.json": "957b153a8dd55aa1495a82bda59397004bbf83c87c1039bd917ee6d02f7f29c2",
    "location_fg_so_new.json": "cddb5437c2697be99ce3642240b96af513f69ee06be7fe975b5ce02f8bfcfeb8",
    "multihop_fo.json": "fcd394c8aa4d080d0d5a8298dd62504dea7435935db7c7887792cd623f6dc121",
    "multihop_so.json": "f7fdc822dc5cc806b07735013a89a2e1879484010661523defbdcd8ef13d9561",
    "attitude.json": "8c1d0cdd68d60ea6534700ae3d67436fb9a5b6c9cfab84c0d70185c9222e4047",
}

# ------------------------------------------------------------------- official protocol

#: ``src/utils/load_baseline_model.py``: the system message of every baseline prompt.
SYSTEM = "You are an expert in modeling other's mental state."
#: ``src/prompts/chatgpt_opentom_prompts/*.txt``: the common head of the five templates.
HEAD = ("Read and comprehend the following short story. Then, answer the question that "
        "follows.\n\n{narrative}\n\nQuestion: {question}")
NO_EXPLANATION = " Answer the question without any explanation.\n"


def official_text(item: Item) -> str:
    """The release's vanilla user prompt (``build_prompt``, no CoT/SimToM), chosen as the
    release chooses it: by words of the question.  ``build_prompt`` strips whatever prompt
    it builds, so no template's closing newline is kept (fullness and accessibility
    included)."""
    q, narrative = item.question, item.context
    if "locate" in q or "initial" in q:  # simple_entity_state
        tail = NO_EXPLANATION if "locate" in q else (
            ' Answer the question with "Yes" or "No". Do not give any explanation.\n')
        text = HEAD.format(narrative=narrative, question=q) + tail
    elif "fullness" in q:
        q += ' Answer with "more full", "equally full", or "less full".'
        text = HEAD.format(narrative=narrative, question=q) + NO_EXPLANATION
    elif "accessibility" in q:
        q += ' Answer with "more accessible", "equally accessible", or "less accessible".'
        text = HEAD.format(narrative=narrative, question=q) + NO_EXPLANATION
    else:
        q = (q.split("?")[0].strip() + ", assuming that you observed the action?"
             + ' Answer with "positive", "neutral", or "negative".')
        text = (HEAD.format(narrative=narrative, question=q).strip()
                + " Answer without any explanation.")
    return text.strip()


def official_prompt(item: Item) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": official_text(item)}]


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.opentom", "choice")


def official_answer(item: Item) -> ReplyFormat | None:
    """The answer the prompt asks for: one of the question's answer set ("Yes"/"No" for
    coarse location, as the prompt writes them); free text where there is none."""
    if not item.choices:
        return None
    choices = [c.capitalize() if item.question_type.startswith("location-coarse") else c
               for c in item.choices]
    return ReplyFormat.choice(OFFICIAL_FAMILY, choices)


RELEASE = ("seacowx/OpenToM@3f22b66 (src/run_baseline.py, src/utils/build_prompt.py, "
           "src/evaluate.py, src/evaluate/opentom_evaluator.py)")

OFFICIAL = Protocol(
    "official", judge, official_summarize, item_units, prompt=official_prompt,
    answer=official_answer, release=RELEASE,
    deviations=(
        Deviation("sampling", "5 seeded batches of 50 stories, metrics averaged over "
                  "batches; 2 of the 4 fullness questions per story dropped at random",
                  "one batch: the stories of the sample drawn (manifest); every question"),
        Deviation("parsing", "remove_determinant strips a leading 'a'/'an'/'the' prefix "
                  "('attic' -> 'ttic')", "strips whole words only", broken=True),
        Deviation("data", "plot_info unpacked by position (mover, affected_char, eoi, "
                  "original_place, move_to_place), an order the released meta_data.json does "
                  "not have: the places compared are move_to_place and observer, so even "
                  "the gold answers as replies leave 940 of 2,384 first-order and 734 of "
                  "1,192 second-order fine-location questions without a gold label, and "
                  "evaluate.py drops them", "plot_info read by key", broken=True),
        Deviation("headline", "one row per question type (paper Table 3: macro-F1)",
                  "score = mean macro-F1 over the seven columns; every type reported"),
    ),
)

UNIFORM_DEVIATIONS = (
    Deviation("answer set", "free-text answer", "asked as a choice among the question's closed "
              "answer set (item.choices); the chosen text is judged by the release's rule"),
    Deviation("aggregation", "corrupted replies dropped, corrupted rate reported; macro-F1 "
              "per question type", "an unreadable reply is wrong; score = accuracy over all "
              "questions; macro-F1 per type beside it"),
)


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured, at reader_eval's default cap."""
    item = Item("opentom", "example", "example", EXAMPLE_STORY,
                "Is the ball in its initial location by the end of the story?",
                "location-coarse-fo", "no", extra={"choices": ("yes", "no")})
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=48, structured=True)


BENCHMARK = register(Benchmark(
    name="opentom",
    title="OpenToM",
    suites=("main",),
    unit="story",
    data_dir="opentom",
    required=(f"{DATA}/meta_data.json", *(f"{DATA}/{f}" for f in QUESTION_FILES)),
    load=load,
    judge=judge,
    summarize=summarize,
    sources=tuple(Source(url=f"{_RAW}/{DATA}/{f}", dest=f"{DATA}/{f}", sha256=digest)
                  for f, digest in SHA256.items()),
    paper="Xu et al., ACL 2024",
    official=OFFICIAL,
    uniform_deviations=UNIFORM_DEVIATIONS,
))
