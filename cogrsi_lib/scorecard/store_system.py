"""The epistemic store as a reader variant (plan §11, §19 Experiment 3).

Per belief question the model writes the store entries the question needs, each with the
number of the story line it rests on, as one JSON object::

    {"entries": [{"subject": ["Anne", "Bob"], "location": "box", "confidence": 0.8,
                  "source": 5}, ...],
     "answer": "box", "confidence": 0.7}

The reply's form is declared once (:func:`store_format`, family ``scorecard.store``); a reply
that breaks it stores nothing. The entries go through
:class:`~cogrsi_lib.scorecard.store.EpistemicStore` (entries it cannot keep are refused and
recorded), and the answer is read off the store for the
asked chain.  When the store holds nothing for that chain the system abstains: the store's
UNKNOWN is never replaced by a guess (§11.2).  One store per story question; deeper
entries are transient and dropped when the question is done (§11.4).

``read_store=False`` is the ablation (Gate E, §16): the same call and the same store, but
the answer is the model's own ``answer`` field, so only the store's part is disabled.
Reality questions (an empty chain: the store holds attitudes, not the world) and items
without a belief chain go to the bare prompt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, enum_of, reply_model
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.nested.reply import Reply
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import FlowSystem
from cogrsi_lib.scorecard.answers import ABSTAINED, item_chain, json_record
from cogrsi_lib.scorecard.direct import DEFAULT_MAX_TOKENS, DirectSystem
from cogrsi_lib.scorecard.store import Entry, EpistemicStore, StoreError, Unknown

MARKER = "Write the epistemic state this question needs"
MAX_TOKENS = 320  # default reply cap


def location_topic(obj: str) -> str:
    return f"location({obj})"


def numbered_context(item: ReaderItem) -> str:
    """The context one numbered line per sentence ("1 ..."), as the sources cite them."""
    return "\n".join(f"{i} {line}" for i, line in enumerate(item.lines(), start=1))


def needed_chains(chain: Sequence[str]) -> list[list[str]]:
    """The chains a question about ``chain`` needs: its prefixes, shortest first."""
    return [list(chain[:k]) for k in range(1, len(chain) + 1)]


def store_prompt(item: ReaderItem, chain: Sequence[str]) -> str:
    obj = str(item.meta.get("object", "object")) if item.meta else "object"
    needed = ", ".join(json.dumps(c) for c in needed_chains(chain))
    return (
        f"{numbered_context(item)}\n\nQuestion: {item.question}\n"
        f"Options: {', '.join(item.options or ())}\n"
        f"{MARKER} as one JSON object and nothing else:\n"
        '{"entries": [{"subject": ["<agent>", ...], "location": "<one of the options>", '
        '"confidence": <0..1>, "source": <story line number>}, ...], '
        '"answer": "<one of the options>", "confidence": <0..1>}\n'
        f'"subject": ["A"] is where A believes the {obj} is; ["A", "B"] is where A believes B '
        "believes it is; and so on.\n"
        f"Write entries only for the chains this question needs ({needed}), and only when a "
        "story line is evidence for the entry; give that line's number as its source. "
        "Leave out any chain the story gives no evidence for."
    )


class StoreReplyError(ValueError):
    """The reply breaks the store's declared format (:func:`store_format`)."""


FAMILY = prompt_family("scorecard.store", "json")


def store_format(item: ReaderItem, chain: Sequence[str]) -> ReplyFormat:
    """The store reply: at most one entry per needed chain, each with a subject (agents of
    the question's chain), a location (an option), a confidence and the number of the story
    line it rests on; then the model's own answer and confidence."""
    agents = list(dict.fromkeys(chain)) or ["nobody"]
    options = list(item.options or ())
    entry = reply_model(
        "StoreEntry",
        subject=(list[enum_of(agents)], Field(min_length=1, max_length=max(1, len(chain)))),
        location=(enum_of(options), Field()),
        confidence=(float, Field(ge=0, le=1)),
        source=(int, Field(ge=1, le=max(1, len(item.lines())),
                           description="story line number")),
    )
    model = reply_model(
        "StoreReply",
        entries=(list[entry], Field(max_length=max(1, len(chain)))),  # type: ignore[valid-type]
        answer=(enum_of(options), Field()),
        confidence=(float, Field(ge=0, le=1)),
    )
    return ReplyFormat.json(FAMILY, model, fences=False)


