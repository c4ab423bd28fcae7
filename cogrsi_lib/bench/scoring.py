"""Scoring rules shared by the benchmarks (CogRSI App. E.3).

"Accuracy is each benchmark's own rule: option match for multiple choice, the benchmarks'
scripts for free text and lists; FANToM ... All* counts a target set as right only if every
question in it is right."  The per-benchmark rules live in each benchmark's module; this
module holds the pieces they share: a strict option parser, text normalisation, token F1,
FANToM's list and yes/no rules, All*, F1 averages, majority vote, and the constant-answer
baseline that is reported beside every benchmark (a constant "No" can score 100% on a
column: CogRSI Table 22 note).

Replies are parsed strictly: a reply that names no option, or more than one, is *malformed*
(``Judgement.parsed is None``) and counts as wrong; it is never guessed.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from cogrsi_lib.bench.schema import Item

__all__ = [
    "Judgement",
    "accuracy",
    "all_star",
    "best_constant",
    "binary_answer",
    "constant_candidates",
    "contains_phrase",
    "judge_option",
    "judgements_frame",
    "list_answer_correct",
    "macro_f1",
    "majority_vote",
    "mean_by",
    "normalize_text",
    "parse_option",
    "right",
    "token_f1",
    "weighted_f1",
]


@dataclass(frozen=True)
class Judgement:
    """The verdict of a benchmark's rule on one reply.

    ``value`` is 1.0/0.0 for right/wrong (FANToM fact questions: token F1 in [0, 1]);
    ``parsed`` is what the rule read from the reply (an option label, ``yes``/``no``, a
    class label) or ``None`` when the reply is malformed.  ``gold_label``/``pred_label``
    feed class-averaged F1 where a benchmark reports it (OpenToM, FANToM binary); ``aux``
    is a secondary per-question score a benchmark reports (FANToM belief word F1).
    """

    value: float
    parsed: str | None
    gold_label: str | None = None
    pred_label: str | None = None
    aux: float | None = None

    @property
    def correct(self) -> bool:
        """Right by the benchmark's rule (for graded values: value == 1)."""
        return self.value >= 1.0

    @property
    def malformed(self) -> bool:
        return self.parsed is None


def right(parsed: str | None, ok: bool, **fields: object) -> Judgement:
    """Judgement for a right/wrong rule."""
    return Judgement(1.0 if ok else 0.0, parsed, **fields)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Text


_PUNCT = re.compile(f"[{re.escape(string.punctuation)}]")
_SPACES = re.compile(r"\s+")


def normalize_text(text: str, articles: bool = False) -> str:
    """Lower-case, underscores to spaces, punctuation removed, spaces collapsed.

    ``articles=True`` also drops the words "a", "an", "the" (SQuAD-style answers).
    """
    text = text.lower().replace("_", " ")
    text = _PUNCT.sub(" ", text)
    if articles:
        text = re.sub(r"\b(a|an|the)\b", " ", text)
    return _SPACES.sub(" ", text).strip()


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether normalised ``phrase`` occurs in normalised ``text`` on word boundaries."""
    phrase_n = normalize_text(phrase)
    if not phrase_n:
        return False
    return re.search(rf"(?<!\w){re.escape(phrase_n)}(?!\w)", normalize_text(text)) is not None


def token_f1(gold: str, prediction: str) -> float:
    """Whitespace-token F1 of FANToM's ``compute_f1`` (eval_fantom.py), no normalisation."""
    gold_tokens, pred_tokens = gold.split(), prediction.split()
    common = Counter(gold_tokens) & Counter(pred_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------------------------------
# Multiple choice


def _letter_patterns(label: str) -> list[str]:
    lab = re.escape(label)
    end = r"(?=\s*(?:$|[).,:;!]))"  # the letter ends the reply or is followed by punctuation
    return [
        rf"\[\[\s*{lab}\s*\]\]",                                    # [[A]] (ToMBench)
        rf"\(\s*{lab}\s*\)",                                        # (a)
        rf"^\s*{lab}\s*(?:[).:,](?!\w)|$)",                         # a) / a. / a: / a, line start
        rf"\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?{lab}{end}",  # answer: a / answer is b.
    ]


def parse_option(response: str, options: Sequence[tuple[str, str]]) -> str | None:
    """The one option label a reply names, else ``None`` (strict; never a guess).

    Letter forms are tried in order of explicitness: ``[[X]]``, ``(X)``, a line that starts
    ``X)``/``X.``/``X:`` or is just ``X``, then ``answer: X``/``answer is X.``; the first
    form that any label matches decides, and it
    must match exactly one label.  When no letter form matches, a reply that contains the
    full text of exactly one option (and of no other) names that option.
    """
    if not options:
        return None
    text = response.strip()
    labels = [lab for lab, _ in options]
    for level in range(4):
        hits = {
            lab for lab in labels
            if re.search(_letter_patterns(lab)[level], text, re.IGNORECASE | re.MULTILINE)
        }
        if hits:
            return hits.pop() if len(hits) == 1 else None
    matched = [lab for lab, opt in options if contains_phrase(text, opt)]
    if len(matched) == 1:
        return matched[0]
    if len(matched) > 1:  # one option may contain another ("in the box" / "box")
        longest = max(matched, key=lambda lab: len(normalize_text(dict(options)[lab])))
        others = [m for m in matched if m != longest]
        if all(normalize_text(dict(options)[m]) in normalize_text(dict(options)[longest])
               for m in others):
            return longest
    return None


def judge_option(item: Item, response: str) -> Judgement:
    """Option match: right iff the reply names exactly the gold option."""
    parsed = parse_option(response, item.options)
    return right(parsed, parsed == item.gold)


def majority_vote(answers: Iterable[Hashable]) -> Hashable:
    """Most frequent answer; ties go to the first seen (ToMBench get_results.py)."""
    counts: dict[Hashable, int] = {}
    for answer in answers:
        counts[answer] = counts.get(answer, 0) + 1
    if not counts:
        raise ValueError("majority_vote of no answers")
    return max(counts, key=counts.__getitem__)


# ---------------------------------------------------------------------------------------
# FANToM's yes/no and list rules (eval_fantom.py), shared with other yes/no benchmarks


def binary_answer(response: str) -> str | None:
    """FANToM's ``map_binary_answer_to_int``: ``yes``, ``no`` or ``None`` (irrelevant reply)."""
    ans = response.lower().strip("'").strip('"')
    if (" yes," in ans or " yes " in ans or ans.startswith("yes") or " yes." in ans
            or " knows " in ans or ans.startswith("true")):
        return "yes"
    if (" no," in ans or " no " in ans or ans.startswith("no") or " no." in ans
            or " does not know " in ans or " doesn't know " in ans or ans.startswith("false")):
        return "no"
    return None


def list_answer_correct(gold_set: Iterable[str], wrong_set: Iterable[str], response: str) -> bool:
    """FANToM's list rule: every aware character named and no unaware one (case-insensitive)."""
    reply = response.lower()
    return (all(name.lower() in reply for name in gold_set)
            and not any(name.lower() in reply for name in wrong_set))


# ---------------------------------------------------------------------------------------
# Aggregates


def accuracy(judgements: Sequence[Judgement]) -> float:
    """Mean value (NaN for no questions)."""
    if not judgements:
        return float("nan")
    return sum(j.value for j in judgements) / len(judgements)


def mean_by(
    items: Sequence[Item], judgements: Sequence[Judgement], key: Callable[[Item], str | None]
) -> dict[str, float]:
    """Accuracy per value of ``key(item)`` (items with key ``None`` left out), sorted."""
    groups: dict[str, list[float]] = {}
    for it, j in zip(items, judgements, strict=True):
        k = key(it)
        if k is not None:
            groups.setdefault(k, []).append(j.value)
    return {k: sum(v) / len(v) for k, v in sorted(groups.items())}


def all_star(groups: Sequence[Hashable], correct: Sequence[bool]) -> float:
    """Fraction of groups in which every question is right (FANToM All*)."""
    status: dict[Hashable, bool] = {}
    for g, ok in zip(groups, correct, strict=True):
        status[g] = status.get(g, True) and bool(ok)
    if not status:
        return float("nan")
    return sum(status.values()) / len(status)


def _f1_per_class(gold: Sequence[str], pred: Sequence[str]) -> dict[str, tuple[float, int]]:
    out: dict[str, tuple[float, int]] = {}
    for c in sorted(set(gold)):
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p != c)
        f1 = 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)
        out[c] = (f1, tp + fn)
    return out


