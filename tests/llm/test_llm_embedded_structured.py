"""The embedded model under each kind of reply format: xgrammar in the real decode loop."""

from __future__ import annotations

import pytest
from pydantic import Field

from cogrsi_lib.llm import Request
from cogrsi_lib.llm.reply_format import ReplyFormat, enum_of, reply_model, text_field

pytestmark = pytest.mark.slow

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
