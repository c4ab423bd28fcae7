"""Fix phase 1: the recursive-perspective prompt (plan §10, §18 intervention order 1).

No free chain of thought: the model fills a compact external state, one slot per line,
built only for the agents the question names, then answers::

    WORLD: <where the object is now>
    A_OBSERVED: ...            (one per distinct agent of the chain)
    A_MODEL_OF_B: ...          (depth 2)
    A_MODEL_OF_B_MODEL_OF_C: ...  (depth 3, and so on)
    ANSWER: <one of the options>
    CONFIDENCE: <0..1>

The goal is perspective isolation, not verbose reasoning, so the reply format (family
``scorecard.perspective``, :func:`perspective_format`) is a regular expression: exactly these
lines in this order, each slot at most :func:`slot_chars` characters (so that the reply fits
its token cap), the answer one of the options and the confidence a number from 0 to 1;
parsing also holds each slot to ``max_slot_words`` words.  With
``state=False`` only ANSWER and CONFIDENCE are asked for: the same format with the
state construction disabled, which is this intervention's ablation (Gate E, §16).
Items without a belief chain (``meta["chain"]``) are not belief questions; they go to the
bare prompt, so the other suites measure the same model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow
from cogrsi_lib.llm.reply_format import CHARS_PER_TOKEN, ReplyError, ReplyFormat
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.nested.reply import Reply
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import FlowSystem
from cogrsi_lib.scorecard.answers import item_chain, json_record
from cogrsi_lib.scorecard.direct import DEFAULT_MAX_TOKENS, DirectSystem

MARKER = "Build only the state required for the answer"
MAX_SLOT_WORDS = 25
MAX_SLOT_CHARS = 150
MAX_TOKENS = 160  # default reply cap
FAMILY = prompt_family("scorecard.perspective", "regex")
_LINE = re.compile(r"^([A-Z0-9_]+): (.*)$")
#: a confidence from 0 to 1, written plainly
CONFIDENCE_RE = r"(0(\.[0-9]{1,4})?|1(\.0{1,4})?)"


def slot_key(agent: str) -> str:
    """An agent's name as a slot prefix: upper case, other characters as underscores."""
    return re.sub(r"[^A-Z0-9]+", "_", agent.upper()).strip("_") or "AGENT"


def state_slots(chain: Sequence[str]) -> list[tuple[str, str]]:
    """The state slots for ``chain`` with what each one holds, in order (ANSWER excluded)."""
    slots = [("WORLD", "where the {object} is now")]
    for agent in dict.fromkeys(chain):
        slots.append((f"{slot_key(agent)}_OBSERVED",
                      f"what {agent} saw or was told about the {{object}}, in a few words"))
    for k in range(2, len(chain) + 1):
        name = "_MODEL_OF_".join(slot_key(a) for a in chain[:k])
        text = " thinks ".join(chain[:k])
        slots.append((name, f"where {text} thinks the {{object}} is"))
    return slots


def slot_names(chain: Sequence[str], state: bool = True) -> list[str]:
    """Every line name the reply must have, in order."""
    names = [n for n, _ in state_slots(chain)] if state else []
    return [*names, "ANSWER", "CONFIDENCE"]


def literal(text: str) -> str:
    """``text`` as a regular expression that matches it alone (the metacharacters escaped,
    nothing else, so Python and the grammar engines read it alike)."""
    return re.sub(r"([\\.^$*+?()\[\]{}|])", r"\\\1", text)


