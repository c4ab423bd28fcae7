"""Baselines on the same backend and token accounting as the reader (CogRSI §5, G.7).

- zero-shot: one greedy direct answer.
- chain of thought (Kojima et al., 2022): one greedy "think step by step" answer.
- self-consistency (Wang et al., 2023), k=6 and k=9: k chain-of-thought samples at 0.7, vote.
  (Sample i of SC-6 and SC-9 is the same cache entry, so SC-6 costs nothing after SC-9, yet
  is still counted at its full cost.)
- SimToM (Wilf et al., 2024): one perspective-taking call ("which events does X know
  about?"), then the answer from that perspective; SimToM+SC answers with six samples.
- PercepToM (Jung et al., 2024): the perception call (the reader's own request, so its cache
  entry is shared), the story filtered to what the target character(s) perceived, then the
  answer; PercepToM+SC answers with six samples.

With one answering sample the answer is greedy and direct, as in the original methods; with
six it is sampled at the reader's temperature with reasoning, as self-consistency.

Each is registered by name at the end of this module (:mod:`cogrsi_lib.baselines.registry`):
``zero_shot``, ``cot``, ``sc<k>``, ``simtom``, ``perceptom``, ``simtom_sc<k>``,
``perceptom_sc<k>``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from cogrsi_lib.baselines.registry import reader_system
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow
from cogrsi_lib.llm.reply_format import (
    CHARS_PER_TOKEN,
    ReplyError,
    ReplyFormat,
    describe,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem, question_characters
from cogrsi_lib.reader.reader import perceive
from cogrsi_lib.reader.records import ItemRecord, PerceptionRecord, SampleRecord, new_record
from cogrsi_lib.reader.system import FlowSystem, SamplingConfig, parse_samples
from cogrsi_lib.reader.views import filtered_view, plain_view
from cogrsi_lib.reader.vote import ranked

SIMTOM_NARRATIVE = "\n".join(
    [
        "Your job is to output only the events that {char} knows about.",
        "Rules:",
        "1. A character knows about every event they take part in.",
        "2. A character who is in a location knows about every event that happens there while"
        " they are present: characters entering or leaving, where objects are, and objects"
        " being moved.",
        "3. A character who has left a location knows nothing of what happens there until they"
        " return.",
        "",
        "{view}",
        "",
        "What events does {char} know about? List only those events, in order, without"
        " explanation. {reply}",
    ]
)

SIMTOM_CONVERSATION = "\n".join(
    [
        "Your job is to output only the utterances that {char} heard.",
        "Rules:",
        "1. A character hears every utterance said while they are part of the conversation,"
        " including their own.",
        "2. A character who has left, or has not yet joined, does not hear what is said meanwhile.",
        "",
        "{view}",
        "",
        "Which utterances did {char} hear? List only those utterances, in order, without"
        " explanation. {reply}",
    ]
)


PERSPECTIVE = prompt_family("simtom.perspective", "json")


def perspective_format(item: ReaderItem, max_tokens: int) -> ReplyFormat:
    """SimToM's perspective step: the events (or utterances) the character knows, in order,
    each at most as long as the context's longest line, no more than the context has, and
    all of them within the token cap."""
    lines = item.lines()
    longest = max((len(x) for x in lines), default=40) + 10
    most = max(1, min(len(lines), (CHARS_PER_TOKEN * max_tokens) // (longest + 3)))
    model = reply_model(
        "Perspective",
        events=(list[Annotated[str, text_field(longest, 1)]],
                Field(max_length=most, description="what the character knows, in order")),
    )
    return ReplyFormat.json(PERSPECTIVE, model)


def perspective_request(
    item: ReaderItem, char: str, params: SamplingParams, structured: bool = True
) -> Request:
    fmt = perspective_format(item, params.max_tokens)
    tmpl = SIMTOM_CONVERSATION if item.kind == "conversation" else SIMTOM_NARRATIVE
    text = tmpl.format(char=char, view=plain_view(item), reply=describe(fmt))
    return Request((Message("user", text),), params, fmt, structured)


@family_example(PERSPECTIVE)
def _perspective_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return perspective_request(ITEM, "Sally", SamplingParams(max_tokens=160))


def read_perspective(fmt: ReplyFormat | None, text: str) -> list[str] | None:
    """The perspective's events, or None when the reply breaks its format."""
    assert fmt is not None
    try:
        return [e.strip() for e in fmt.parse(text).events]
    except ReplyError:
        return None


