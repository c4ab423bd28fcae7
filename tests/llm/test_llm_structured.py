"""Reply formats: the strict parser, the cache key, and what each backend is sent."""

from __future__ import annotations

import importlib.util
import itertools

import pytest
from pydantic import Field

from cogrsi_lib.llm import CachedBackend, Request, ScriptedBackend, build_backend
from cogrsi_lib.llm.cache import cache_key
from cogrsi_lib.llm.reply_format import (
    ReplyError,
    ReplyFormat,
    UnsupportedReplyFormat,
    enum_of,
    reasoning_chars,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.tally import open_tally
from cogrsi_lib.llm.types import Job

from .recorder import recording_server

ANSWER = reply_model(
    "TestAnswer", reasoning=(str, text_field(20)), answer=(enum_of(["A", "B"]), ...),
    confidence=(float, Field(ge=0, le=1)),
)
JSON = ReplyFormat.json("test.answer", ANSWER)
CHOICE = ReplyFormat.choice("test.choice", ["basket", "box"])
REGEX = ReplyFormat.regex("test.regex", r"Variable: (belief|desire)")


# -- the strict parser ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"reasoning":"she left","answer":"A","confidence":0.5}',
    ' {"reasoning": "", "answer": "B", "confidence": 1}\n',
    '```json\n{"reasoning":"x","answer":"A","confidence":0}\n```',
])
def test_json_format_accepts_conforming_replies(text) -> None:
    r = JSON.parse(text)
    assert r.answer in ("A", "B") and 0 <= r.confidence <= 1


@pytest.mark.parametrize("text,why", [
    ('{"reasoning":"x","answer":"C","confidence":0.5}', "answer"),
    ('{"reasoning":"x","answer":"A"}', "confidence"),
    ('{"reasoning":"x","answer":"A","confidence":0.5,"extra":1}', "extra"),
    ('{"reasoning":"x","answer":"A","answer":"B","confidence":0.5}', "duplicate"),
    ('{"reasoning":"x","answer":"A","confidence":NaN}', "non-finite"),
    ('{"reasoning":"x","answer":"A","confidence":1.5}', "confidence"),
    ('{"reasoning":"x","answer":"A","confidence":true}', "confidence"),
    ('{"reasoning":"' + "y" * 21 + '","answer":"A","confidence":0.5}', "reasoning"),
    ('Answer: A', "not one json value"),
    ('["A"]', "not an object"),
    ('{"reasoning":"x","answer":"A","confidence":0.5} and more', "not one json value"),
])
def test_json_format_refuses_everything_else_with_a_reason(text, why) -> None:
    with pytest.raises(ReplyError) as err:
        JSON.parse(text)
    assert why in err.value.reason.lower()
    assert not JSON.ok(text)


def test_choice_and_regex_formats_match_the_whole_reply() -> None:
    assert CHOICE.parse(" box\n") == "box"
    for bad in ("Box", "the box", "basket box"):
        assert not CHOICE.ok(bad)
    assert REGEX.parse("Variable: desire").group(1) == "desire"
    assert not REGEX.ok("Variable: desire, I think")
    assert not REGEX.ok(None)


def test_formats_are_values_and_json_keeps_the_field_order() -> None:
    again = reply_model(
        "TestAnswer", reasoning=(str, text_field(20)), answer=(enum_of(["A", "B"]), ...),
        confidence=(float, Field(ge=0, le=1)),
    )
    assert again is ANSWER and ReplyFormat.json("test.answer", again) == JSON
    assert hash(ReplyFormat.json("test.answer", again)) == hash(JSON)
    assert list(JSON.schema()["properties"]) == ["reasoning", "answer", "confidence"]
    assert ReplyFormat.json("other.family", ANSWER) != JSON
    with pytest.raises(ValueError):
        ReplyFormat.choice("x", ["a", "a"])
    with pytest.raises(TypeError):
        CHOICE.schema()


def test_reasoning_budget_fits_the_cap() -> None:
    assert reasoning_chars(100, 30) == 140
    assert reasoning_chars(10, 30) == 16  # the floor


# -- the cache key ---------------------------------------------------------------------------------


def test_an_enforced_format_is_part_of_the_cache_key_and_a_free_one_is_not() -> None:
    plain = Request.of("q", max_tokens=8)
    free = Request.of("q", max_tokens=8, reply=JSON, structured=False)
    enforced = Request.of("q", max_tokens=8, reply=JSON)
    other = Request.of("q", max_tokens=8, reply=CHOICE)
    keys = [cache_key("m", Job(r, 0)) for r in (plain, free, enforced, other)]
    assert keys[0] == keys[1]
    assert len(set(keys[1:])) == 3


