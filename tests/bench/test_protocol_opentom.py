"""OpenToM's official protocol against a transcription of its released evaluation.

Transcribed from seacowx/OpenToM at commit 3f22b66276b2d7ca5fe573c28c79cc0d077aafc5:
``src/evaluate/opentom_evaluator.py`` (the label rules), ``src/evaluate.py`` (dropping
corrupted replies, sklearn accuracy and macro-F1) and the vanilla prompt path of
``src/run_baseline.py`` / ``src/utils/build_prompt.py`` with the templates in
``src/prompts/chatgpt_opentom_prompts``.  Labels are the release's integers; the
protocol's string labels are mapped onto them.  The two release bugs the protocol does not
follow are checked separately (``remove_determinant`` prefix, ``plot_info`` unpacking); the
transcription is fed the places by key, as the protocol reads them.
"""

from __future__ import annotations

import pytest
from sklearn.metrics import accuracy_score, f1_score

from cogrsi_lib import bench
from cogrsi_lib.bench import opentom
from cogrsi_lib.bench.schema import Item

from .conftest import real

# ------------------------------------------------------------- transcription of the release


def rel_remove_determinant(word: str) -> str:
    for det in ("a", "an", "the"):
        if word.startswith(det):
            return word[len(det):].strip()
    return word


def rel_overlap(pred: str, location: str) -> float:
    pred_words = pred.lower().replace("_", " ").replace("'s", "").replace(".", "").split()
    loc_words = location.lower().replace("_", " ").replace("'s", "").split()
    seen: list[str] = []
    for w in pred_words:
        if w in loc_words and w not in seen:
            seen.append(w)
    return len(seen) / len(loc_words)


def rel_fine(pred: str, answer: str, original: str, moved: str, determinant=rel_remove_determinant
             ) -> tuple[int | None, int]:
    answer = determinant(answer).lower()
    original, moved = determinant(original).lower(), determinant(moved).lower()
    o, m = rel_overlap(pred, original), rel_overlap(pred, moved)
    p = 3 if o == m else (1 if o > m else 2)
    g = 1 if original == answer else (2 if moved == answer else None)
    return g, p


def rel_coarse(pred: str, answer: str) -> tuple[int | None, int]:
    pred, answer = pred.lower(), answer.lower()
    if "no" in pred and "yes" not in pred:
        p = 0
    elif "yes" in pred and "no" not in pred:
        p = 1
    else:
        p = -1
    g = 0 if "no" in answer else (1 if "yes" in answer else None)
    return g, p


def rel_fullness(pred: str, answer: str) -> tuple[int | None, int]:
    pred = pred.replace(".", "").lower()
    p = None
    if any(x in pred for x in ("less full", "emptier", "more empty")):
        p = 1
    if not p and any(x in pred for x in ("more full", "fuller")):
        p = 2
    if not p and "equally full" in pred:
        p = 3
    p = p or -1
    g = {"less full": 1, "more full": 2, "equally full": 3}.get(answer)
    return g, p


def rel_accessibility(pred: str, answer: str) -> tuple[int, int]:
    if "|" in answer:
        answer = "equally accessible"
    pred = pred.replace(".", "").lower()
    if "more accessible" in pred:
        p = 1
    elif "less accessible" in pred:
        p = 2
    elif "equally accessible" in pred:
        p = 3
    else:
        p = -1
    g = 1 if answer == "more accessible" else (2 if answer == "less accessible" else 3)
    return g, p


def rel_attitude(pred: str, answer: str) -> tuple[int, int]:
    pred, answer = pred.lower(), answer.lower()
    token = pred.split("\n\n")[-1].split(":")[-1].split(".")[0].strip().lower()
    g = 1 if answer == "positive" else (2 if answer == "negative" else 3)
    letters = {"a": "positive", "b": "neutral", "c": "negative"}
    if token in letters:
        p = {"positive": 1, "negative": 2}.get(letters[token], 3)
    else:
        found = [w for w in ("positive", "negative", "neutral") if w in token]
        p = -1 if len(found) != 1 else {"positive": 1, "negative": 2, "neutral": 3}[found[0]]
    return g, p


def rel_labels(item: Item, prediction: str, determinant=rel_remove_determinant):
    """The release's (gt, pred) for one question; prediction and answer stripped as in
    ``evaluate``; places by key."""
    pred, gt = prediction.strip(), item.gold.strip()
    kind = item.question_type
    if kind.startswith("location-fine"):
        return rel_fine(pred, gt, item.extra["original_place"], item.extra["move_to_place"],
                        determinant)
    if kind.startswith("location-coarse"):
        return rel_coarse(pred, gt)
    if kind.startswith("multihop-fullness"):
        return rel_fullness(pred, gt)
    if kind.startswith("multihop-accessibility"):
        return rel_accessibility(pred, gt)
    return rel_attitude(pred, gt)