def slot_chars(item: ReaderItem, chain: Sequence[str], state: bool = True,
               max_tokens: int = MAX_TOKENS) -> int:
    """The longest slot text: what the cap leaves after the reply's fixed part (the slot
    names, the answer and the confidence, counted at one token per character), at
    ``CHARS_PER_TOKEN`` characters per token, shared by the slots (at least 8, at most
    :data:`MAX_SLOT_CHARS`)."""
    names = slot_names(chain, state)
    fixed = sum(len(n) + 3 for n in names) + max((len(o) for o in item.options or ()),
                                                   default=0) + 6 + 1
    slots = max(1, len(names) - 2)
    return max(8, min(MAX_SLOT_CHARS, CHARS_PER_TOKEN * (max_tokens - fixed) // slots))


def line_patterns(item: ReaderItem, chain: Sequence[str], state: bool = True,
                  max_tokens: int = MAX_TOKENS) -> list[tuple[str, str]]:
    """Each line's name and pattern, in order: ``NAME: <text>`` for the state, then the
    answer (one of the options) and the confidence."""
    most = slot_chars(item, chain, state, max_tokens)
    slot = f"[^\\n ][^\\n]{{0,{most - 1}}}"
    lines = [(n, f"{n}: {slot}") for n in slot_names(chain, state)[:-2]]
    options = "|".join(literal(o) for o in item.options or ())
    return [*lines, ("ANSWER", f"ANSWER: ({options})"),
            ("CONFIDENCE", f"CONFIDENCE: {CONFIDENCE_RE}")]


def perspective_format(item: ReaderItem, chain: Sequence[str], state: bool = True,
                       max_tokens: int = MAX_TOKENS) -> ReplyFormat:
    """The lines of :func:`line_patterns`, joined by newlines, and nothing else."""
    lines = line_patterns(item, chain, state, max_tokens)
    return ReplyFormat.regex(FAMILY, "\\n".join(p for _, p in lines))


def _diagnosis(text: str, item: ReaderItem, chain: Sequence[str], state: bool,
               max_tokens: int) -> str:
    """Which line of a reply breaks the format, and how."""
    want = line_patterns(item, chain, state, max_tokens)
    lines = text.strip().splitlines()
    if len(lines) != len(want):
        names = ", ".join(n for n, _ in want)
        return f"{len(lines)} lines, expected {len(want)} ({names})"
    for k, (line, (name, pattern)) in enumerate(zip(lines, want, strict=True), start=1):
        if re.fullmatch(pattern, line):
            continue
        if not line.startswith(f"{name}:"):
            return f"line {k}: expected a line '{name}: ...', got {line[:60]!r}"
        value = line[len(name) + 1:].strip()
        if name == "ANSWER":
            return f"answer {value!r} is not one of the options"
        if name == "CONFIDENCE":
            return f"confidence {value!r} is not a number from 0 to 1"
        most = slot_chars(item, chain, state, max_tokens)
        return f"slot {name} is empty or longer than {most} characters"
    return "reply does not have the perspective form"


def perspective_prompt(item: ReaderItem, chain: Sequence[str], state: bool = True,
                       max_tokens: int = MAX_TOKENS) -> str:
    """The §10 prompt for one belief question."""
    most = slot_chars(item, chain, state, max_tokens)
    obj = str(item.meta.get("object", "object")) if item.meta else "object"
    lines = [f"{n}: <{d.format(object=obj)}>" for n, d in state_slots(chain)] if state else []
    lines += ["ANSWER: <one of the options>",
              "CONFIDENCE: <probability from 0 to 1 that the answer is correct>"]
    head = (f"{MARKER}, one line per slot, in this order:" if state
            else "Reply with exactly these two lines, in this order:")
    return (
        f"{item.context.strip()}\n\nTarget query: {item.question}\n"
        f"Options: {', '.join(item.options or ())}\n{head}\n" + "\n".join(lines)
        + f"\nWrite nothing else: no reasoning, no other lines, at most {MAX_SLOT_WORDS} "
        f"words and {most} characters per line."
    )


def parse_perspective(
    text: str, item: ReaderItem, chain: Sequence[str], state: bool = True,
    max_slot_words: int = MAX_SLOT_WORDS, max_tokens: int = MAX_TOKENS,
) -> tuple[Reply, dict[str, str]]:
    """Strict parse against :func:`perspective_format` (of the reply's cap), then at most
    ``max_slot_words`` words per slot; returns the reply and the state."""
    fmt = perspective_format(item, chain, state, max_tokens)
    try:
        fmt.parse(text)
    except ReplyError:
        return Reply(error=_diagnosis(text, item, chain, state, max_tokens)), {}
    got: dict[str, str] = {}
    for line in text.strip().splitlines():
        m = _LINE.match(line)
        assert m is not None  # the format guarantees every line
        name, value = m.group(1), m.group(2)
        if len(value.split()) > max_slot_words:
            return Reply(error=f"slot {name} is longer than {max_slot_words} words"), got
        got[name] = value
    state_only = {k: v for k, v in got.items() if k not in ("ANSWER", "CONFIDENCE")}
    return Reply(answer=got["ANSWER"], confidence=float(got["CONFIDENCE"])), state_only


@family_example(FAMILY)
def _example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import NESTED

    chain = NESTED.meta["chain"]
    return Request((Message("user", perspective_prompt(NESTED, chain, True, 160)),),
                   SamplingParams(max_tokens=160), perspective_format(NESTED, chain, True, 160))


class PerspectiveSystem(FlowSystem):
    """The recursive-perspective prompt as a reader variant (a :class:`System`)."""

    def __init__(
        self, backend: Backend, name: str = "perspective", state: bool = True,
        max_tokens: int = MAX_TOKENS, seed: int = 0, bare_max_tokens: int = DEFAULT_MAX_TOKENS,
        structured: bool = True,
    ) -> None:
        self.backend = backend
        self.name = name
        self.state = state
        self.max_tokens = max_tokens
        self.seed = seed
        self.structured = structured
        self.fallback = DirectSystem(backend, name=name, max_tokens=bare_max_tokens,
                                     seed=seed, structured=structured)

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        chain = item_chain(item)
        if chain is None or not item.options:
            rec = yield from self.fallback.flow(item)
            rec.extra["route"] = "bare"
            return rec
        params = SamplingParams(n=1, temperature=0.0, max_tokens=self.max_tokens, seed=self.seed)
        req = Request((Message("user", perspective_prompt(item, chain, self.state,
                                                          self.max_tokens)),), params,
                      perspective_format(item, chain, self.state, self.max_tokens),
                      self.structured)
        [cs] = yield [req]
        reply, st = parse_perspective(cs[0].text, item, chain, self.state,
                                      max_tokens=self.max_tokens)
        rec = json_record(self.name, item, cs[0], reply, view="perspective", request=req)
        rec.extra["state"] = st
        return rec