def weighted_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Support-weighted F1 over the gold classes (sklearn ``average="weighted"``)."""
    per = _f1_per_class(gold, pred)
    total = sum(n for _, n in per.values())
    return float("nan") if total == 0 else sum(f * n for f, n in per.values()) / total


def macro_f1(gold: Sequence[str], pred: Sequence[str]) -> float:
    """Unweighted mean F1 over the classes seen in gold *or* predictions (sklearn's
    ``f1_score(average="macro")``, which OpenToM's ``evaluate.py`` calls): a predicted class
    that is never gold adds an F1 of 0."""
    classes = sorted(set(gold) | set(pred))
    if not classes:
        return float("nan")
    scores = []
    for c in classes:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p == c)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != c and p == c)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == c and p != c)
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return sum(scores) / len(scores)


def judgements_frame(items: Sequence[Item], judgements: Sequence[Judgement]) -> pl.DataFrame:
    """Per-item records: id, unit, group, type, gold, parsed, value, correct, malformed."""
    return pl.DataFrame(
        {
            "benchmark": [it.benchmark for it in items],
            "id": [it.id for it in items],
            "story_id": [it.story_id for it in items],
            "group_id": [it.group_id for it in items],
            "question_type": [it.question_type for it in items],
            "gold": [it.gold for it in items],
            "parsed": [j.parsed for j in judgements],
            "value": [float(j.value) for j in judgements],
            "correct": [j.correct for j in judgements],
            "malformed": [j.malformed for j in judgements],
        },
        schema={
            "benchmark": pl.Utf8, "id": pl.Utf8, "story_id": pl.Utf8, "group_id": pl.Utf8,
            "question_type": pl.Utf8, "gold": pl.Utf8, "parsed": pl.Utf8,
            "value": pl.Float64, "correct": pl.Boolean, "malformed": pl.Boolean,
        },
    )


def constant_candidates(items: Sequence[Item], top: int = 3) -> list[str]:
    """Constant replies worth trying: yes/no, every option label, the commonest golds."""
    labels = sorted({lab for it in items for lab in it.labels})
    golds = Counter(it.gold for it in items if not it.options and it.gold)
    common = [g for g, _ in golds.most_common(top)]
    out: list[str] = []
    for c in ["Yes", "No", *labels, *common]:
        if c not in out:
            out.append(c)
    return out


def best_constant(
    metrics_by_constant: Mapping[str, Mapping[str, float]],
) -> dict[str, tuple[str, float]]:
    """For each metric, the constant reply that scores highest on it and its score."""
    best: dict[str, tuple[str, float]] = {}
    for constant, metrics in metrics_by_constant.items():
        for metric, value in metrics.items():
            if value != value:  # NaN
                continue
            if metric not in best or value > best[metric][1]:
                best[metric] = (constant, value)
    return best