def rel_group_metrics(pairs: list[tuple[int | None, int]]) -> dict[str, float]:
    """``evaluate.py`` on one batch of one question group."""
    preds, gts = [p for _, p in pairs], [g for g, _ in pairs]
    valid_pred = [p for p in preds if p != -1]
    valid_gt = [gts[i] for i in range(len(preds)) if preds[i] != -1]
    valid_pred = [valid_pred[i] for i in range(len(valid_gt)) if valid_gt[i] is not None]
    valid_gt = [g for g in valid_gt if g is not None]
    return {"corrupted": (len(preds) - len(valid_pred)) / len(preds),
            "accuracy": accuracy_score(valid_gt, valid_pred),
            "macro_f1": f1_score(valid_gt, valid_pred, average="macro")}


REL_TEMPLATE = {  # the five template files (each ends with a newline)
    "fg": ("Read and comprehend the following short story. Then, answer the question that "
           "follows.\n\n{narrative}\n\nQuestion: {question} Answer the question without any "
           "explanation.\n"),
    "cg": ("Read and comprehend the following short story. Then, answer the question that "
           "follows.\n\n{narrative}\n\nQuestion: {question} Answer the question with \"Yes\" "
           "or \"No\". Do not give any explanation.\n"),
    "attitude": ("Read and comprehend the following short story. Then, answer the question "
                 "that follows.\n\n{narrative}\n\nQuestion: {question}\n"),
}
REL_TEMPLATE["fullness"] = REL_TEMPLATE["accessibility"] = REL_TEMPLATE["fg"]


def rel_prompt(question: str, narrative: str) -> list[dict[str, str]]:
    """``build_prompt`` without CoT, SimToM or self-ask, behind the baseline system message;
    ``build_prompt`` returns every prompt stripped, whichever builder made it."""
    def fill(name: str, q: str) -> str:
        return REL_TEMPLATE[name].replace("{narrative}", narrative).replace("{question}", q)

    if "locate" in question:
        text = fill("fg", question).strip()
    elif "initial" in question:
        text = fill("cg", question).strip()
    elif "fullness" in question:
        text = fill("fullness", f'{question} Answer with "more full", "equally full", or '
                                '"less full".')
    elif "accessibility" in question:
        text = fill("accessibility", f'{question} Answer with "more accessible", "equally '
                                     'accessible", or "less accessible".')
    else:
        q = question.split("?")[0].strip() + ", assuming that you observed the action?"
        q = q + ' Answer with "positive", "neutral", or "negative".'
        text = fill("attitude", q).strip() + " Answer without any explanation."
    return [{"role": "system", "content": "You are an expert in modeling other's mental state."},
            {"role": "user", "content": text.strip()}]


def test_official_prompt_is_the_release_vanilla_prompt_on_every_question():
    official = bench.get("opentom").protocol("official")
    loaded = real("opentom")
    for it in loaded:
        assert official.prompt(it) == rel_prompt(it.question, it.context), it.id
    assert len(loaded) == 13708
    multihop = [it for it in loaded if it.question_type.startswith("multihop")]
    assert multihop and all(not opentom.official_text(it).endswith("\n") for it in multihop)


# ---------------------------------------------------------------------------- reply set

PLACE_VARIANTS = ("{o}", "The {o}.", "  {m}\n", "in the {m}", "It is in {o}, not {m}", "", "{o_}")
REPLIES = {
    "location-coarse": ["Yes", "no", "No.\n\n", " yes, it is", "Yes and no", "maybe", ""],
    "multihop-fullness": ["less full", "More full.", "It is fuller", "equally full\n\n", "emptier",
                          "the same", "Less Full"],
    "multihop-accessibility": ["more accessible", "Less accessible.", "equally accessible\n",
                               "more accessible than less accessible", "no idea", ""],
    "attitude": ["negative\n\n", "A", "b.", "Answer: c", "positive", "Neutral.", "positive or "
                 "negative", "The attitude is: negative", "c\n\n", "", "mixed"],
}


def replies_for(item: Item) -> list[str]:
    kind = item.question_type
    if kind.startswith("location-fine"):
        o, m = item.extra["original_place"], item.extra["move_to_place"]
        return [v.format(o=o.replace("_", " "), m=m.replace("_", " "), o_=o)
                for v in PLACE_VARIANTS] + [item.gold]
    key = next(k for k in REPLIES if kind.startswith(k))
    return REPLIES[key] + [item.gold]


@pytest.fixture(scope="module")
def items() -> list[Item]:
    """Twelve questions of every type from the real release (stories in file order)."""
    loaded = real("opentom")
    by_type: dict[str, list[Item]] = {}
    for it in loaded:
        by_type.setdefault(it.question_type, []).append(it)
    return [it for kind in sorted(by_type) for it in by_type[kind][:12]]


