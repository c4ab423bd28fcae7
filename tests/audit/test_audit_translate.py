"""Translation prompts, strict code extraction, output caps and the recompile deviation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.audit import (
    PROMPTS,
    RULES,
    Auditor,
    Translator,
    build_translators,
    extract_code,
    scripted_translator,
)
from cogrsi_lib.audit.audit import AuditConfig
from cogrsi_lib.audit.handwritten import NO_TRANSLATION, NOTHING_REACHED, fenced
from cogrsi_lib.audit.translate import (
    API_TEXT,
    MAX_HEAD,
    MAX_LINE,
    translation_format,
    translation_lines,
)
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.llm.reply_format import CHARS_PER_TOKEN

CODE = "def applies(world, q):\n    return True\n\ndef predict(world, q):\n    return 'box'\n"


FORMAT = translation_format(768)
PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"


@pytest.mark.parametrize("reply", [
    f"```python\n{CODE}```",
    f"  ```python\n{CODE}```\n",
    f"```python\nimport math\n\nLIMIT = 3\n\n{CODE}```",
    "```python\ndef applies(world, q) -> bool:\n    return True\n\n\n"
    "def predict(world, q) -> str:\n    return 'box'\n```",
])
def test_extract_code_reads_one_block_that_defines_both(reply):
    got = extract_code(reply, FORMAT)
    assert got is not None and got == reply.strip()[len("```python\n"):-3]
    assert "def applies" in got and "def predict" in got


@pytest.mark.parametrize("reply", [
    "no code at all",
    CODE,  # not fenced: strict parsing refuses it
    f"Sure.\n```python\n{CODE}```",  # nothing but the block
    f"```python\n{CODE}```\ndone",
    f"```python\n{CODE}",  # never closed (cut off)
    "```python\ndef applies(world, q):\n    return True\n```",  # predict missing
    "```python\ndef predict(world, q):\n    return 1\n\ndef applies(world, q):\n    return 1\n```",
    "```python\ndef applies(world, q):\n    return True\n```\n"
    "```python\ndef predict(world, q):\n    return 'box'\n```",  # two blocks
    f"```javascript\n{CODE}```",
    "```python\n    def applies(world, q):\n        return 1\n    def predict(world, q):\n"
    "        return 1\n```",  # not top level
    "```python\n" + "x = 1\n" * 200 + CODE + "```",  # more lines than the cap allows
])
def test_extract_code_refuses(reply):
    assert extract_code(reply, FORMAT) is None
    assert not FORMAT.ok(reply)


def longest_reply(max_tokens: int, extra_body_line: bool = False) -> str:
    """The longest reply of the form under ``max_tokens`` (or with one body line too many)."""
    n = translation_lines(max_tokens)
    full = "x" * MAX_LINE + "\n"
    body = ("    " + "y" * (MAX_LINE - 4) + "\n") * (n + extra_body_line)
    head = "," + "z" * (MAX_HEAD - 1) + ":\n"
    return (f"```python\n{full * n}def applies(world, q{head}{body}"
            f"def predict(world, q{head}{body}```")


@given(st.integers(min_value=170, max_value=20_000))
@settings(max_examples=60, deadline=None)
def test_the_longest_reply_of_the_form_fits_the_cap(max_tokens):
    fmt = translation_format(max_tokens)
    longest = longest_reply(max_tokens)
    assert fmt.ok(longest)
    assert len(longest) <= CHARS_PER_TOKEN * max_tokens
    assert not fmt.ok(longest_reply(max_tokens, extra_body_line=True))
    assert not fmt.ok(longest.replace("    y", "    yy", 1))  # a line one character too long


def test_every_reference_translation_has_the_form_at_the_cpu_cap():
    cap = yaml.safe_load(PARAMS.read_text())["audit"]["max_tokens"]
    fmt = translation_format(cap)
    for rule in RULES:
        for code in (rule.code_a, rule.code_b):
            assert code is None or fmt.ok(fenced(code)), rule.rule_id


def test_prompts_show_the_api_and_the_rule_and_nothing_about_its_origin():
    t = Translator("A", ScriptedBackend(), "literal")
    for prompt in PROMPTS:
        t.prompt = prompt
        body = prompt_text_of(t, "When X: Y.")
        assert API_TEXT.strip() in body and "Rule:\nWhen X: Y.\n" in body
        assert "applies(world, q)" in body and "predict(world, q)" in body
        for word in ("loop", "kept", "admitted", "registered", "valid"):
            assert word not in body.replace(API_TEXT.strip(), "").lower()
    assert "literally" in PROMPTS["literal"] and "face value" in PROMPTS["plain"]
    assert PROMPTS["literal"] != PROMPTS["plain"]


def prompt_text_of(t: Translator, text: str) -> str:
    return "\n".join(m.content for m in t.messages(text))


def test_scripted_translator_returns_each_roles_fixed_code():
    a, b = scripted_translator("A"), scripted_translator("B")
    ta, tb = Translator("A", a, "literal"), Translator("B", b, "plain")
    for rule in RULES:
        assert ta.translate(rule.text).code == rule.code_a.strip("\n") + "\n"
        assert tb.translate(rule.text).code == rule.code_b.strip("\n") + "\n"
    miss = ta.translate("When nothing: nothing.")
    assert miss.status == "no_code" and miss.reply == NO_TRANSLATION
    assert a.jobs[0].request.params.max_tokens == 8192


def test_a_reply_cut_by_the_cap_is_recorded_as_capped():
    long_reply = "Let me think. " * 50 + fenced(CODE)
    t = Translator("B", ScriptedBackend(long_reply), max_tokens=20)
    tr = t.translate("When X: Y.")
    assert tr.capped and tr.finish_reason == "length" and tr.status == "capped"
    assert tr.code is None and "20-token output cap" in tr.no_code_reason()
    assert tr.completion_tokens == 20
    done = Translator("B", ScriptedBackend(fenced(CODE)), max_tokens=2000).translate("When X: Y.")
    assert not done.capped and done.ok


def test_recompile_with_a_larger_cap_keeps_both_verdicts(sample):
    rule = NOTHING_REACHED
    wordy = fenced("# I will reason about every event first.\n" * 40 + rule.code_b)

    def respond(job):
        return wordy if f"Rule:\n{rule.text}\n" in prompt_text(job) else NO_TRANSLATION

    a = Translator("A", scripted_translator("A"), "literal", max_tokens=2048)
    b = Translator("B", ScriptedBackend(respond), "plain", max_tokens=200)
    before_only = Auditor(sample, [a, b], AuditConfig()).audit(rule.text, "r")
    assert before_only.verdict.verdict == "ambiguous"
    assert "B: no_code" in before_only.verdict.reason and before_only.translations[1].capped
    assert before_only.recompiled == () and before_only.before_recompile is None

    audit = Auditor(sample, [a, b], AuditConfig(recompile_max_tokens=8192)).audit(rule.text, "r")
    assert audit.verdict.verdict == "valid"
    assert audit.recompiled == ("B",)
    assert audit.before_recompile is not None and audit.before_recompile.verdict == "ambiguous"
    row = audit.row()
    assert row["verdict_before_recompile"] == "ambiguous" and row["verdict"] == "valid"
    assert audit.translations[1].max_tokens == 8192 and not audit.translations[1].capped


def test_translators_on_one_backend_translate_and_recompile_in_one_stream():
    """Both roles' first replies go out together, then every recompile together (two model
    batches, not four), and each translation is the one translate_many gives."""
    from cogrsi_lib.audit.translate import translate_all

    short, wordy = NOTHING_REACHED, RULES[0]
    long_code = fenced("# I will reason about every event first.\n" * 40 + wordy.code_b)

    def respond(job):
        return long_code if f"Rule:\n{wordy.text}\n" in prompt_text(job) else fenced(
            short.code_a)

    backend = ScriptedBackend(respond)
    a = Translator("A", backend, "literal", seed=0, max_tokens=200)
    b = Translator("B", backend, "plain", seed=1, max_tokens=200)
    texts = [short.text, wordy.text]
    done = translate_all([a, b], texts, recompile_cap=4096)
    assert backend.batches == [4, 2]
    for k, tr in enumerate((a, b)):
        assert [first for first, _ in done[k]] == tr.translate_many(texts)
        assert done[k][0][1] is None  # not capped: no second reply
        assert done[k][1][1] == tr.translate_many([wordy.text], 4096)[0]
        assert done[k][1][0].capped and not done[k][1][1].capped
    assert translate_all([a, b], texts)[0][1][1] is None  # no recompile cap, no recompile


def test_build_translators_checks_its_specs():
    with pytest.raises(ValueError, match="'translators': List should have at least 2 items"):
        build_translators([{"model": "scripted"}])
    with pytest.raises(ValueError, match="unknown key 'translators.0.bogus'"):
        build_translators([{"name": "A", "bogus": 1}, {"name": "B"}])
    with pytest.raises(ValueError, match="different names"):
        build_translators([{"name": "A"}, {"name": "A"}])
    with pytest.raises(ValueError, match="'translators.0.prompt': Input should be 'literal'"):
        build_translators([{"name": "A", "prompt": "nope"}, {"name": "B"}])
    with pytest.raises(ValueError, match="unknown key 'translators.1.model.engine.max_len'"):
        build_translators([{"name": "A"}, {"name": "B", "model": {
            "backend": "vllm", "engine": {"max_len": 4096}}}])
    with pytest.raises(ValueError, match="unknown scripted variant 'alt'"):
        build_translators([{"name": "A"}, {"name": "B", "model": {
            "backend": "scripted", "variant": "alt"}}])


def test_one_backend_spec_is_built_once_for_both_roles():
    spec = {"backend": "fake", "reply": fenced(CODE)}
    a, b = build_translators([{"name": "A", "model": spec, "prompt": "literal", "seed": 0},
                              {"name": "B", "model": spec, "prompt": "plain", "seed": 1}],
                             max_tokens=512)
    assert a.backend is b.backend
    assert (a.prompt, b.prompt, a.seed, b.seed, a.max_tokens) == ("literal", "plain", 0, 1, 512)
    assert a.request("r").params.seed == 0 and b.request("r").params.seed == 1
