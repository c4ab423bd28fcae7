"""SAGE: an experience memory of distilled strategies, recalled through a fallback cascade
(zing-social-mind-report §5.5, §5.5.1-5.5.3, eqs. 7-8; evaluated as in §5.8.5).

- :class:`Entry` is eq. 7: a dimension, an answer-independent strategy, when to use it and
  when not to, helped/harmed counters and the provenance of its edits.
- :class:`ExperienceStore` holds at most ``budget`` entries and round-trips through JSON.
- :func:`distil` runs the Selector-Generator-Reflector-Curator loop on development items only:
  the Selector picks at most ``k`` entries, the caller's ``answer_fn`` answers with them, one
  Reflector call per reflected item labels the shown entries and may propose a strategy, and
  the Curator adds, revises or merges it and prunes over budget.
- :class:`Selector` is the frozen store at deployment: exact recall, then the predicted
  dimension's bucket, then the generic scaffold (eq. 8); :func:`coverage` is §5.5.3's cov.
  Its ``mode`` also gives the component ablation of §5.8.5 (Figure 26): the whole store
  (curation without a Selector), exact recall only, dimension routing only, full cascade.
- :func:`predict_dimension` is the Selector's dimension call, one strict reply per item.

Reflector replies are parsed strictly, as the loops' builder does: a reply that is not one
JSON object, lacks or mistypes a field, names an unknown dimension or entry, or writes the gold
option's text or a character name of the story is rejected with a reason code and logged.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import Field

from cogrsi_lib.embedding import Embedder, cosine
from cogrsi_lib.harness.scaffold import scaffold_block
from cogrsi_lib.harness.taxonomy import DIMENSIONS, annotate
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.parsing import normalise_free_text
from cogrsi_lib.llm.reply_format import (
    CHARS_PER_TOKEN,
    ReplyError,
    ReplyFormat,
    describe,
    enum_of,
    reply_model,
    text_field,
)
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.loops.library import clean
from cogrsi_lib.loops.naming import names_in, story_names
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import options_block
from cogrsi_lib.reader.records import ItemRecord

Level = Literal["exact", "dimension", "scaffold", "store", "none"]
Mode = Literal["cascade", "exact_only", "dimension_only", "store"]
LEVELS: tuple[str, ...] = ("exact", "dimension", "scaffold", "store", "none")
MODES: tuple[str, ...] = ("cascade", "exact_only", "dimension_only", "store")
#: Figure 26's configurations (besides the memory-free baseline) -> Selector mode
ABLATION_MODES: dict[str, str] = {
    "curation": "store", "selector": "exact_only", "dimension_routing": "dimension_only",
    "full": "cascade",
}  # fmt: skip
PROVENANCE_OPS: tuple[str, ...] = ("added", "revised", "merged")
LABELS: tuple[str, ...] = ("helpful", "harmful", "neutral")
#: Reflector rejection codes, in the order the checks run
REJECTIONS: tuple[str, ...] = (
    "malformed_json",  # breaks the declared format: not JSON, a wrong key, type or value
    "missing_field",
    "names_gold",
    "names_story",
)

#: cosine between a question (+ options) and an entry's ``use`` at or above which the entry is
#: recalled exactly. all-MiniLM-L6-v2 gives short texts low cosines: a ``use`` written as the
#: kind of question it serves scores 0.30-0.47 against matching questions and 0.15-0.26 against
#: unrelated ones; question-like emotion items that share the objects score higher and are
#: kept out by the boundary veto (measured in tests/harness/test_experience.py)
DEFAULT_EXACT_THRESHOLD = 0.28
#: cosine between two strategies of one dimension at or above which the Curator merges them
DEFAULT_MERGE_THRESHOLD = 0.85
DEFAULT_BUDGET = 32


class StoreError(ValueError):
    """A malformed experience-store file; the message names the file and the entry."""


@dataclass(frozen=True)
class Provenance:
    """One edit of an entry: what happened, caused by which development item, in which round
    (``text`` is the strategy that was written or merged in)."""

    op: str
    item_id: str
    round: int = 0
    text: str = ""

    def __post_init__(self) -> None:
        if self.op not in PROVENANCE_OPS:
            raise ValueError(f"unknown provenance op {self.op!r} (not one of {PROVENANCE_OPS})")


@dataclass(frozen=True)
class Entry:
    """An experience entry (eq. 7): ``helped``/``harmed`` are h+ and h-."""

    entry_id: str
    dimension: str
    strategy: str
    use: str
    boundary: str
    helped: int = 0
    harmed: int = 0
    provenance: tuple[Provenance, ...] = ()

    def __post_init__(self) -> None:
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {self.dimension!r}")
        if self.helped < 0 or self.harmed < 0:
            raise ValueError("helped and harmed are counts (>= 0)")
        object.__setattr__(self, "provenance", tuple(self.provenance))

    @property
    def net(self) -> int:
        """h+ - h-: the helpfulness history the Selector ranks by."""
        return self.helped - self.harmed

    def render(self) -> str:
        return (
            f"[{self.dimension}] {self.strategy} | Use when: {self.use} | Not when: {self.boundary}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "dimension": self.dimension,
            "strategy": self.strategy,
            "use": self.use,
            "boundary": self.boundary,
            "helped": self.helped,
            "harmed": self.harmed,
            "provenance": [asdict(p) for p in self.provenance],
        }


_ENTRY_TEXT = ("dimension", "strategy", "use", "boundary")
_ID_NUMBER = re.compile(r"^m(\d+)$")


def _entry_from(obj: Any, where: str) -> Entry:
    if not isinstance(obj, dict):
        raise StoreError(f"{where}: not a JSON object")
    unknown = set(obj) - {"id", *_ENTRY_TEXT, "helped", "harmed", "provenance"}
    if unknown:
        raise StoreError(f"{where}: unknown field(s) {sorted(unknown)}")
    for key in ("id", *_ENTRY_TEXT):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise StoreError(f"{where}: field {key!r} must be a non-empty string")
    if obj["dimension"] not in DIMENSIONS:
        raise StoreError(f"{where}: unknown dimension {obj['dimension']!r}")
    for key in ("helped", "harmed"):
        v = obj.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise StoreError(f"{where}: field {key!r} must be a count (int >= 0), not {v!r}")
    prov = obj.get("provenance", [])
    if not isinstance(prov, list):
        raise StoreError(f"{where}: 'provenance' must be a list")
    edits = []
    for j, p in enumerate(prov):
        pw = f"{where}, provenance {j}"
        if not isinstance(p, dict) or set(p) - {"op", "item_id", "round", "text"}:
            raise StoreError(f"{pw}: must be an object with op, item_id, round, text")
        if p.get("op") not in PROVENANCE_OPS:
            raise StoreError(f"{pw}: op {p.get('op')!r} is not one of {PROVENANCE_OPS}")
        if not isinstance(p.get("item_id"), str):
            raise StoreError(f"{pw}: item_id must be a string")
        rnd, text = p.get("round", 0), p.get("text", "")
        if isinstance(rnd, bool) or not isinstance(rnd, int) or not isinstance(text, str):
            raise StoreError(f"{pw}: round must be an int and text a string")
        edits.append(Provenance(p["op"], p["item_id"], rnd, text))
    return Entry(
        obj["id"],
        obj["dimension"],
        obj["strategy"],
        obj["use"],
        obj["boundary"],
        obj.get("helped", 0),
        obj.get("harmed", 0),
        tuple(edits),
    )


class ExperienceStore:
    """The experience store M (§5.5.2): entries in insertion order, at most ``budget``.

    New entries get ids ``m1``, ``m2``, ...; an id is never reused after a prune.
    """

    def __init__(
        self,
        entries: Iterable[Entry] = (),
        budget: int = DEFAULT_BUDGET,
        next_id: int | None = None,
    ) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"budget must be a positive int, not {budget!r}")
        self.budget = budget
        self._entries: dict[str, Entry] = {}
        for e in entries:
            if e.entry_id in self._entries:
                raise ValueError(f"duplicate entry id {e.entry_id!r}")
            self._entries[e.entry_id] = e
        if len(self._entries) > budget:
            raise ValueError(f"{len(self._entries)} entries exceed the budget of {budget}")
        numbers = [int(m.group(1)) for i in self._entries if (m := _ID_NUMBER.match(i))]
        self._next = max([next_id or 1, *(n + 1 for n in numbers)])

    # -- access
    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self):
        return iter(list(self._entries.values()))

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._entries

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries.values())

    def get(self, entry_id: str) -> Entry:
        if entry_id not in self._entries:
            raise KeyError(f"no entry {entry_id!r} in the store")
        return self._entries[entry_id]

    def bucket(self, dimension: str | None) -> tuple[Entry, ...]:
        """B(v): the entries of one dimension (none for ``None``)."""
        if dimension is not None and dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {dimension!r}")
        return tuple(e for e in self._entries.values() if e.dimension == dimension)

    def copy(self) -> ExperienceStore:
        return ExperienceStore(self.entries, self.budget, self._next)

    # -- edits
    def add(
        self, dimension: str, strategy: str, use: str, boundary: str, provenance: Provenance
    ) -> Entry:
        """A new entry (may leave the store over budget: the Curator prunes)."""
        entry = Entry(f"m{self._next}", dimension, strategy, use, boundary, 0, 0, (provenance,))
        self._next += 1
        self._entries[entry.entry_id] = entry
        return entry

    def put(self, entry: Entry) -> None:
        """Replace an existing entry by its changed version."""
        self.get(entry.entry_id)
        self._entries[entry.entry_id] = entry

    def remove(self, entry_id: str) -> Entry:
        self.get(entry_id)
        return self._entries.pop(entry_id)

    # -- JSON
    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "budget": self.budget,
            "next_id": self._next,
            "entries": [e.to_dict() for e in self._entries.values()],
        }

    def to_json(self, path: str | Path | None = None) -> str:
        """The store as JSON text, also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def loads(cls, text: str, source: str = "<string>") -> ExperienceStore:
        """Parse a store from JSON text; :class:`StoreError` names ``source`` and the entry."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise StoreError(f"{source}: not JSON ({err.msg} at line {err.lineno})") from err
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise StoreError(f"{source}: expected an object with a list 'entries'")
        budget, nxt = data.get("budget", DEFAULT_BUDGET), data.get("next_id", 1)
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise StoreError(f"{source}: budget must be a positive int, not {budget!r}")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or nxt < 1:
            raise StoreError(f"{source}: next_id must be a positive int, not {nxt!r}")
        entries: list[Entry] = []
        seen: set[str] = set()
        for i, obj in enumerate(data["entries"]):
            label = obj.get("id") if isinstance(obj, dict) else None
            where = f"{source}: entry {i}" + (f" ({label!r})" if isinstance(label, str) else "")
            entry = _entry_from(obj, where)
            if entry.entry_id in seen:
                raise StoreError(f"{where}: duplicate id")
            seen.add(entry.entry_id)
            entries.append(entry)
        if len(entries) > budget:
            raise StoreError(f"{source}: {len(entries)} entries exceed the budget of {budget}")
        return cls(entries, budget, nxt)

    @classmethod
    def from_json(cls, path: str | Path) -> ExperienceStore:
        """Load a store file written by :meth:`to_json`."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as err:
            raise StoreError(f"{p}: cannot read ({err.strerror})") from err
        return cls.loads(text, str(p))