class _Base(FlowSystem):
    name = "baseline"

    def __init__(
        self, backend: Backend, config: SamplingConfig | None = None, name: str | None = None
    ):
        self.backend = backend
        self.config = config or SamplingConfig()
        if name:
            self.name = name

    def _greedy(self, max_tokens: int) -> SamplingParams:
        return SamplingParams(n=1, temperature=0.0, max_tokens=max_tokens, seed=self.config.seed)

    def _sampled(self, n: int) -> SamplingParams:
        c = self.config
        return SamplingParams(
            n=n,
            temperature=c.temperature,
            top_p=c.top_p,
            max_tokens=c.sample_max_tokens,
            seed=c.seed_for(c.temperature),
        )

    def _answer(
        self, item: ReaderItem, view: str, think: str, params: SamplingParams, preamble: str = ""
    ) -> Request:
        return prompts.answer_request(item, view, params, think=think, preamble=preamble,
                                      structured=self.config.structured)

    def _finish(
        self, rec: ItemRecord, item: ReaderItem, samples: list[SampleRecord], answers
    ) -> None:
        rec.extra["structured"] = self.config.structured
        rec.samples = samples
        counts = ranked(answers, [])
        leader = counts[0][0] if counts else None
        rec.answer = leader
        rec.answer_text = item.option_text(leader)
        rec.status = "ok" if leader is not None else "unparsed"
        rec.vote = {
            "counts": [[a, n] for a, n in counts],
            "leader": leader,
            "unparsed": sum(a is None for a in answers),
        }


class SinglePrompt(_Base):
    """Zero-shot, chain of thought and self-consistency: one prompt, ``k`` samples, a vote."""

    def __init__(
        self,
        backend: Backend,
        config: SamplingConfig | None = None,
        *,
        k: int = 1,
        think: bool = True,
        name: str | None = None,
    ) -> None:
        super().__init__(backend, config, name)
        self.k, self.think = k, think

    def _params(self) -> SamplingParams:
        if self.k > 1:
            return self._sampled(self.k)
        mt = self.config.sample_max_tokens if self.think else self.config.direct_max_tokens
        return self._greedy(mt)

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        think = prompts.THINK_PLAIN if self.think else prompts.THINK_NONE
        req = self._answer(item, plain_view(item), think, self._params())
        [cs] = yield [req]
        rec = new_record(self.name, item)
        rec.perception = PerceptionRecord("none")
        s, a = parse_samples(item, "plain", req, cs, rec.ledger, "sample")
        self._finish(rec, item, s, a)
        return rec


class SimToM(_Base):
    """Perspective-taking, then answering from the perspective (``n`` answering samples)."""

    def __init__(
        self,
        backend: Backend,
        config: SamplingConfig | None = None,
        *,
        n: int = 1,
        name: str | None = None,
    ):
        super().__init__(backend, config, name or ("simtom" if n == 1 else f"simtom_sc{n}"))
        self.n = n

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        rec = new_record(self.name, item)
        chars = question_characters(item)[:1]
        if chars:
            char = chars[0]
            req = perspective_request(item, char,
                                      self._greedy(self.config.perspective_max_tokens),
                                      self.config.structured)
            [cs] = yield [req]
            rec.ledger.add("perspective", cs)
            events = read_perspective(req.reply, cs[0].text)
            rec.extra["perspective"] = events
            rec.extra["perspective_status"] = "ok" if events is not None else "malformed"
            # a malformed perspective is recorded and shown as it came: nothing to filter by
            known = "\n".join(events) if events is not None else cs[0].text.strip()
            view = f"Here is what {char} knows:\n{known or '(nothing)'}"
            ans = self._answer(item, view, self._think(), self._answer_params(),
                               preamble=f"You are {char}.")
        else:  # no character to take the perspective of: the plain story, recorded
            rec.extra["perspective"] = None
            ans = self._answer(item, plain_view(item), self._think(), self._answer_params())
        rec.perception = PerceptionRecord("none")
        [cs] = yield [ans]
        s, a = parse_samples(item, "perspective" if chars else "plain", ans, cs, rec.ledger,
                             "sample")
        self._finish(rec, item, s, a)
        return rec

    def _think(self) -> str:
        return prompts.THINK_PLAIN if self.n > 1 else prompts.THINK_NONE

    def _answer_params(self) -> SamplingParams:
        return self._sampled(self.n) if self.n > 1 else self._greedy(self.config.direct_max_tokens)