def test_cached_backend_keeps_constrained_and_free_replies_apart(tmp_path) -> None:
    inner = ScriptedBackend(lambda j: "box" if j.request.constraint else "I think box")
    b = CachedBackend(inner, tmp_path)
    c1 = b.generate_one(Request.of("q", reply=CHOICE))[0]
    c2 = b.generate_one(Request.of("q", reply=CHOICE, structured=False))[0]
    assert (c1.text, c1.structured) == ("box", True)
    assert (c2.text, c2.structured) == ("I think box", False)
    again = b.generate_one(Request.of("q", reply=CHOICE))[0]
    assert again.from_cache and again.structured and inner.calls == 2


# -- the tally -------------------------------------------------------------------------------------


def test_tally_counts_parse_rate_cap_and_tokens_per_family() -> None:
    replies = itertools.cycle(["box", "boxes", "basket"])
    b = ScriptedBackend(lambda j: next(replies) if j.request.reply else "one two three four")
    with open_tally() as t:
        b.generate([Request.of("q", reply=CHOICE, n=3), Request.of("free", max_tokens=2)])
    rows = {r["family"]: r for r in t.rows()}
    assert rows["test.choice"]["calls"] == 3 and rows["test.choice"]["parsed"] == 2
    assert rows["test.choice"]["parse_rate"] == pytest.approx(2 / 3)
    assert rows["test.choice"]["structured_calls"] == 3
    assert rows["free"]["parse_rate"] is None and rows["free"]["cap_rate"] == 1.0
    b.generate([Request.of("q", reply=CHOICE)])  # the tally is closed: not counted
    assert t.rows()[1]["calls"] == 3
    with open_tally(skip_kinds=("fake",)) as models_only:
        b.generate([Request.of("q", reply=CHOICE)])  # a scripted stand-in is no model
    assert models_only.rows() == []


# -- vLLM: the constraint reaches SamplingParams -----------------------------------------------


def test_vllm_gets_structured_outputs_params_of_each_kind(fake_vllm) -> None:
    b = build_backend({"backend": "vllm", "model": "m"})
    reqs = [Request.of("a", reply=JSON), Request.of("b", reply=CHOICE),
            Request.of("c", reply=REGEX), Request.of("d", reply=REGEX, structured=False),
            Request.of("e")]
    out = b.generate(reqs)
    params = b.llm.calls[0]
    so = [p.structured_outputs for p in params]
    assert so[0].json == JSON.schema() and so[0].disable_any_whitespace
    assert so[1].choice == ["basket", "box"]
    assert so[2].regex == REGEX.spec
    assert so[3] is None and so[4] is None
    assert [cs[0].structured for cs in out] == [True, True, True, False, False]


# -- OpenAI-compatible: the request body a real server receives --------------------------------


needs_openai = pytest.mark.skipif(importlib.util.find_spec("openai") is None,
                                  reason="the 'openai' extra is not installed")


@needs_openai
def test_openai_response_format_carries_the_json_schema() -> None:
    with recording_server("box") as server:
        b = build_backend({"backend": "openai", "model": "m", "base_url": server.url})
        b.generate([Request.of("a", reply=JSON), Request.of("b", reply=JSON, structured=False)])
        first, second = server.by_prompt()
        with pytest.raises(UnsupportedReplyFormat, match="structured_outputs: vllm"):
            b.generate([Request.of("c", reply=REGEX)])
    rf = first["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
    assert rf["json_schema"]["schema"] == JSON.schema()
    assert rf["json_schema"]["name"] == "test_answer"
    assert "response_format" not in second and "structured_outputs" not in second


@needs_openai
def test_openai_vllm_mode_sends_structured_outputs_of_each_kind() -> None:
    with recording_server("box") as server:
        b = build_backend({"backend": "openai", "model": "m", "base_url": server.url,
                           "structured_outputs": "vllm"})
        out = b.generate([Request.of("a", reply=JSON), Request.of("b", reply=CHOICE),
                          Request.of("c", reply=REGEX)])
        seen = server.by_prompt()
    so = [s["structured_outputs"] for s in seen]
    assert so[0] == {"json": JSON.schema(), "disable_any_whitespace": True}
    assert so[1] == {"choice": ["basket", "box"]} and so[2] == {"regex": REGEX.spec}
    assert all(s["chat_template_kwargs"] == {"enable_thinking": False} for s in seen)
    assert all("response_format" not in s for s in seen)
    assert out[1][0].text == "box" and out[1][0].structured


def test_openai_backend_rejects_an_unknown_structured_mode() -> None:
    with pytest.raises(ValueError, match="structured_outputs"):
        build_backend({"backend": "openai", "model": "m", "base_url": "http://x",
                       "structured_outputs": "guided"})