# ---------------------------------------------------------------- selective activation


def guidance_block(entries: Sequence[Entry]) -> str:
    """The injected text of recalled entries (empty for none)."""
    if not entries:
        return ""
    lines = [f"{i}. {e.render()}" for i, e in enumerate(entries, 1)]
    return "Guidance from similar past cases (apply only where it fits):\n" + "\n".join(lines)


def query_text(item: ReaderItem) -> str:
    """What exact recall compares an entry's ``use`` with: the question and its options."""
    return " ".join([item.question, *(item.options or ())])


@dataclass(frozen=True)
class Activation:
    """What the Selector injected for one item (eq. 8's A-dagger), and from which level."""

    item_id: str
    level: str
    entries: tuple[Entry, ...]
    scores: tuple[float, ...]
    predicted_dimension: str | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "level": self.level,
            "entries": [e.entry_id for e in self.entries],
            "scores": [round(s, 6) for s in self.scores],
            "predicted_dimension": self.predicted_dimension,
            "text": self.text,
        }


class Selector:
    """The deployment-time Selector over a frozen store (§5.5.3).

    ``exact`` recall takes the entries whose ``use`` has cosine >= ``exact_threshold`` with the
    item's question and options (with ``boundary_veto``, not those the query resembles more
    through their ``boundary``), best similarity first, then best h+ - h-, at most ``k``. The
    cascade (eq. 8) falls back to the predicted dimension's bucket (best h+ - h- first, at most
    ``k``), then to the generic scaffold. Other modes: ``exact_only`` (exact, else nothing),
    ``dimension_only`` (the bucket, else nothing), ``store`` (every entry: no Selector).
    """

    def __init__(
        self,
        store: ExperienceStore,
        embedder: Embedder,
        k: int = 2,
        exact_threshold: float = DEFAULT_EXACT_THRESHOLD,
        *,
        mode: str = "cascade",
        boundary_veto: bool = True,
    ) -> None:
        if k < 1:
            raise ValueError("k must be >= 1")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (not one of {MODES})")
        self.store, self.embedder, self.k = store, embedder, k
        self.exact_threshold, self.mode, self.boundary_veto = exact_threshold, mode, boundary_veto
        self._entries = store.entries
        if self._entries:
            self._use = embedder.embed([e.use for e in self._entries])
            self._bnd = embedder.embed([e.boundary for e in self._entries])

    def _similarities(self, items: Sequence[ReaderItem]) -> tuple[np.ndarray, np.ndarray]:
        n = len(self._entries)
        if not n or not items:
            z = np.zeros((len(items), n), dtype=np.float32)
            return z, z
        q = self.embedder.embed([query_text(it) for it in items])
        return cosine(q, self._use), cosine(q, self._bnd)

    def _exact(self, use: np.ndarray, bnd: np.ndarray) -> list[tuple[Entry, float]]:
        hits = []
        for j, e in enumerate(self._entries):
            s = float(use[j])
            if s >= self.exact_threshold and not (self.boundary_veto and float(bnd[j]) > s):
                hits.append((j, e, s))
        hits.sort(key=lambda t: (-t[2], -t[1].net, t[0]))
        return [(e, s) for _, e, s in hits[: self.k]]

    def _bucket(self, use: np.ndarray, dimension: str | None) -> list[tuple[Entry, float]]:
        pool = [
            (j, e, float(use[j]))
            for j, e in enumerate(self._entries)
            if dimension is not None and e.dimension == dimension
        ]
        pool.sort(key=lambda t: (-t[1].net, -t[2], t[0]))
        return [(e, s) for _, e, s in pool[: self.k]]

    def _activate(
        self, item: ReaderItem, dim: str | None, use: np.ndarray, bnd: np.ndarray
    ) -> Activation:
        if dim is not None and dim not in DIMENSIONS:
            raise ValueError(f"unknown predicted dimension {dim!r} for item {item.item_id!r}")
        chosen: list[tuple[Entry, float]] = []
        level = "none"
        if self.mode == "store":
            chosen = [(e, float(use[j])) for j, e in enumerate(self._entries)]
            level = "store" if chosen else "none"
        else:
            if self.mode in ("cascade", "exact_only"):
                chosen = self._exact(use, bnd)
                level = "exact" if chosen else "none"
            if not chosen and self.mode in ("cascade", "dimension_only"):
                chosen = self._bucket(use, dim)
                level = "dimension" if chosen else "none"
            if not chosen and self.mode == "cascade":
                level = "scaffold"
        entries = tuple(e for e, _ in chosen)
        text = scaffold_block() if level == "scaffold" else guidance_block(entries)
        return Activation(item.item_id, level, entries, tuple(s for _, s in chosen), dim, text)

    def select_batch(
        self, items: Sequence[ReaderItem], predicted: Sequence[str | None]
    ) -> list[Activation]:
        """One activation per item (one embedding call for all the questions)."""
        if len(predicted) != len(items):
            raise ValueError("one predicted dimension (or None) per item")
        use, bnd = self._similarities(items)
        return [
            self._activate(it, d, use[i], bnd[i])
            for i, (it, d) in enumerate(zip(items, predicted, strict=True))
        ]

    def select(self, item: ReaderItem, predicted_dimension: str | None) -> Activation:
        return self.select_batch([item], [predicted_dimension])[0]


