"""The epistemic store as a reader variant (plan §11, §19 Experiment 3).

Per belief question the model writes the store entries the question needs, each with the
number of the story line it rests on, as one JSON object::

    {"entries": [{"subject": ["Anne", "Bob"], "location": "box", "confidence": 0.8,
                  "source": 5}, ...],
     "answer": "box", "confidence": 0.7}

The entries go through :class:`~cogrsi_lib.scorecard.store.EpistemicStore` (malformed or
unsourced entries are refused and recorded), and the answer is read off the store for the
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

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.nested.reply import Reply, parse_reply
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
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
    """The reply is not one JSON object with exactly entries, answer and confidence."""


def parse_store_reply(
    text: str, item: ReaderItem, store: EpistemicStore, topic: str,
) -> tuple[Reply, list[dict[str, Any]]]:
    """Fill ``store`` from the reply; returns the model's own answer and the refused entries.

    Raises :class:`StoreReplyError` (nothing stored) unless the reply is one JSON object with
    exactly ``entries`` (a list), ``answer`` and ``confidence``; a malformed entry is refused
    alone, and a malformed own answer only makes the returned reply unparsed.
    """
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, ValueError) as err:
        raise StoreReplyError("not a single JSON value") from err
    if not isinstance(raw, dict) or set(raw) != {"entries", "answer", "confidence"}:
        raise StoreReplyError("expected one object with entries, answer and confidence")
    if not isinstance(raw["entries"], list):
        raise StoreReplyError("entries is not a list")
    own = parse_reply(json.dumps({"answer": raw["answer"], "confidence": raw["confidence"]}),
                      item.options or ())
    refused = []
    for i, e in enumerate(raw["entries"]):
        why = _entry_problem(e, item)
        if why is None:
            try:
                store.add(Entry(tuple(e["subject"]), topic, e["location"],
                                float(e["confidence"]), e["source"]))
                continue
            except StoreError as err:
                why = str(err)
        refused.append({"index": i, "entry": e, "reason": why})
    return own, refused


def _entry_problem(e: Any, item: ReaderItem) -> str | None:
    if not isinstance(e, dict) or set(e) - {"subject", "location", "confidence", "source"}:
        return "an entry is an object with subject, location, confidence and source"
    subj = e.get("subject")
    if not isinstance(subj, list) or not subj or not all(isinstance(a, str) for a in subj):
        return "subject is not a list of names"
    if e.get("location") not in (item.options or ()):
        return f"location {e.get('location')!r} is not one of the options"
    conf = e.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, int | float):
        return "confidence is not a number"
    if "source" not in e:
        return "no source: absence of evidence is UNKNOWN, not a belief"
    return None


class StoreSystem:
    """Answers belief questions from an explicit epistemic store (a :class:`System`)."""

    def __init__(
        self, backend: Backend, name: str = "store", read_store: bool = True,
        max_tokens: int = MAX_TOKENS, seed: int = 0, max_persistent_depth: int = 2,
        bare_max_tokens: int = DEFAULT_MAX_TOKENS,
    ) -> None:
        self.backend = backend
        self.name = name
        self.read_store = read_store
        self.max_tokens = max_tokens
        self.seed = seed
        self.max_persistent_depth = max_persistent_depth
        self.fallback = DirectSystem(backend, name=name, max_tokens=bare_max_tokens,
                                     seed=seed)

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        out: list[ItemRecord | None] = [None] * len(items)
        belief = [i for i, it in enumerate(items) if item_chain(it) and it.options]
        params = SamplingParams(n=1, temperature=0.0, max_tokens=self.max_tokens, seed=self.seed)
        reqs = [Request((Message("user", store_prompt(items[i], item_chain(items[i]) or ())),),
                        params) for i in belief]
        for i, cs in zip(belief, self.backend.generate(reqs) if reqs else [], strict=True):
            out[i] = self._record(items[i], cs[0])
        other = [i for i in range(len(items)) if out[i] is None]
        if other:
            for i, rec in zip(other, self.fallback.answer_batch([items[i] for i in other]),
                              strict=True):
                rec.extra["route"] = "bare"
                out[i] = rec
        return [r for r in out if r is not None]

    def _record(self, item: ReaderItem, completion: Any) -> ItemRecord:
        chain = item_chain(item) or ()
        topic = location_topic(str(item.meta.get("object", "object")))
        store = EpistemicStore(n_sources=len(item.lines()),
                               max_persistent_depth=self.max_persistent_depth,
                               max_depth=max(len(chain), self.max_persistent_depth))
        try:
            own, refused = parse_store_reply(completion.text, item, store, topic)
        except StoreReplyError as err:
            rec = json_record(self.name, item, completion, Reply(error=str(err)), view="store")
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
        rec = json_record(self.name, item, completion, reply, view="store")
        if self.read_store and isinstance(found, Unknown):
            rec.status = ABSTAINED
        rec.extra.update({
            "store": store.rows(), "refused": refused,
            "store_answer": found.value if isinstance(found, Entry) else "UNKNOWN",
            "model_answer": own.answer, "model_error": own.error,
            "transient_dropped": store.end_task(),
        })
        return rec