_TO_INT = {"original": 1, "moved": 2, "tie": 3, "no": 0, "yes": 1, "less full": 1,
           "more full": 2, "equally full": 3, "more accessible": 1, "less accessible": 2,
           "equally accessible": 3, "positive": 1, "negative": 2, "neutral": 3}


def _as_int(label: str | None, pred: bool) -> int | None:
    if label in (None, "?"):
        return -1 if pred else None
    return _TO_INT[label]


def _no_prefix_bug(item: Item) -> bool:
    """Whether the release's prefix-stripping gives the same places as whole-word stripping."""
    words = [item.gold, item.extra["original_place"], item.extra["move_to_place"]]
    return all(rel_remove_determinant(w) == opentom.remove_determinant(w) for w in words)


def test_official_labels_match_the_release_on_every_reply_variant(items):
    official = bench.get("opentom").protocol("official")
    checked = 0
    for it in items:
        if it.question_type.startswith("location-fine") and not _no_prefix_bug(it):
            continue
        for reply in replies_for(it):
            j = official.score(it, reply)
            mine = (_as_int(j.gold_label, False), _as_int(j.pred_label, True))
            assert mine == rel_labels(it, reply), (it.id, reply)
            checked += 1
    assert checked > 500


def test_official_summary_matches_the_release_metrics_per_type(items):
    official = bench.get("opentom").protocol("official")
    usable = [it for it in items
              if not it.question_type.startswith("location-fine") or _no_prefix_bug(it)]
    chosen = [(it, replies_for(it)[k % len(replies_for(it))])
              for k, it in enumerate(usable)]
    judgements = [official.score(it, r) for it, r in chosen]
    summary = official.summarize([it for it, _ in chosen], judgements)
    groups: dict[str, list] = {}
    for it, r in chosen:
        pair = rel_labels(it, r)
        groups.setdefault(it.question_type, []).append(pair)
        if it.question_type.startswith("multihop"):
            column = it.question_type.replace("-fullness", "").replace("-accessibility", "")
            groups.setdefault(column, []).append(pair)
    for kind, pairs in groups.items():
        expected = rel_group_metrics(pairs)
        for metric in ("accuracy", "macro_f1"):
            assert summary[f"{metric}:{kind}"] == pytest.approx(expected[metric]), (kind, metric)
        if kind in ("multihop-fo", "multihop-so"):  # the release: mean of the two rates
            order = kind[-2:]
            rates = [rel_group_metrics(groups[f"multihop-{t}-{order}"])["corrupted"]
                     for t in ("fullness", "accessibility")]
            assert summary[f"corrupted:{kind}"] == pytest.approx(sum(rates) / 2)
        else:
            assert summary[f"corrupted:{kind}"] == pytest.approx(expected["corrupted"]), kind
    columns = [summary[f"macro_f1:{c}"] for c in opentom.COLUMNS]
    assert summary["score"] == pytest.approx(sum(columns) / len(columns))


def test_stripping_reads_a_reply_with_trailing_blank_lines():
    item = next(it for it in real("opentom") if it.question_type == "attitude")
    for name in ("official", "uniform"):
        j = bench.get("opentom").protocol(name).score(item, f"{item.gold}\n\n")
        assert j.correct and j.pred_label == item.gold.lower()


def test_the_release_prefix_bug_is_the_listed_deviation():
    assert rel_remove_determinant("attic") == "ttic"
    assert opentom.remove_determinant("attic") == "attic"
    assert opentom.remove_determinant("the attic") == "attic"
    aspects = {d.aspect for d in bench.get("opentom").protocol("official").deviations
               if d.broken}
    assert aspects == {"parsing", "data"}


def test_the_release_positional_plot_info_drops_gold_answers():
    """Unpacked by position, the released meta data give the wrong places: fed the gold
    answers, many first- and second-order fine-location questions lose their gold label
    (``evaluate.py`` then drops them); the listed deviation states both counts."""
    loaded = real("opentom")
    (row,) = [d for d in bench.get("opentom").protocol("official").deviations
              if d.aspect == "data"]
    for kind, order in (("location-fine-fo", "first-order"), ("location-fine-so",
                                                              "second-order")):
        fine = [it for it in loaded if it.question_type == kind]
        # positional unpacking: original_place <- move_to_place, move_to_place <- observer
        dropped = sum(1 for it in fine if rel_fine(it.gold, it.gold, it.extra["move_to_place"],
                                                   it.extra["observer"])[0] is None)
        by_key = sum(1 for it in fine if rel_fine(it.gold, it.gold, it.extra["original_place"],
                                                  it.extra["move_to_place"])[0] is None)
        assert dropped > 0.3 * len(fine)
        assert by_key < dropped
        assert f"{dropped:,} of {len(fine):,} {order}" in row.release, (kind, dropped)