@dataclass(frozen=True)
class Coverage:
    """cov (§5.5.3: the share of items with a non-empty exact recall) and the share per level."""

    n: int
    exact: float
    shares: dict[str, float]


def coverage(activations: Sequence[Activation]) -> Coverage:
    if not activations:
        raise ValueError("coverage of no activations")
    n = len(activations)
    shares = {lv: sum(a.level == lv for a in activations) / n for lv in LEVELS}
    return Coverage(n, shares["exact"], shares)


# ---------------------------------------------------------------- predicted dimension

DIMENSION_HINTS: dict[str, str] = {
    "Emotion": "what a character feels, and why",
    "Desire": "what a character wants or prefers",
    "Intention": "why a character acts, or what they will do next",
    "Knowledge": "what a character knows, saw, heard or was told",
    "Belief": "what a character believes or thinks, true or false, including beliefs about "
              "others' beliefs",
    "Non-Literal Communication": "irony, sarcasm, lies, hints, humour, faux pas or what a "
                                 "speaker really means",
    "Others": "anything else (norms, reality, plain facts of the story)",
}  # fmt: skip
DIMENSION_MARKER = "Which social-mental dimension does this question ask about?"
DIMENSION_FAMILY = prompt_family("harness.dimension", "json")


def dimension_format() -> ReplyFormat:
    """The dimension reply: one of :data:`DIMENSIONS`, by name."""
    model = reply_model("Dimension", dimension=(enum_of(list(DIMENSIONS)), Field()))
    return ReplyFormat.json(DIMENSION_FAMILY, model)


