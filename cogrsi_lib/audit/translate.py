"""Translate rule texts into ``applies``/``predict`` code with two translator models (CogRSI §4.3).

Each translator is a :class:`~cogrsi_lib.llm.Backend` with a prompt and a seed.  It sees the
rule text and the world/question API (``API.md``) only: never which loop wrote the rule or
whether it was kept, and it is told to follow the words literally.  The reply's form is
declared once (:func:`translation_format`, family ``audit.translation``): one ```python block
and nothing else, whose top-level lines define ``applies(world, q)`` and then
``predict(world, q)`` (other top-level lines, such as imports or helpers, may come first); the
number of lines is bounded by the output cap.  A reply that hits the output cap
(``finish_reason == "length"``) is recorded as capped; a reply that breaks the form has no
code (the paper's recompile deviation, App. C J105).  The code is run only in the sandbox.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.reply_format import CHARS_PER_TOKEN, ReplyFormat
from cogrsi_lib.llm.types import Completion, Message, Request, SamplingParams

if TYPE_CHECKING:
    from cogrsi_lib.audit.settings import TranslatorSpec

API_TEXT = resources.files("cogrsi_lib.audit").joinpath("API.md").read_text(encoding="utf-8")

#: Two wordings of the same instructions, so that one model can play both translators.
PROMPTS: dict[str, str] = {
    "literal": (
        "You translate one rule about what story characters believe into Python code.\n"
        "Follow the rule's words literally. Do not correct the rule, do not add cases it does "
        "not state, and do not use knowledge of your own about who knows what: the code must "
        "say exactly what the rule says, even where the rule is wrong.\n\n"
        "{api}\n\n"
        "Rule:\n{rule}\n\n"
        "Reply with one ```python code block that defines applies(world, q) and "
        "predict(world, q), and nothing else."
    ),
    "plain": (
        "Below is the documentation of a small Python API for story worlds, then a rule.\n\n"
        "{api}\n\n"
        "Rule:\n{rule}\n\n"
        "Write applies(world, q), true exactly when the rule's condition holds for the "
        "question, and predict(world, q), the answer the rule gives. Take every word of the "
        "rule at face value; if the rule is mistaken, your code must be mistaken in the same "
        "way. Answer with a single ```python block."
    ),
}
SYSTEM = "You are a careful programmer who turns natural-language rules into Python."

FAMILY = prompt_family("audit.translation", "regex")
#: the longest line of translated code
MAX_LINE = 80
#: the longest text between ``def applies(world, q`` (or ``predict``) and its closing ``:``
MAX_HEAD = 20
_OPEN, _CLOSE = "```python\n", "```"
_DEFS = ("def applies(world, q", "def predict(world, q")


def translation_lines(max_tokens: int) -> int:
    """Lines allowed in each of the three parts (top level, ``applies``, ``predict``).

    Lines, their length and the fixed text are bounded jointly: the longest reply of the
    declared form has at most ``CHARS_PER_TOKEN * max_tokens`` characters, so (at the
    vocabulary's worst case of one token per ``CHARS_PER_TOKEN`` characters) it closes before
    the cap. Below 170 tokens the minimum of one line per part may still be cut off; that
    reply is recorded as ``capped``.
    """
    fixed = len(_OPEN) + len(_CLOSE) + sum(len(d) + MAX_HEAD + 2 for d in _DEFS)
    return max(1, (CHARS_PER_TOKEN * max_tokens - fixed) // (3 * (MAX_LINE + 1)))


def translation_format(max_tokens: int) -> ReplyFormat:
    """A ```python block and nothing else: optional top-level lines, ``def applies(world, q``
    ... with its body, ``def predict(world, q`` ... with its body; each body indented (blank
    lines aside), each line at most :data:`MAX_LINE` characters without backticks, and line
    counts from :func:`translation_lines` so that no reply of this form outruns the cap.
    Python syntax beyond that is the sandbox's to check."""
    n = translation_lines(max_tokens)
    line = rf"[^\n`]{{0,{MAX_LINE}}}\n"
    indented = rf" {{4}}[^\n`]{{0,{MAX_LINE - 4}}}\n"
    body = rf"{indented}({indented}|\n){{0,{n - 1}}}"
    head = rf"[^\n`]{{0,{MAX_HEAD}}}:\n"
    pattern = (rf"```python\n({line}){{0,{n}}}def applies\(world, q{head}{body}"
               rf"def predict\(world, q{head}{body}```")
    return ReplyFormat.regex(FAMILY, pattern)


