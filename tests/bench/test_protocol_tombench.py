"""ToMBench's official protocol against a transcription of its released runner and scorer.

Transcribed from zhchen18/ToMBench at commit 4f491f0784ed31ef93a8837615fbc48f885cf78d:
``run_api.py`` (``format_prompt_4``/``format_prompt_2``: options shuffled, the map from
shown letter to original letter), ``prompts.py`` (English templates) and ``get_results.py``
(``extract_answer``, ``most_common_element``, accuracy per task).  The release draws its
shuffles from one global stream; here each try's order is given to both sides.
"""

from __future__ import annotations

import random

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import tombench
from cogrsi_lib.bench.report import evaluate

from .conftest import real

# ------------------------------------------------------------- transcription of the release


def rel_extract(text: str) -> str:
    for pattern in ("[[{}]]", "[{}]"):
        for letter in "ABCD":
            if pattern.format(letter) in text:
                return letter
    for ch in reversed(text):
        if ch in "ABCD":
            return ch
    return "A"


def rel_most_common(lst: list[str]) -> str:
    freq: dict[str, int] = {}
    for x in lst:
        freq[x] = freq.get(x, 0) + 1
    return max(freq, key=freq.get)


def rel_map(original: list[str], shown: list[str]) -> dict[str, str]:
    """``format_prompt_4/2``: shown letter -> original letter, by option text ('' if none)."""
    out = {"A": "", "B": "", "C": "", "D": ""}
    for k, text in enumerate(shown):
        for j, orig in enumerate(original):
            if text == orig:
                out["ABCD"[k]] = "ABCD"[j]
                break
    return out


REL_USER_4 = ("[Story]\n{story}\n\n[Question]\n{question}\n\n[Candidate Answers]\n"
              "A. {choice_a}\nB. {choice_b}\nC. {choice_c}\nD. {choice_d}")
REL_USER_2 = ("[Story]\n{story}\n\n[Question]\n{question}\n\n[Candidate Answers]\n"
              "A. {choice_a}\nB. {choice_b}")

VARIANTS = ["[[{x}]]", "[{x}]", "The answer is {x}.", "{x}", "[[{x}]] not [[{y}]]", "",
            "I cannot tell", "answer: {x}\n\n", "{x}) because", "[[{y}]]"]


@pytest.fixture(scope="module")
def items():
    loaded = real("tombench")
    twos = [it for it in loaded if len(it.options) == 2][:40]
    fours = [it for it in loaded if len(it.options) == 4][:120]
    return twos + fours


def test_official_prompt_is_the_release_template(items):
    official = bench.get("tombench").protocol("official")
    for it in items:
        for view in official.present(it):
            texts = [t for _, t in view.options]
            template = REL_USER_4 if len(texts) == 4 else REL_USER_2
            keys = ["choice_a", "choice_b", "choice_c", "choice_d"][:len(texts)]
            user = template.format(story=it.context, question=it.question,
                                   **dict(zip(keys, texts, strict=True)))
            system, message = official.prompt(view)
            assert message == {"role": "user", "content": user}
            assert system["role"] == "system" and "[[Answer Index]]" in system["content"]


def test_five_shuffled_tries_and_the_majority_match_the_release(items):
    official = bench.get("tombench").protocol("official")
    rng = random.Random(7)
    checked = 0
    for it in items:
        views = official.present(it)
        assert len(views) == tombench.TRY_TIMES == 5
        original = [t for _, t in it.options]
        for _ in range(6):
            replies = []
            for view in views:
                x, y = rng.sample(list(view.labels), 2)
                replies.append(rng.choice(VARIANTS).format(x=x, y=y))
            preds = [rel_map(original, [t for _, t in v.options])[rel_extract(r)]
                     for v, r in zip(views, replies, strict=True)]
            expected = rel_most_common(preds) == it.gold
            assert official.score(it, replies).correct == expected, (it.id, replies)
            checked += 1
    assert checked == 6 * len(items)


def test_a_letterless_reply_is_A_officially_and_malformed_uniformly():
    item = next(it for it in real("tombench") if len(it.options) == 4)
    proto = bench.get("tombench").protocol("official")
    views = proto.present(item)
    shown_a = [v.extra["view_of"]["A"] for v in views]
    verdict = proto.score(item, "I am not sure")
    assert verdict.parsed == rel_most_common(shown_a)
    assert bench.get("tombench").protocol("uniform").score(item, "I am not sure").parsed is None


def test_tries_shuffle_the_options_and_are_reproducible(items):
    official = bench.get("tombench").protocol("official")
    orders = {tuple(t for _, t in v.options) for it in items[40:] for v in official.present(it)}
    assert len(orders) > 120  # four-choice items are shown in several orders
    again = [v.options for v in official.present(items[50])]
    assert again == [v.options for v in official.present(items[50])]


def test_official_headline_is_the_mean_of_task_accuracies():
    loaded = real("tombench")
    chosen = [it for it in loaded if it.extra["task"] in ("False Belief Task", "Hidden Emotions")]
    replies = {it.id: [f"[[{v.gold}]]" if k % 2 == 0 else "[[A]]"
                       for k, v in enumerate(bench.get("tombench").protocol("official")
                                             .present(it))] for it in chosen}
    ev = evaluate("tombench", chosen, replies, protocol="official")
    tasks = [ev.summary["task:False Belief Task"], ev.summary["task:Hidden Emotions"]]
    assert ev.summary["score"] == pytest.approx(sum(tasks) / 2)
    assert ev.summary["score"] == 1.0  # three of five tries right: the majority