class DimensionPrediction(NamedTuple):
    dimension: str | None
    status: str  # "ok" | "unparsed"
    raw: str


def dimension_messages(item: ReaderItem) -> tuple[Message, ...]:
    dims = "\n".join(f"- {d}: {DIMENSION_HINTS[d]}" for d in DIMENSIONS)
    parts = [DIMENSION_MARKER, "Dimensions:", dims, "", f"Question: {item.question}"]
    ob = options_block(item)
    if ob:
        parts.append(ob)
    parts += ["", describe(dimension_format())]
    return (Message("user", "\n".join(parts)),)


@family_example(DIMENSION_FAMILY)
def _dimension_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return Request(dimension_messages(ITEM), SamplingParams(max_tokens=16), dimension_format())


def parse_dimension(reply: str) -> str | None:
    """The dimension a reply names, else None (the reply breaks :func:`dimension_format`)."""
    try:
        return str(dimension_format().parse(reply).dimension)
    except ReplyError:
        return None


def predict_dimension(
    items: Sequence[ReaderItem],
    backend: Backend,
    *,
    max_tokens: int = 16,
    seed: int = 0,
    ledgers: Sequence[CallLedger] | None = None,
    structured: bool = True,
) -> list[DimensionPrediction]:
    """One greedy call per item, all in one batch; an unparsed reply gives ``None`` with its
    raw text. Usage is added to ``ledgers[i]`` (role ``dimension``) when given."""
    if ledgers is not None and len(ledgers) != len(items):
        raise ValueError("one ledger per item")
    params = SamplingParams(n=1, temperature=0.0, max_tokens=max_tokens, seed=seed)
    fmt = dimension_format()
    outs = backend.generate([Request(dimension_messages(it), params, fmt, structured)
                             for it in items])
    preds = []
    for i, cs in enumerate(outs):
        if ledgers is not None:
            ledgers[i].add("dimension", cs)
        dim = parse_dimension(cs[0].text)
        preds.append(DimensionPrediction(dim, "ok" if dim else "unparsed", cs[0].text))
    return preds


