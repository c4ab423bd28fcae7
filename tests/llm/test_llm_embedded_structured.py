"""The embedded model under each kind of reply format: xgrammar in the real decode loop."""

from __future__ import annotations

import pytest
from pydantic import Field

from cogrsi_lib.llm import Request
from cogrsi_lib.llm.reply_format import ReplyFormat, enum_of, reply_model, text_field

pytestmark = pytest.mark.model

STORY = ("1 Sally entered the kitchen.\n2 Anne entered the kitchen.\n3 The ball is in the basket."
         "\n4 Sally exited the kitchen.\n5 Anne moved the ball to the box.")
QUESTION = "Where will Sally look for the ball?"
ANSWER = reply_model("EmbeddedTestAnswer", reasoning=(str, text_field(60)),
                     answer=(enum_of(["basket", "box"]), ...),
                     confidence=(float, Field(ge=0, le=1)))
FORMATS = {
    "json": ReplyFormat.json("test.json", ANSWER),
    "choice": ReplyFormat.choice("test.choice", ["basket", "box"]),
    "regex": ReplyFormat.regex("test.regex", r"Answer: (basket|box)\nBecause: [a-z ]{1,30}"),
}


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_every_sampled_reply_has_the_declared_form(embedded_model, kind) -> None:
    fmt = FORMATS[kind]
    prompt = f"{STORY}\n\n{QUESTION} Reply in this form: {fmt.spec}"
    req = Request.of(prompt, reply=fmt, n=4, temperature=1.0, max_tokens=80, seed=3)
    out = embedded_model.generate_one(req)
    for c in out:
        fmt.parse(c.text)  # raises on a malformed reply
        assert c.structured and c.finish_reason == "stop"
        assert 1 <= c.completion_tokens < 80


def test_the_same_prompt_generated_freely_is_not_constrained(embedded_model) -> None:
    fmt = FORMATS["choice"]
    free = Request.of(f"{STORY}\n\n{QUESTION}", reply=fmt, structured=False, max_tokens=24)
    (c,) = embedded_model.generate_one(free)
    assert not c.structured
    (d,) = embedded_model.generate_one(Request.of(f"{STORY}\n\n{QUESTION}", reply=fmt,
                                                  max_tokens=24))
    assert d.structured and d.text in ("basket", "box") and d.completion_tokens <= 3


def test_backends_on_the_same_weights_share_one_load(embedded_model, tmp_path) -> None:
    """A second backend on the same GGUF reuses the process's loaded model; one with an
    adapter merges it into a copy, and the shared base keeps its weights."""
    import torch
    from peft import LoraConfig, get_peft_model

    from cogrsi_lib.llm.embedded import EmbeddedBackend

    embedded_model.load()
    other = EmbeddedBackend(max_batch=2)
    other.load()
    assert other._model is embedded_model._model and other._tok is embedded_model._tok
    before = {k: v.clone() for k, v in embedded_model._model.state_dict().items()}
    # a random LoRA adapter (B not zero, so merging it changes the weights)
    peft = get_peft_model(type(embedded_model._model)(embedded_model._model.config),
                          LoraConfig(r=2, target_modules=["q_proj"], init_lora_weights=False))
    peft.save_pretrained(str(tmp_path / "adapter"))
    tuned = EmbeddedBackend(adapter=tmp_path / "adapter", max_batch=2)
    tuned.load()
    assert tuned._model is not embedded_model._model and tuned._tok is embedded_model._tok
    after = embedded_model._model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    q = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(tuned._model.state_dict()[q], before[q])
    again = EmbeddedBackend(adapter=tmp_path / "adapter")
    again.load()
    assert again._model is tuned._model
