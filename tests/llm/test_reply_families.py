"""Every prompt family's declared format reaches every backend's request, and the embedded
model's reply of every family parses against it."""

from __future__ import annotations

import importlib.util

import pytest

from cogrsi_lib.llm import build_backend
from cogrsi_lib.llm.fake import ScriptedBackend
from cogrsi_lib.llm.reply_format import (
    UnsupportedReplyFormat,
    describe,
    openai_response_format,
    vllm_structured_outputs,
)
from cogrsi_lib.reply_families import example_requests

from .fake_vllm import FakeStructured
from .recorder import recording_server

REQUESTS = example_requests()
FAMILIES = sorted(REQUESTS)

#: every family of the project; a new prompt family must declare its format and join here
EXPECTED = {
    "answer.reasoned", "answer.direct", "reader.perception", "reader.arbitration",
    "simtom.perspective", "loops.builder", "loops.builder.principle", "loops.gepa.reflection",
    "harness.route.variable", "harness.route.skill", "harness.draft", "harness.dimension",
    "harness.categories", "harness.reflector", "scorecard.bare", "scorecard.number",
    "scorecard.perspective", "scorecard.store", "pddl.problem", "pddl.domain_problem",
    "pddl.actions", "pddl.answer", "audit.translation",
}  # fmt: skip


def test_every_family_is_catalogued_once() -> None:
    assert set(FAMILIES) == EXPECTED


@pytest.mark.parametrize("family", FAMILIES)
def test_the_prompt_states_the_declared_form(family) -> None:
    req = REQUESTS[family]
    text = "\n".join(m.content for m in req.messages)
    if req.reply.kind == "json":
        # the instruction names every top-level field of the schema, in order
        fields = list(req.reply.schema()["properties"])
        if family != "reader.perception":  # its keys are the line numbers
            at = 0
            for f in fields:  # each field after the one before it
                at = text.find(f'"{f}"', at)
                assert at >= 0, (family, f)
    assert req.structured and req.constraint == req.reply


# -- the constraint reaches each backend's request --------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_scripted_backend_sees_the_constraint(family) -> None:
    b = ScriptedBackend("x")
    (c,) = b.generate_one(REQUESTS[family])
    assert b.jobs[0].request.constraint == REQUESTS[family].reply and c.structured


def test_vllm_receives_every_familys_structured_outputs(fake_vllm) -> None:
    b = build_backend({"backend": "vllm", "model": "m"})
    b.generate([REQUESTS[f] for f in FAMILIES])
    sent = [p for call in b.llm.calls for p in call]
    for family, params in zip(FAMILIES, sent, strict=True):
        expected = FakeStructured(**vllm_structured_outputs(REQUESTS[family].reply))
        assert params.structured_outputs == expected, family


@pytest.mark.skipif(importlib.util.find_spec("openai") is None, reason="no openai extra")
@pytest.mark.parametrize("mode", ["response_format", "vllm"])
def test_an_openai_compatible_server_receives_every_familys_constraint(mode) -> None:
    with recording_server() as server:
        b = build_backend({"backend": "openai", "model": "m", "base_url": server.url,
                           "structured_outputs": mode, "concurrency": 1})
        for family in FAMILIES:
            server.seen.clear()
            fmt = REQUESTS[family].reply
            if mode == "response_format" and fmt.kind != "json":
                with pytest.raises(UnsupportedReplyFormat):
                    b.generate([REQUESTS[family]])
                continue
            b.generate([REQUESTS[family]])
            (body,) = server.seen
            if mode == "vllm":
                assert body["structured_outputs"] == vllm_structured_outputs(fmt), family
            else:
                assert body["response_format"] == openai_response_format(fmt), family


# -- the embedded model: one reply of every family parses --------------------------------------


@pytest.mark.model
def test_one_embedded_reply_of_every_family_parses(embedded_model) -> None:
    """Greedy, at the family's example cap: under the format every reply must parse."""
    outs = embedded_model.generate([REQUESTS[f] for f in FAMILIES])
    # each family's format reached the decode loop: its grammar was compiled for the matcher
    compiled = set(embedded_model._grammars)
    assert {(REQUESTS[f].reply.kind, REQUESTS[f].reply.spec) for f in FAMILIES} <= compiled
    bad = {}
    for family, cs in zip(FAMILIES, outs, strict=True):
        c = cs[0]
        assert c.structured
        if not REQUESTS[family].reply.ok(c.text):
            bad[family] = (c.finish_reason, c.completion_tokens, c.text[-80:])
    assert not bad, bad


def test_describe_needs_a_hint_for_a_regex() -> None:
    fmt = REQUESTS["audit.translation"].reply
    with pytest.raises(ValueError, match="hint"):
        describe(fmt)
    assert describe(fmt, "Reply with code.") == "Reply with code."