def unparsed_count(preds: Sequence[DimensionPrediction]) -> int:
    return sum(p.status != "ok" for p in preds)


# ---------------------------------------------------------------- the Reflector

REFLECTOR_SYSTEM = (
    "You distil reusable reasoning strategies for questions about what characters perceive, "
    "know, believe, want, intend and feel. Reply with one JSON object and nothing else."
)
REFLECTOR_MARKER = "Reply with exactly one JSON object (the reflection):"
REFLECTOR_TASK = """Story:
{story}

Question: {question}
{options}
The system answered: {answer}
The correct answer: {gold}

Guidance the system was given:
{entries}

Label each guidance entry by its id as "helpful", "harmful" or "neutral" for this case. If a \
reusable strategy is missing, propose one: general, answer-independent guidance that would \
help on other stories with the same pattern, with when to use it and when not to (write null \
for the strategy when none is missing). Do not write the answer or any name of this story.
{marker} {reply}"""
REFLECTOR_FAMILY = prompt_family("harness.reflector", "json")
#: the longest texts of a reflection, and how a smaller budget is shared between them
REFLECTION_CHARS = {"strategy": 400, "use": 150, "boundary": 150}
REFLECTION_SHARES = {"strategy": 0.5, "use": 0.25, "boundary": 0.25}


@dataclass(frozen=True)
class Reflection:
    """An accepted Reflector reply: labels of the shown entries and an optional strategy
    (``revise`` names the shown entry it rewrites, else a new strategy is curated)."""

    labels: dict[str, str]
    dimension: str | None = None
    strategy: str = ""
    use: str = ""
    boundary: str = ""
    revise: str | None = None


