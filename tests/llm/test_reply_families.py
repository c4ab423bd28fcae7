"""Every prompt family's declared format reaches every backend's request, and the embedded
model's reply of every family parses against it."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

import cogrsi_lib
from cogrsi_lib import bench
from cogrsi_lib.llm import build_backend
from cogrsi_lib.llm import families as families_module
from cogrsi_lib.llm.fake import ScriptedBackend
from cogrsi_lib.llm.reply_format import (
    UnsupportedReplyFormat,
    describe,
    openai_response_format,
    vllm_structured_outputs,
)
from cogrsi_lib.reply_families import example_requests, families

from .fake_vllm import FakeStructured
from .recorder import recording_server

REQUESTS = example_requests()
FAMILIES = sorted(REQUESTS)
#: every family the package declares (cogrsi_lib/llm/families.py): the expected set
DECLARED = families()
LIBRARY = Path(cogrsi_lib.__file__).parent


def test_every_declared_family_has_an_example_in_its_format() -> None:
    """A family declared without an example, or whose example replies in another family's
    format or another kind, fails here."""
    assert sorted(DECLARED) == FAMILIES
    for family, req in REQUESTS.items():
        assert (req.reply.family, req.reply.kind) == (family, DECLARED[family].kind)


def test_the_families_sent_by_reader_eval_and_the_nested_answer_are_declared() -> None:
    """Every benchmark whose official protocol holds its reply to a form has its family here
    (reader_eval sends them to real backends), and so has the nested benchmark's answer."""
    official = {f"bench.official.{n}" for n in bench.names()
                if bench.get(n).protocol("official").answer is not None}
    assert official and official <= set(FAMILIES)
    assert {f for f in FAMILIES if f.startswith("bench.official.")} == official
    assert "nested.answer" in FAMILIES


def _format_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "ReplyFormat"
                and node.func.attr in ("json", "choice", "regex") and node.args):
            yield node


def test_no_reply_format_names_an_undeclared_family() -> None:
    """Every ReplyFormat of the package is built from a family constant (a name declared by
    prompt_family, or a parameter), never from a literal name that escapes the registry."""
    literal = []
    for path in sorted(LIBRARY.rglob("*.py")):
        for call in _format_calls(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(call.args[0], ast.Constant):
                literal.append(f"{path.relative_to(LIBRARY)}:{call.lineno}")
    assert not literal


def test_the_registry_refuses_a_family_declared_twice_or_an_example_of_another_kind(
        monkeypatch) -> None:
    monkeypatch.setattr(families_module, "_FAMILIES", dict(families_module._FAMILIES))
    with pytest.raises(ValueError, match="already declared by cogrsi_lib.reader.prompts"):
        families_module.prompt_family("answer.direct", "json")
    with pytest.raises(ValueError, match="no declaration"):
        families_module.family_example("never.declared")(lambda: REQUESTS["answer.direct"])
    with pytest.raises(ValueError, match="kind is one of"):
        families_module.prompt_family("test.kind", "xml")  # type: ignore[arg-type]
    families_module.prompt_family("test.choice", "choice")
    assert "test.choice" in families_module.declared()
    with pytest.raises(ValueError, match="has no example request"):
        families_module.example_request("test.choice")
    families_module.family_example("test.choice")(lambda: REQUESTS["answer.direct"])
    with pytest.raises(ValueError, match=r"replies in \('answer.direct', 'json'\)"):
        families_module.example_request("test.choice")


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
