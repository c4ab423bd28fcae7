"""A scripted backend: deterministic replies chosen by the caller (tests, dry runs, notebooks).

``ScriptedBackend(responder)`` calls ``responder(job)`` for every sample; the responder sees
the full request (messages, sampling settings) and the sample index, and returns the reply
text. Token counts are whitespace words, so tests can predict them exactly. Every job it was
asked for is logged in ``jobs`` (in order) and every ``complete`` batch in ``batches``.

Two backend kinds serve it from ``params.yaml``: ``fake`` (:class:`FakeSpec`), a constant
reply or reply fields; and ``scripted`` (:class:`ScriptedSpec`), the stage's own scripted
stand-in for a model (the scorecard's scripted model, the loops' scripted world, ...), which
needs the stage's data and so is built from the stand-ins the stage passes to ``build``.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from cogrsi_lib.llm.backend import (
    Backend,
    BackendSpec,
    StandIns,
    count_words,
    register_backend,
)
from cogrsi_lib.llm.types import Completion, Job

Responder = Callable[[Job], str]


def prompt_text(job: Job) -> str:
    """All message contents of a job's request, joined by newlines."""
    return "\n".join(m.content for m in job.request.messages)


def fitted_replies(values: Mapping[str, Any]) -> Responder:
    """A responder that answers every JSON-format request with ``values`` fitted to its
    declared form (:func:`json_reply`), and any other request with ``values["text"]``."""
    text = str(values.get("text", "unknown"))

    def respond(job: Job) -> str:
        fmt = job.request.reply
        return json_reply(job, values) if fmt is not None and fmt.kind == "json" else text

    return respond


def json_reply(job: Job, values: Mapping[str, Any]) -> str:
    """A scripted model's JSON reply in the form the job's reply format declares: the
    declared keys in the declared order (keys the format lacks are dropped, so one script
    serves reasoned and direct prompts alike), strings clipped to their declared length,
    compact as a constrained model writes it."""
    fmt = job.request.reply
    if fmt is None or fmt.kind != "json":
        raise ValueError("json_reply needs a request with a JSON reply format")
    props = fmt.schema()["properties"]
    out: dict[str, Any] = {}
    for key, spec in props.items():
        if key in values:
            v = values[key]
            if isinstance(v, str) and "maxLength" in spec:
                v = v[: spec["maxLength"]]
            out[key] = v
    return json.dumps(out, separators=(",", ":"))


class ScriptedBackend(Backend):
    """A backend whose replies come from a Python function; with ``concurrent``, served side by
    side (:mod:`cogrsi_lib.llm.together`): for a responder that is a function of the job alone."""

    kind = "fake"

    def __init__(self, responder: Responder | str = "Answer: unknown", model: str = "scripted",
                 concurrent: bool = False):
        if isinstance(responder, str):
            text = responder
            self._responder: Responder = lambda _job: text
        else:
            self._responder = responder
        self._model = model
        self.concurrent = concurrent
        self.jobs: list[Job] = []
        self.batches: list[int] = []
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        out: list[Completion] = []
        with self._lock:
            self.batches.append(len(jobs))
            self.jobs.extend(jobs)
        for j in jobs:
            text = self._responder(j)
            words = count_words(text)
            limited = words > j.request.params.max_tokens
            if limited:
                text = " ".join(text.split()[: j.request.params.max_tokens])
            out.append(
                Completion(
                    text=text,
                    prompt_tokens=count_words(prompt_text(j)),
                    completion_tokens=min(words, j.request.params.max_tokens),
                    finish_reason="length" if limited else "stop",
                    index=j.index,
                    latency_s=0.0,
                    model=self._model,
                )
            )
        return out

    @property
    def calls(self) -> int:
        """How many samples the backend itself produced."""
        return len(self.jobs)


@register_backend("fake")
class FakeSpec(BackendSpec):
    """``backend: fake``: a :class:`ScriptedBackend` with a constant reply."""

    backend: Literal["fake"] = "fake"
    model: str = "scripted"  # the name records and the cache know it by
    #: a reply text, or reply fields: a JSON-format request gets the fields its form
    #: declares (:func:`fitted_replies`), any other request the ``text`` field. Free-form,
    #: because the fields are whatever the stage's reply forms declare (``answer``,
    #: ``reasoning``, ``variable``, ``labels``, ...), of any JSON type.
    reply: str | dict[str, Any] = "unknown"

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> ScriptedBackend:
        responder = fitted_replies(self.reply) if isinstance(self.reply, dict) else self.reply
        return ScriptedBackend(responder, model=self.model or "scripted")


@register_backend("scripted")
class ScriptedSpec(BackendSpec):
    """``backend: scripted``: the stage's scripted stand-in for a model (no model runs),
    ``variant`` choosing among the stage's stand-ins (``default``; the scorecard also has
    ``alt`` and ``other``). Built by the stage, which passes its stand-ins to :meth:`build`."""

    backend: Literal["scripted"] = "scripted"
    variant: str = "default"
    cache_dir: None = None  # a stand-in replays nothing: it is never cached

    def build(self, base_dir: str | os.PathLike[str] | None = None,
              stand_in: StandIns | None = None) -> Backend:
        if stand_in is None:
            raise ValueError("a scripted model stands in for a stage's model and is built by "
                             "the stage: this place takes a real backend")
        if self.variant not in stand_in:
            raise ValueError(f"unknown scripted variant {self.variant!r} here (variants: "
                             f"{', '.join(stand_in)})")
        return stand_in[self.variant]()

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> Backend:
        return self.build(base_dir)