class Rejected(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def reflector_format(shown: Sequence[str], max_tokens: int = 400) -> ReplyFormat:
    """The Reflector's reply: an optional strategy with its dimension, use and boundary, the
    label of every shown entry (by id) and which shown entry, if any, the strategy revises;
    the texts share what the token cap leaves of ``CHARS_PER_TOKEN * max_tokens``."""
    label = enum_of(list(LABELS))
    labels = reply_model("EntryLabels", **{eid: (label, Field()) for eid in shown})
    fixed = 150 + 30 * len(shown)  # keys, the dimension, labels and revise: one token a char
    budget = max(0, CHARS_PER_TOKEN * (max_tokens - fixed))

    def text(key: str) -> tuple[Any, Any]:
        most = max(16, min(REFLECTION_CHARS[key], int(REFLECTION_SHARES[key] * budget)))
        return (str | None, text_field(most, 1, _REFLECTION_HINTS[key]))

    model = reply_model(
        "Reflection",
        dimension=(enum_of(list(DIMENSIONS)) | None, Field()),
        strategy=text("strategy"), use=text("use"), boundary=text("boundary"),
        labels=(labels, Field()),
        revise=(enum_of(list(shown)) | None if shown else None, Field()),
    )
    return ReplyFormat.json(REFLECTOR_FAMILY, model)


_REFLECTION_HINTS = {
    "strategy": "the missing strategy",
    "use": "the kind of question it applies to",
    "boundary": "the kind of question it must not be applied to",
}


def reflector_messages(
    item: ReaderItem, record: ItemRecord, entries: Sequence[Entry],
    fmt: ReplyFormat | None = None,
) -> tuple[Message, ...]:
    shown = "\n".join(f"- {e.entry_id}: {e.render()}" for e in entries) or "(none)"
    answer = record.answer_text or record.answer or "(no answer it could parse)"
    fmt = fmt or reflector_format([e.entry_id for e in entries])
    body = REFLECTOR_TASK.format(
        story=item.context.strip(),
        question=item.question,
        options=options_block(item),
        answer=answer,
        gold=item.option_text(item.gold_key()),
        entries=shown,
        marker=REFLECTOR_MARKER,
        reply=describe(fmt),
    )
    return (Message("system", REFLECTOR_SYSTEM), Message("user", body))


@family_example(REFLECTOR_FAMILY)
def _reflector_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM
    from cogrsi_lib.reader.records import new_record

    entry = Entry("m1", "Belief", "Keep the last state a character saw.",
                  "a character was away during a change", "they saw the change")
    fmt = reflector_format(["m1"])
    return Request(reflector_messages(ITEM, new_record("x", ITEM), [entry], fmt),
                   SamplingParams(max_tokens=400), fmt)


def _field(reply: Any, key: str) -> str:
    v = getattr(reply, key)
    v = clean(v) if v is not None else ""
    if not v:
        raise Rejected("missing_field", f"{key!r} is empty")
    return v


def _contains_phrase(text: str, phrase: str) -> bool:
    p = normalise_free_text(phrase)
    return bool(p) and re.search(rf"(?<!\w){re.escape(p)}(?!\w)", normalise_free_text(text))


def parse_reflection(
    text: str, shown: Sequence[str], gold_text: str | None, names: Sequence[str] = (),
    fmt: ReplyFormat | None = None,
) -> Reflection:
    """A :class:`Reflection` from a reply; raises :class:`Rejected` with the reason code
    (``malformed_json`` for a reply that breaks its :func:`reflector_format`)."""
    try:
        reply = (fmt or reflector_format(shown)).parse(text)
    except ReplyError as err:
        raise Rejected("malformed_json", err.reason) from err
    labels = reply.labels.model_dump()
    if reply.strategy is None or not reply.strategy.strip():
        return Reflection(labels)
    strategy, use, boundary = (_field(reply, "strategy"), _field(reply, "use"),
                               _field(reply, "boundary"))
    if reply.dimension is None:
        raise Rejected("missing_field", "a strategy needs its dimension")
    dim, revise = str(reply.dimension), reply.revise
    written = f"{strategy} {use} {boundary}"
    if gold_text and _contains_phrase(written, gold_text):
        raise Rejected("names_gold", f"writes the gold answer {gold_text!r}")
    hits = names_in(written, names)
    if hits:
        raise Rejected("names_story", f"names {', '.join(hits)}")
    return Reflection(dict(labels), dim, strategy, use, boundary, revise)


# ---------------------------------------------------------------- the Curator


@dataclass(frozen=True)
class Curation:
    """What the Curator did with one reflection."""

    action: str  # "added" | "merged" | "revised" | "labels"
    entry_id: str | None
    similarity: float | None
    applied: dict[str, str]
    stale: tuple[str, ...]
    pruned: tuple[str, ...]


def _embed_one(embedder: Embedder, text: str) -> np.ndarray:
    return embedder.embed([text])


def prune(store: ExperienceStore, embedder: Embedder) -> list[str]:
    """Remove entries while over budget: the worst h- - h+ first, then the most redundant (the
    highest cosine of its strategy with another entry's), then the newest."""
    removed: list[str] = []
    while len(store) > store.budget:
        entries = store.entries
        vecs = embedder.embed([e.strategy for e in entries])
        sims = cosine(vecs, vecs)
        np.fill_diagonal(sims, -np.inf)
        redundancy = sims.max(axis=1) if len(entries) > 1 else np.zeros(len(entries))
        worst = max(
            range(len(entries)),
            key=lambda j: (entries[j].harmed - entries[j].helped, float(redundancy[j]), j),
        )
        removed.append(store.remove(entries[worst].entry_id).entry_id)
    return removed


def curate(
    store: ExperienceStore,
    reflection: Reflection,
    item_id: str,
    embedder: Embedder,
    *,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    round_: int = 0,
) -> Curation:
    """Apply one reflection in place: labels -> h+/h-, then revise, merge or add, then prune."""
    applied, stale = {}, []
    for eid, lab in reflection.labels.items():
        if eid not in store:
            stale.append(eid)  # pruned since it was shown
            continue
        e = store.get(eid)
        if lab == "helpful":
            store.put(replace(e, helped=e.helped + 1))
        elif lab == "harmful":
            store.put(replace(e, harmed=e.harmed + 1))
        applied[eid] = lab
    action, eid, sim = "labels", None, None
    if reflection.strategy and reflection.dimension:

        def prov(op: str) -> Provenance:
            return Provenance(op, item_id, round_, reflection.strategy)

        if reflection.revise is not None and reflection.revise in store:
            old = store.get(reflection.revise)
            store.put(
                replace(
                    old,
                    dimension=reflection.dimension,
                    strategy=reflection.strategy,
                    use=reflection.use,
                    boundary=reflection.boundary,
                    provenance=(*old.provenance, prov("revised")),
                )
            )
            action, eid = "revised", old.entry_id
        else:
            bucket = store.bucket(reflection.dimension)
            if bucket:
                sims = cosine(
                    _embed_one(embedder, reflection.strategy),
                    embedder.embed([e.strategy for e in bucket]),
                )[0]
                j = int(np.argmax(sims))
                sim = float(sims[j])
            if bucket and sim is not None and sim >= merge_threshold:
                host = bucket[j]
                store.put(replace(host, provenance=(*host.provenance, prov("merged"))))
                action, eid = "merged", host.entry_id
            else:
                new = store.add(
                    reflection.dimension,
                    reflection.strategy,
                    reflection.use,
                    reflection.boundary,
                    prov("added"),
                )
                action, eid = "added", new.entry_id
    pruned = tuple(prune(store, embedder))
    return Curation(action, eid, sim, applied, tuple(stale), pruned)


# ---------------------------------------------------------------- distillation

AnswerFn = Callable[[Sequence[ReaderItem], list[list[Entry]]], list[ItemRecord]]


def annotated_dimension(item: ReaderItem) -> str | None:
    """A development item's dimension from its own labels (None without an annotation)."""
    ann = annotate(item)
    return ann.dimension if ann else None


@dataclass(frozen=True)
class ReflectionLog:
    """One Reflector call and what came of it."""

    round: int
    item_id: str
    correct: bool
    shown: tuple[str, ...]
    text: str
    status: str  # "ok" | "rejected"
    reason: str = ""
    detail: str = ""
    action: str = ""
    entry_id: str | None = None
    similarity: float | None = None
    applied: dict[str, str] = field(default_factory=dict)
    stale: tuple[str, ...] = ()
    pruned: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoundLog:
    round: int
    n_items: int
    n_correct: int
    coverage: dict[str, float]
    n_reflected: int
    n_rejected: int
    store_size: int


@dataclass
class DistilLog:
    """Everything :func:`distil` did: per round, per Reflector call, and the calls' usage."""

    rounds: list[RoundLog] = field(default_factory=list)
    reflections: list[ReflectionLog] = field(default_factory=list)
    ledger: CallLedger = field(default_factory=CallLedger)

    def rejections(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.reflections:
            if r.status == "rejected":
                out[r.reason] = out.get(r.reason, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": [asdict(r) for r in self.rounds],
            "reflections": [asdict(r) for r in self.reflections],
            "usage": self.ledger.to_dict(),
        }


def _check_dev(dev_items: Sequence[ReaderItem], test_ids: Iterable[str]) -> None:
    ids = [it.item_id for it in dev_items]
    dup = sorted(i for i, n in Counter(ids).items() if n > 1)
    if dup:
        raise ValueError(f"duplicate development item ids: {dup}")
    leak = sorted(set(ids) & set(test_ids))
    if leak:
        raise ValueError(f"development items overlap the test set: {leak[:10]}")
    no_gold = [it.item_id for it in dev_items if it.gold is None]
    if no_gold:
        raise ValueError(f"development items without a gold answer: {no_gold[:10]}")


def distil(
    store: ExperienceStore,
    dev_items: Sequence[ReaderItem],
    answer_fn: AnswerFn,
    backend: Backend,
    embedder: Embedder,
    *,
    rounds: int = 1,
    k: int = 2,
    test_ids: Iterable[str] = frozenset(),
    exact_threshold: float = DEFAULT_EXACT_THRESHOLD,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    reflect_correct: bool = True,
    dimension_of: Callable[[ReaderItem], str | None] = annotated_dimension,
    temperature: float = 0.0,
    max_tokens: int = 400,
    seed: int = 0,
    structured: bool = True,
) -> tuple[ExperienceStore, DistilLog]:
    """Distil strategies from development items (§5.5.1); the input store is not changed.

    Each round: the Selector (exact recall, then the item's own dimension's bucket) picks at
    most ``k`` entries per item; ``answer_fn`` answers every item with its entries; the
    Reflector is called once for each wrong item and, with ``reflect_correct``, each right
    item that was given entries; the Curator applies the accepted replies in item order.
    Raises ``ValueError`` when a development item id is in ``test_ids``.
    """
    _check_dev(dev_items, test_ids)
    if rounds < 0:
        raise ValueError("rounds must be >= 0")
    store, log = store.copy(), DistilLog()
    items = list(dev_items)
    params = SamplingParams(n=1, temperature=temperature, max_tokens=max_tokens, seed=seed)
    for rnd in range(1, rounds + 1):
        selector = Selector(store, embedder, k, exact_threshold, mode="cascade")
        acts = selector.select_batch(items, [dimension_of(it) for it in items])
        guidance = [list(a.entries) for a in acts]
        records = answer_fn(items, guidance)
        if len(records) != len(items) or any(
            r.item_id != it.item_id for r, it in zip(records, items, strict=False)
        ):
            raise ValueError("answer_fn must return one record per item, in the items' order")
        todo = [
            i
            for i, r in enumerate(records)
            if r.correct is not True or (reflect_correct and guidance[i])
        ]
        reqs = []
        for i in todo:
            fmt = reflector_format([e.entry_id for e in guidance[i]], max_tokens)
            reqs.append(Request(reflector_messages(items[i], records[i], guidance[i], fmt),
                                params, fmt, structured))
        outs = backend.generate(reqs) if reqs else []
        rejected = 0
        for i, req, cs in zip(todo, reqs, outs, strict=True):
            log.ledger.add("reflector", cs)
            it, rec, c = items[i], records[i], cs[0]
            shown = tuple(e.entry_id for e in guidance[i])
            names = sorted(story_names([it], [rec]))
            base = dict(
                round=rnd, item_id=it.item_id, correct=rec.correct is True, shown=shown, text=c.text
            )
            try:
                refl = parse_reflection(c.text, shown, it.option_text(it.gold_key()), names,
                                        req.reply)
            except Rejected as err:
                rejected += 1
                log.reflections.append(
                    ReflectionLog(**base, status="rejected", reason=err.reason, detail=err.detail)
                )
                continue
            cur = curate(
                store, refl, it.item_id, embedder, merge_threshold=merge_threshold, round_=rnd
            )
            log.reflections.append(
                ReflectionLog(
                    **base,
                    status="ok",
                    action=cur.action,
                    entry_id=cur.entry_id,
                    similarity=cur.similarity,
                    applied=cur.applied,
                    stale=cur.stale,
                    pruned=cur.pruned,
                )
            )
        cov = coverage(acts).shares if acts else {}
        log.rounds.append(
            RoundLog(
                rnd,
                len(items),
                sum(r.correct is True for r in records),
                cov,
                len(todo),
                rejected,
                len(store),
            )
        )
    return store, log