def parse_store_reply(
    text: str, item: ReaderItem, store: EpistemicStore, topic: str,
    fmt: ReplyFormat | None = None,
) -> tuple[Reply, list[dict[str, Any]]]:
    """Fill ``store`` from the reply; returns the model's own answer and the entries the
    store refused (an entry for a chain it does not keep, a source it cannot cite, ...).

    Raises :class:`StoreReplyError` (nothing stored) when the reply breaks
    :func:`store_format`.
    """
    fmt = fmt or store_format(item, item_chain(item) or ())
    try:
        reply = fmt.parse(text)
    except ReplyError as err:
        raise StoreReplyError(err.reason) from err
    own = Reply(answer=reply.answer, confidence=reply.confidence)
    refused = []
    for i, e in enumerate(reply.entries):
        try:
            store.add(Entry(tuple(e.subject), topic, e.location, e.confidence, e.source))
        except StoreError as err:
            refused.append({"index": i, "entry": e.model_dump(), "reason": str(err)})
    return own, refused


@family_example(FAMILY)
def _example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import NESTED

    chain = NESTED.meta["chain"]
    return Request((Message("user", store_prompt(NESTED, chain)),),
                   SamplingParams(max_tokens=224), store_format(NESTED, chain))


class StoreSystem(FlowSystem):
    """Answers belief questions from an explicit epistemic store (a :class:`System`)."""

    def __init__(
        self, backend: Backend, name: str = "store", read_store: bool = True,
        max_tokens: int = MAX_TOKENS, seed: int = 0, max_persistent_depth: int = 2,
        bare_max_tokens: int = DEFAULT_MAX_TOKENS, structured: bool = True,
    ) -> None:
        self.backend = backend
        self.name = name
        self.read_store = read_store
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_persistent_depth = max_persistent_depth
        self.structured = structured
        self.fallback = DirectSystem(backend, name=name, max_tokens=bare_max_tokens,
                                     seed=seed, structured=structured)

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        chain = item_chain(item)
        if not chain or not item.options:
            rec = yield from self.fallback.flow(item)
            rec.extra["route"] = "bare"
            return rec
        params = SamplingParams(n=1, temperature=0.0, max_tokens=self.max_tokens, seed=self.seed)
        req = Request((Message("user", store_prompt(item, chain)),), params,
                      store_format(item, chain), self.structured)
        [cs] = yield [req]
        return self._record(item, cs[0], req)

    def _record(self, item: ReaderItem, completion: Any, request: Request) -> ItemRecord:
        fmt = request.reply
        chain = item_chain(item) or ()
        topic = location_topic(str(item.meta.get("object", "object")))
        store = EpistemicStore(n_sources=len(item.lines()),
                               max_persistent_depth=self.max_persistent_depth,
                               max_depth=max(len(chain), self.max_persistent_depth))
        try:
            own, refused = parse_store_reply(completion.text, item, store, topic, fmt)
        except StoreReplyError as err:
            rec = json_record(self.name, item, completion, Reply(error=str(err)), view="store",
                              request=request)
            rec.extra.update({"store": [], "refused": [], "store_answer": None,
                              "model_answer": None, "model_error": str(err),
                              "transient_dropped": 0})
            return rec
        found = store.lookup(chain, topic)
        if not self.read_store:
            reply = own
        elif isinstance(found, Entry):
            reply = Reply(answer=found.value, confidence=found.confidence)
        else:
            reply = Reply(error="store: UNKNOWN")
        rec = json_record(self.name, item, completion, reply, view="store", request=request)
        if self.read_store and isinstance(found, Unknown):
            rec.status = ABSTAINED
        rec.extra.update({
            "store": store.rows(), "refused": refused,
            "store_answer": found.value if isinstance(found, Entry) else "UNKNOWN",
            "model_answer": own.answer, "model_error": own.error,
            "transient_dropped": store.end_task(),
        })
        return rec