def text_id(text: str) -> str:
    """A short stable id of a rule text: ``sha256:<12 hex>``."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def extract_code(reply: str, fmt: ReplyFormat) -> str | None:
    """The code of a reply that has the declared form, or ``None``."""
    if not fmt.ok(reply):
        return None
    body = reply.strip()
    return body[len(_OPEN): -len(_CLOSE)]


@dataclass(frozen=True)
class Translation:
    """One translator's reply for one rule text, parsed.

    ``status``: ``ok`` (code found), ``no_code`` (a finished reply without a usable block),
    ``capped`` (the reply hit ``max_tokens`` before a usable block) or ``failed`` (the request
    itself failed; ``error`` says why).
    """

    translator: str
    model: str
    prompt: str
    rule_sha: str
    reply: str
    code: str | None
    status: str
    finish_reason: str
    capped: bool
    max_tokens: int
    prompt_tokens: int
    completion_tokens: int
    from_cache: bool
    structured: bool = False
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def no_code_reason(self) -> str:
        if self.status == "failed":
            return f"the translation request failed: {self.error}"
        if self.status == "capped":
            return f"reply hit the {self.max_tokens}-token output cap without complete code"
        return "reply is not one python block defining applies and predict"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_translation(c: Completion, translator: str, prompt: str, text: str,
                      max_tokens: int, fmt: ReplyFormat | None = None) -> Translation:
    """Strict parse of one completion against its declared format."""
    code = extract_code(c.text, fmt or translation_format(max_tokens))
    capped = c.finish_reason == "length"
    status = "ok" if code is not None else ("capped" if capped else "no_code")
    if c.error:
        status = "failed"
    return Translation(
        translator=translator, model=c.model, prompt=prompt, rule_sha=text_id(text),
        reply=c.text, code=code, status=status, finish_reason=c.finish_reason, capped=capped,
        max_tokens=max_tokens, prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens, from_cache=c.from_cache, structured=c.structured,
        error=c.error,
    )


class Translator:
    """One translator role: a backend, a prompt wording, a seed and an output cap."""

    def __init__(self, name: str, backend: Backend, prompt: str = "literal", seed: int = 0,
                 temperature: float = 0.0, max_tokens: int = 8192, plays: str | None = None,
                 structured: bool = True):
        if prompt not in PROMPTS:
            raise ValueError(f"unknown translator prompt {prompt!r}; one of {sorted(PROMPTS)}")
        self.name = name
        self.backend = backend
        self.prompt = prompt
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.plays = plays
        self.structured = structured

    def messages(self, text: str) -> tuple[Message, ...]:
        body = PROMPTS[self.prompt].format(api=API_TEXT.strip(), rule=text.strip())
        return (Message("system", SYSTEM), Message("user", body))

    def request(self, text: str, max_tokens: int | None = None) -> Request:
        cap = max_tokens or self.max_tokens
        params = SamplingParams(n=1, temperature=self.temperature, max_tokens=cap,
                                seed=self.seed)
        return Request(self.messages(text), params, translation_format(cap), self.structured)

    def translate_many(self, texts: Sequence[str], max_tokens: int | None = None
                       ) -> list[Translation]:
        """One reply per text, generated as one batch."""
        cap = max_tokens or self.max_tokens
        reqs = [self.request(t, cap) for t in texts]
        outs = self.backend.generate(reqs) if texts else []
        return [parse_translation(cs[0], self.name, self.prompt, t, cap, r.reply)
                for t, r, cs in zip(texts, reqs, outs, strict=True)]

    def translate(self, text: str, max_tokens: int | None = None) -> Translation:
        return self.translate_many([text], max_tokens)[0]

    def flow(self, text: str, recompile_cap: int = 0
             ) -> Flow[tuple[Translation, Translation | None]]:
        """One text's translation as a flow (:mod:`cogrsi_lib.llm.flow`): the reply, then,
        when the output cap cut it and ``recompile_cap`` is larger, the reply again at that
        cap (App. C J105's recompile). Returns the first translation and the second (None
        when there was none): the requests :meth:`translate_many` sends for both."""
        first_request = self.request(text)
        [[reply]] = yield [first_request]
        first = parse_translation(reply, self.name, self.prompt, text, self.max_tokens,
                                  first_request.reply)
        if not (recompile_cap and first.status == "capped" and recompile_cap > first.max_tokens):
            return first, None
        again = self.request(text, recompile_cap)
        [[reply]] = yield [again]
        return first, parse_translation(reply, self.name, self.prompt, text, recompile_cap,
                                        again.reply)

    def describe(self) -> dict[str, Any]:
        return {
            "translator": self.name, "backend": self.backend.identity, "prompt": self.prompt,
            "seed": self.seed, "temperature": self.temperature, "max_tokens": self.max_tokens,
            "plays": self.plays or "", "structured": self.structured,
        }  # fmt: skip


def translate_all(translators: Sequence[Translator], texts: Sequence[str],
                  recompile_cap: int = 0) -> list[list[tuple[Translation, Translation | None]]]:
    """Per translator, per text, :meth:`Translator.flow`'s first and recompiled translation.
    The flows of translators that share a backend run as one stream (one model playing both
    roles translates every text for both at once, and a recompile goes out as soon as its
    first reply is back)."""
    by_backend: dict[int, list[int]] = {}
    for k, tr in enumerate(translators):
        by_backend.setdefault(id(tr.backend), []).append(k)
    out: list[list[tuple[Translation, Translation | None]]] = [[] for _ in translators]
    for roles in by_backend.values():
        flows = [translators[k].flow(t, recompile_cap) for k in roles for t in texts]
        done = run_flows(translators[roles[0]].backend, flows) if flows else []
        for j, k in enumerate(roles):
            out[k] = done[j * len(texts):(j + 1) * len(texts)]
    return out


@family_example(FAMILY)
def _example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first hand-written
    rule."""
    from cogrsi_lib.audit.handwritten import RULES

    return Translator("A", None, max_tokens=384).request(RULES[0].text)  # type: ignore[arg-type]