class PercepToM(SimToM):
    """Perception, the story filtered to the target's perceptions, then the answer."""

    def __init__(
        self,
        backend: Backend,
        config: SamplingConfig | None = None,
        *,
        n: int = 1,
        name: str | None = None,
    ):
        _Base.__init__(
            self, backend, config, name or ("perceptom" if n == 1 else f"perceptom_sc{n}")
        )
        self.n = n

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        rec = new_record(self.name, item)
        res = yield from perceive(item, self.config, rec)
        chars = question_characters(item, res.perception.names()) if res.perception else []
        rec.extra["characters"] = chars
        if res.perception is not None and chars:
            kind, view = "filtered", filtered_view(item, res.perception, chars)
        else:  # malformed perception or nobody to filter for: the plain story, counted
            kind, view = "plain", plain_view(item)
        req = self._answer(item, view, self._think(), self._answer_params())
        [cs] = yield [req]
        s, a = parse_samples(item, kind, req, cs, rec.ledger, "sample")
        self._finish(rec, item, s, a)
        return rec


def zero_shot(backend: Backend, config: SamplingConfig | None = None) -> SinglePrompt:
    return SinglePrompt(backend, config, k=1, think=False, name="zero_shot")


def chain_of_thought(backend: Backend, config: SamplingConfig | None = None) -> SinglePrompt:
    return SinglePrompt(backend, config, k=1, think=True, name="cot")


def self_consistency(
    backend: Backend, config: SamplingConfig | None = None, k: int = 6
) -> SinglePrompt:
    return SinglePrompt(backend, config, k=k, think=True, name=f"sc{k}")


# -- registered by name (a factory takes the backend, the settings, the reader's principle) --


@reader_system("zero_shot")
def _zero_shot(backend: Backend, config: SamplingConfig, principle: str | None) -> SinglePrompt:
    return zero_shot(backend, config)


@reader_system("cot")
def _cot(backend: Backend, config: SamplingConfig, principle: str | None) -> SinglePrompt:
    return chain_of_thought(backend, config)


@reader_system("sc<k>", standard=("sc6", "sc9"))
def _sc(backend: Backend, config: SamplingConfig, principle: str | None, k: int) -> SinglePrompt:
    return self_consistency(backend, config, k=k)


@reader_system("simtom")
def _simtom(backend: Backend, config: SamplingConfig, principle: str | None) -> SimToM:
    return SimToM(backend, config, n=1)


@reader_system("perceptom")
def _perceptom(backend: Backend, config: SamplingConfig, principle: str | None) -> PercepToM:
    return PercepToM(backend, config, n=1)


@reader_system("simtom_sc<k>", standard=("simtom_sc6",))
def _simtom_sc(backend: Backend, config: SamplingConfig, principle: str | None,
               k: int) -> SimToM:
    return SimToM(backend, config, n=k)


@reader_system("perceptom_sc<k>", standard=("perceptom_sc6",))
def _perceptom_sc(backend: Backend, config: SamplingConfig, principle: str | None,
                  k: int) -> PercepToM:
    return PercepToM(backend, config, n=k)
