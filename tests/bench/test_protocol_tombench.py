"""ToMBench's official protocol against a transcription of its released runner and scorer.

Transcribed from zhchen18/ToMBench at commit 4f491f0784ed31ef93a8837615fbc48f885cf78d:
``run_api.py`` (``format_prompt_4``/``format_prompt_2``: options shuffled, the map from
shown letter to original letter), ``prompts.py`` (English templates) and ``get_results.py``
(``extract_answer``, ``most_common_element``, accuracy per task).  The release draws its
shuffles from one global stream; here each try's order is given to both sides.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import tombench
from cogrsi_lib.bench.report import constant_reply, evaluate

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


# ------------------------------------------------- option texts as run_api.py shows them


def _raw_lines(task: str) -> list[dict]:
    path = bench.get("tombench").root() / "data" / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _lineno(item) -> int:
    return int(item.source.rsplit("line ", 1)[1])


def test_official_views_show_option_texts_as_the_release_does():
    """``format_prompt_4/2`` remove each option's own ``"X. "`` before lettering the
    shuffled options; the release's user message is rebuilt here from the raw records."""
    items = [it for it in real("tombench") if it.extra["task"] == "Strange Story Task"]
    raw = _raw_lines("Strange Story Task")
    official = bench.get("tombench").protocol("official")
    prefixed = 0
    for it in items:
        rec = raw[_lineno(it) - 1]
        stored = {lab: rec[f"OPTION-{lab}"] for lab in it.labels}
        prefixed += any(text.startswith(f"{lab}. ") for lab, text in stored.items())
        release_text = {lab: text.replace(f"{lab}. ", "") for lab, text in stored.items()}
        for view in official.present(it):
            shown = [release_text[view.extra["view_of"][lab]] for lab in view.labels]
            template = REL_USER_4 if len(shown) == 4 else REL_USER_2
            keys = ["choice_a", "choice_b", "choice_c", "choice_d"][:len(shown)]
            user = template.format(story=rec["STORY"], question=rec["QUESTION"],
                                   **dict(zip(keys, shown, strict=True)))
            assert official.prompt(view)[1]["content"] == user, view.id
            assert not re.search(r"^[A-D]\. [A-D]\. ", user, re.MULTILINE), view.id
    assert prefixed == 40  # the Strange Story items whose options carry their letter


def test_a_constant_yes_or_no_picks_the_option_of_that_text():
    """The constant-reply baseline names the option whose text is the constant; with the
    letter left in the stored text ("A. Yes") no option would be "Yes"."""
    raw = _raw_lines("Strange Story Task")
    items = [it for it in real("tombench") if it.extra["task"] == "Strange Story Task"
             and raw[_lineno(it) - 1]["OPTION-A"].startswith("A. ")]
    yes_no = [it for it in items if {t for _, t in it.options} == {"Yes", "No"}]
    assert len(yes_no) > 20
    for it in yes_no:
        for view in bench.get("tombench").protocol("official").present(it):
            for constant in ("Yes", "No"):
                label = constant_reply(view, constant).removesuffix(")")
                assert view.option_text(label) == constant, (view.id, constant)


def test_the_release_bugs_and_differences_of_the_runner_are_listed():
    rows = {d.aspect: d for d in bench.get("tombench").protocol("official").deviations}
    twos = [it for it in real("tombench") if len(it.options) == 2]
    assert str(len(twos)) in rows["two choices"].release and rows["two choices"].broken
    for aspect in ("option mapping", "majority", "ability"):
        assert not rows[aspect].broken
    loaded = real("tombench")
    repeated = [it for it in loaded if len({t for _, t in it.options}) < len(it.options)]
    assert f"{len(repeated)} Unexpected Outcome Test items" in rows["option mapping"].release
    raw_abilities = [rec["能力\nABILITY"] for t in tombench.TASKS for rec in _raw_lines(t)]
    spaced = [a for a in raw_abilities if a != a.strip()]
    assert len(spaced) == 1 and f"'{spaced[0]}'" in rows["ability"].release
    others = sum(a == spaced[0].strip() for a in raw_abilities)
    assert f"other {others} of its ability" in rows["ability"].here