def build_translators(specs: Sequence[TranslatorSpec | Mapping[str, Any]],
                      max_tokens: int = 8192, base_dir: str | None = None,
                      structured: bool = True) -> list[Translator]:
    """Two translators from ``params.yaml: audit.translators``
    (:class:`~cogrsi_lib.audit.settings.TranslatorSpec`: ``name``, ``model``, ``prompt``,
    ``seed``, ``temperature``, ``plays``, ``max_tokens``). A model named by both roles is
    built once; ``backend: scripted`` serves the hand-written rules' fixed code for the
    role."""
    from pydantic import TypeAdapter, ValidationError

    from cogrsi_lib.audit.handwritten import scripted_translator
    from cogrsi_lib.audit.settings import Translators, TranslatorSpec
    from cogrsi_lib.settings import describe_errors

    given = [s if isinstance(s, TranslatorSpec) else dict(s) for s in specs]
    try:
        checked = TypeAdapter(Translators).validate_python(given)
    except ValidationError as err:
        raise ValueError(describe_errors(err, given, "translators")) from None
    out = []
    shared: dict[str, Backend] = {}
    for i, spec in enumerate(checked):
        name, prompt, seed = spec.role(i)
        if spec.model.backend == "scripted":  # the role's own reference code
            backend = spec.model.build(base_dir, {"default": partial(scripted_translator,
                                                                     "AB"[i])})
        else:
            key = spec.model.model_dump_json()
            if key not in shared:  # one model playing both roles is loaded once
                shared[key] = spec.model.build(base_dir)
            backend = shared[key]
        out.append(Translator(
            name, backend, prompt=prompt, seed=seed, temperature=spec.temperature,
            max_tokens=spec.max_tokens or max_tokens, plays=spec.plays, structured=structured,
        ))
    return out
