"""Gated social-mental retrieval over normative notes (zing-social-mind-report §5.6, §5.6.1-5.6.2).

The store is a list of short notes (``notes.yaml`` next to this module): norms, conventions,
pragmatic facts and facts about cognition, each labelled with categories of our taxonomy
:data:`CATEGORIES` (the report's 43 categories are not in our copy; ours are 37, each under one
family of :data:`cogrsi_lib.harness.taxonomy.FAMILIES`).

Retrieval for an item ``x`` (§5.6.1):

1. predicted categories ``L(x)``: either :func:`predict_categories`, one strict model call per
   item (batched) replying ``Categories: a, b`` or ``Categories: none``; or, without a call,
   :func:`categories_for_variable` / :func:`categories_for_family` from the router's asked
   variable or its family;
2. the pool ``P(x)``: the union of the buckets of those categories (notes of weight 0 and
   categories of weight 0 take no part: they are the suppressed notes and skipped categories);
3. the gate: no injection when ``L(x)`` is empty (``no_category``), the pool is empty
   (``empty_pool``) or no note of the pool reaches cosine ``min_similarity`` with the item's
   question and options (``below_threshold``); otherwise (``inject``) the notes that reach it
   are ranked by ``cosine x category weight x note weight`` and the top ``k`` go into a
   background block that never overrides the story.

Validation-guided credit (§5.6.2, eq. 9): :func:`credit` scores each injected note on held-out
validation items (repair +1, damage -1, no change 0, averaged) and :func:`refine` turns those
utilities into a new retriever (suppressed notes, reweighted notes and categories).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field

from cogrsi_lib.embedding import Embedder, cosine
from cogrsi_lib.harness.skills import ASKED_VARIABLES, load_yaml_list
from cogrsi_lib.harness.taxonomy import FAMILIES
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat, describe, enum_of, reply_model
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.reader.items import ReaderItem

#: the notes that ship with the package
DEFAULT_PATH = Path(__file__).with_name("notes.yaml")

#: retrieval category -> (parent family, what it covers)
CATEGORIES: dict[str, tuple[str, str]] = {
    # L0 perception
    "perceptual_access": ("perception", "who was present and could see or hear an event"),
    "attention": ("perception", "noticing, distraction, missing what is in plain view"),
    # L1 knowledge
    "access_knowledge": ("knowledge", "knowing requires access: seeing, being told, inferring"),
    "communication": ("knowledge", "being told, overhearing, news passed on"),
    "pretend_play": ("knowledge", "pretending or imitating versus believing"),
    "partial_information": ("knowledge", "what follows from partial information, 'some' vs 'all'"),
    # L2 belief
    "location_false_belief": ("belief", "an object moved while someone was away"),
    "content_false_belief": ("belief", "unexpected contents, labels, appearance versus reality"),
    "second_order_belief": ("belief", "what one character thinks another believes"),
    "belief_update": ("belief", "when and how people revise a belief"),
    "belief_based_action": ("belief", "people act on what they believe, not on reality"),
    # L3 desire
    "discrepant_desires": ("desire", "different people want different things"),
    "multiple_desires": ("desire", "several wishes at once, trade-offs between them"),
    "desire_action": ("desire", "wants drive actions, plans and persuasion"),
    # L4 emotion
    "typical_emotion": ("emotion", "the usual feeling after getting or missing what one wants"),
    "atypical_emotion": ("emotion", "an unusual feeling explained by a person's history"),
    "belief_based_emotion": ("emotion", "feelings follow beliefs and expectations: surprise"),
    "hidden_emotion": ("emotion", "showing one feeling while having another"),
    "mixed_emotion": ("emotion", "two feelings about one event"),
    "moral_emotion": ("emotion", "guilt, shame, pride, relief about right and wrong"),
    "emotion_regulation": ("emotion", "calming down, coping, comforting someone upset"),
    # L5 intention
    "goal_inference": ("intention", "why someone acts: the goal behind an action"),
    "failed_action": ("intention", "what an interrupted or failed attempt was aiming at"),
    "accident_vs_intent": ("intention", "harm done on purpose versus by accident"),
    "action_prediction": ("intention", "what someone will do next"),
    # L6 non-literal
    "irony_sarcasm": ("non_literal", "saying the opposite of what is meant"),
    "white_lie": ("non_literal", "a kind falsehood that spares someone's feelings"),
    "deception": ("non_literal", "lies, misleading, double bluff"),
    "hint": ("non_literal", "indirect requests and hints"),
    "joke_humour": ("non_literal", "jokes and teasing not meant seriously"),
    "figurative_speech": ("non_literal", "metaphors, idioms, exaggeration"),
    # L7 norms
    "faux_pas": ("norms", "an unintended hurtful or embarrassing remark"),
    "politeness": ("norms", "polite and rude speech or behaviour"),
    "secrets_privacy": ("norms", "secrets, surprises and confidences"),
    "gift_norms": ("norms", "giving and receiving gifts"),
    "apology_thanks": ("norms", "apologies, thanks and returning favours"),
    "social_roles": ("norms", "what roles such as host, guest, teacher or boss expect"),
}

KnowledgeType = Literal["norm", "convention", "pragmatics", "cognition"]
KNOWLEDGE_TYPES: tuple[str, ...] = ("norm", "convention", "pragmatics", "cognition")

Decision = Literal["inject", "no_category", "empty_pool", "below_threshold"]
PredictionStatus = Literal["ok", "none", "unparsed"]

#: default gate threshold on the cosine of all-MiniLM-L6-v2 between question+options and a note.
#: Measured on the shipped notes: 20 off-topic questions (arithmetic, geography, science) reach
#: at most 0.27 against any note (median 0.15); ToMBench's faux-pas questions ("does anyone say
#: something inappropriate", "which sentence is inappropriate") reach 0.35-0.38, their factual
#: control questions 0.14-0.22; over 470 ToMBench questions under their family's categories the
#: median is 0.27. 0.30 declines every off-topic question and the control questions while
#: keeping the normative ones (§5.6: surface-similar but unhelpful entries dilute attention).
DEFAULT_MIN_SIMILARITY = 0.30

BLOCK_HEADER = (
    "Background notes (general social knowledge, not facts about this story). "
    "They never override the story: where the story says otherwise, follow the story, "
    "and answer about what the characters in it know, want and feel."
)

_NOTE_FIELDS = ("id", "text", "categories", "type")
_ID = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")
_MAX_TEXT = 320


def _check_family_coverage() -> None:
    bad = {c: f for c, (f, _) in CATEGORIES.items() if f not in FAMILIES}
    if bad:  # pragma: no cover - guards the table above
        raise RuntimeError(f"categories with unknown families: {bad}")


_check_family_coverage()


class NotesError(ValueError):
    """A malformed notes file; the message names the file and the note."""


@dataclass(frozen=True)
class Note:
    """One knowledge entry ``e`` with its labels ``L(e)`` and knowledge type."""

    id: str
    text: str
    categories: tuple[str, ...]
    type: KnowledgeType

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(f"note id {self.id!r} must be lower-case letters, digits, _ or -")
        if not self.text.strip():
            raise ValueError(f"note {self.id!r}: empty text")
        if not self.categories:
            raise ValueError(f"note {self.id!r}: no categories")
        unknown = [c for c in self.categories if c not in CATEGORIES]
        if unknown:
            raise ValueError(f"note {self.id!r}: unknown categories {unknown}")
        if len(set(self.categories)) != len(self.categories):
            raise ValueError(f"note {self.id!r}: repeated category")
        if self.type not in KNOWLEDGE_TYPES:
            raise ValueError(f"note {self.id!r}: unknown knowledge type {self.type!r}")


def parse_note(entry: Any, where: str) -> Note:
    """One YAML entry as a :class:`Note`; errors name ``where`` (file and note)."""
    if not isinstance(entry, Mapping):
        raise NotesError(f"{where}: expected a mapping, got {type(entry).__name__}")
    missing = [f for f in _NOTE_FIELDS if f not in entry]
    extra = sorted(set(map(str, entry)) - set(_NOTE_FIELDS))
    if missing or extra:
        raise NotesError(f"{where}: missing fields {missing}, unknown fields {extra}")
    if not isinstance(entry["id"], str):
        raise NotesError(f"{where}: id must be a string")
    where = f"{where} ({entry['id']!r})"
    text, cats = entry["text"], entry["categories"]
    if not isinstance(text, str) or not text.strip():
        raise NotesError(f"{where}: text must be a non-empty string")
    if len(text) > _MAX_TEXT:
        raise NotesError(f"{where}: text longer than {_MAX_TEXT} characters")
    if not isinstance(cats, list) or not all(isinstance(c, str) for c in cats):
        raise NotesError(f"{where}: categories must be a list of names")
    try:
        return Note(entry["id"], " ".join(text.split()), tuple(cats), entry["type"])
    except ValueError as e:
        raise NotesError(f"{where}: {e}") from e


def load_notes(path: str | Path | None = None) -> tuple[Note, ...]:
    """The notes in ``path`` (default: the shipped ``notes.yaml``), strictly validated: a
    mapping with a ``notes`` list; unknown or missing fields, unknown categories or types,
    empty or over-long text and duplicate ids raise :class:`NotesError` naming file and note."""
    p = Path(path) if path is not None else DEFAULT_PATH
    notes = load_yaml_list(
        p, "notes", "note", parse_note, NotesError, what="notes", empty="the file has no notes"
    )
    return tuple(notes)


# ---------------------------------------------------------------- predicted categories L(x)

#: asked variables whose categories are narrower than their family's
_VARIABLE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "reality": (),  # a question about the world itself needs no social knowledge
    "first_order_belief": (
        "location_false_belief", "content_false_belief", "belief_update", "belief_based_action",
    ),
    "higher_order_belief": ("second_order_belief", "belief_update"),
}  # fmt: skip


def categories_for_family(family: str) -> tuple[str, ...]:
    """The deterministic ``L(x)`` from a family: every category whose parent it is."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}")
    return tuple(c for c, (f, _) in CATEGORIES.items() if f == family)


def categories_for_variable(variable: str) -> tuple[str, ...]:
    """The deterministic ``L(x)`` from the router's asked variable: the belief variables and
    ``reality`` have their own lists (reality: none, so retrieval is bypassed); every other
    variable takes its family's categories (:func:`categories_for_family`)."""
    if variable not in ASKED_VARIABLES:
        raise ValueError(f"unknown asked variable {variable!r}")
    if variable in _VARIABLE_CATEGORIES:
        return _VARIABLE_CATEGORIES[variable]
    return categories_for_family(ASKED_VARIABLES[variable][0])


@dataclass(frozen=True)
class CategoryPrediction:
    """The predicted categories of one item. ``status``: ``ok`` (at least one category) or
    ``none`` (the reply names none), or ``unparsed`` (the reply breaks its format, see
    :func:`categories_format`; ``reason`` says how). Unpacks as
    ``(categories, status, raw)``."""

    categories: tuple[str, ...]
    status: PredictionStatus
    raw: str
    reason: str = ""
    ledger: CallLedger = field(default_factory=CallLedger, compare=False)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.categories, self.status, self.raw))


CATEGORIES_FAMILY = prompt_family("harness.categories", "json")
#: the most categories one prediction may name
MAX_CATEGORIES = 3


@cache  # one reply model, built once
def categories_format() -> ReplyFormat:
    """The category reply: a list of at most three category names of the taxonomy (an
    empty list when the story alone settles the question)."""
    model = reply_model("Categories", categories=(
        list[enum_of(list(CATEGORIES))],  # type: ignore[valid-type]
        Field(max_length=MAX_CATEGORIES, description="categories of social knowledge")))
    return ReplyFormat.json(CATEGORIES_FAMILY, model)


def parse_categories(reply: str) -> CategoryPrediction:
    """Strict parse against :func:`categories_format` (a name given twice counts once)."""
    try:
        names = tuple(dict.fromkeys(categories_format().parse(reply).categories))
    except ReplyError as err:
        return CategoryPrediction((), "unparsed", reply, reason=err.reason)
    return CategoryPrediction(names, "ok" if names else "none", reply)


CATEGORY_SYSTEM = (
    "You label questions about stories with the kinds of social knowledge they may need. "
    "Name only categories from the list."
)


def question_block(item: ReaderItem) -> str:
    """The item's question and options, as the category prompt and the retrieval query see it."""
    lines = [f"Question: {item.question}"]
    if item.options:
        labels = item.labels or ()
        lines += [f"{lab}. {opt}" for lab, opt in zip(labels, item.options, strict=True)]
    return "\n".join(lines)


def category_messages(item: ReaderItem, *, include_story: bool = True) -> list[Message]:
    """The category prompt: (story,) question, options, the taxonomy and the reply format."""
    menu = "\n".join(f"- {c}: {desc}" for c, (_, desc) in CATEGORIES.items())
    story = f"Story:\n{item.context}\n\n" if include_story else ""
    user = (
        f"{story}{question_block(item)}\n\nCategories:\n{menu}\n\n"
        "Which categories of social knowledge could help answer the question? Name at most "
        "three, or none ([]) if the story alone settles it. "
        f"{describe(categories_format())}"
    )
    return [Message("system", CATEGORY_SYSTEM), Message("user", user)]


@family_example(CATEGORIES_FAMILY)
def _categories_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py)."""
    from cogrsi_lib.reader.example_items import ITEM

    return Request(tuple(category_messages(ITEM)), SamplingParams(max_tokens=48),
                   categories_format())


def predict_categories(
    items: Sequence[ReaderItem],
    backend: Backend,
    *,
    include_story: bool = True,
    max_tokens: int = 48,
    seed: int = 0,
    structured: bool = True,
) -> list[CategoryPrediction]:
    """``L(x)`` by the model: one greedy call per item (:func:`categories_flow`), all in one
    stream; each prediction carries its call in ``ledger`` (role ``rag_categories``). See
    :func:`parse_categories`."""
    return run_flows(backend, [
        categories_flow(it, include_story=include_story, max_tokens=max_tokens, seed=seed,
                        structured=structured) for it in items])


def categories_flow(item: ReaderItem, *, include_story: bool = True, max_tokens: int = 48,
                    seed: int = 0, structured: bool = True) -> Flow[CategoryPrediction]:
    """An item's category call (a step of its flow, :mod:`cogrsi_lib.llm.flow`)."""
    [cs] = yield [Request.of(
        category_messages(item, include_story=include_story),
        reply=categories_format(),
        structured=structured,
        n=1,
        temperature=0.0,
        max_tokens=max_tokens,
        seed=seed,
    )]
    pred = parse_categories(cs[0].text)
    pred.ledger.add("rag_categories", cs)
    return pred


def prediction_counts(predictions: Iterable[CategoryPrediction]) -> dict[str, int]:
    """How many predictions had each status."""
    counts = {"ok": 0, "none": 0, "unparsed": 0}
    for p in predictions:
        counts[p.status] += 1
    return counts


# ---------------------------------------------------------------------------- retrieval


@dataclass(frozen=True)
class Scored:
    """A chosen note: its cosine with the query and its weighted score."""

    note_id: str
    similarity: float
    score: float


@dataclass(frozen=True)
class Retrieval:
    """What retrieval did for one item; ``block`` is empty unless ``decision == "inject"``."""

    item_id: str
    categories: tuple[str, ...]
    pool_size: int
    decision: Decision
    best_similarity: float | None
    chosen: tuple[Scored, ...]
    block: str

    @property
    def injected(self) -> bool:
        return self.decision == "inject"

    @property
    def note_ids(self) -> tuple[str, ...]:
        return tuple(s.note_id for s in self.chosen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "categories": list(self.categories),
            "pool_size": self.pool_size,
            "decision": self.decision,
            "best_similarity": self.best_similarity,
            "chosen": [
                {"note_id": s.note_id, "similarity": s.similarity, "score": s.score}
                for s in self.chosen
            ],
        }


def query_text(item: ReaderItem, *, include_story: bool = False) -> str:
    """The text embedded for an item: question and options, after the story if asked."""
    q = question_block(item)
    return f"{item.context}\n{q}" if include_story else q


def render_block(notes: Sequence[Note]) -> str:
    """The background block: a header, then one line per note with its labels and type."""
    lines = [BLOCK_HEADER]
    lines += [f"- [{', '.join(n.categories)}; {n.type}] {n.text}" for n in notes]
    return "\n".join(lines)


def _weights(
    given: Mapping[str, float] | None, known: Iterable[str], what: str
) -> dict[str, float]:
    known = set(known)
    out: dict[str, float] = {}
    for key, w in (given or {}).items():
        if key not in known:
            raise ValueError(f"{what} weight for unknown {what} {key!r}")
        if not np.isfinite(w) or w < 0:
            raise ValueError(f"{what} weight of {key!r} must be finite and >= 0, not {w}")
        out[key] = float(w)
    return out


class Retriever:
    """Taxonomy-gated retrieval of at most ``k`` notes (§5.6.1).

    ``category_weights`` and ``note_weights`` default to 1; a weight of 0 removes the
    category's bucket (a skipped category) or the note (a suppressed note) from every pool.
    A note's category weight for an item is the largest weight among its categories that
    the item's ``L(x)`` names. ``include_story`` adds the story to the embedded query.
    """

    def __init__(
        self,
        notes: Sequence[Note],
        embedder: Embedder,
        *,
        k: int = 2,
        min_similarity: float = DEFAULT_MIN_SIMILARITY,
        category_weights: Mapping[str, float] | None = None,
        note_weights: Mapping[str, float] | None = None,
        include_story: bool = False,
    ) -> None:
        if k < 1:
            raise ValueError("k must be >= 1")
        if not -1.0 <= min_similarity <= 1.0:
            raise ValueError("min_similarity must be a cosine in [-1, 1]")
        ids = [n.id for n in notes]
        if len(set(ids)) != len(ids):
            raise ValueError("duplicate note ids")
        self.notes = tuple(notes)
        self.embedder = embedder
        self.k = k
        self.min_similarity = float(min_similarity)
        self.category_weights = _weights(category_weights, CATEGORIES, "category")
        self.note_weights = _weights(note_weights, ids, "note")
        self.include_story = include_story
        self._by_id = {n.id: n for n in self.notes}
        self._index = {n.id: i for i, n in enumerate(self.notes)}
        self._keys: np.ndarray | None = None
        #: set by :func:`refine` on the retriever it returns
        self.refinement: Refinement | None = None

    # -- weights and buckets
    def category_weight(self, category: str) -> float:
        return self.category_weights.get(category, 1.0)

    def note_weight(self, note_id: str) -> float:
        return self.note_weights.get(note_id, 1.0)

    @property
    def suppressed(self) -> frozenset[str]:
        return frozenset(i for i, w in self.note_weights.items() if w == 0)

    @property
    def skipped_categories(self) -> frozenset[str]:
        return frozenset(c for c, w in self.category_weights.items() if w == 0)

    def note(self, note_id: str) -> Note:
        if note_id not in self._by_id:
            raise KeyError(f"unknown note id {note_id!r}")
        return self._by_id[note_id]

    def bucket(self, category: str) -> tuple[Note, ...]:
        """``B(c)``: the active notes labelled ``category`` (empty for a skipped category)."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}")
        if self.category_weight(category) == 0:
            return ()
        return tuple(
            n for n in self.notes if category in n.categories and self.note_weight(n.id) > 0
        )

    def pool(self, categories: Iterable[str]) -> tuple[Note, ...]:
        """``P(x)``: the union of the categories' buckets, in store order."""
        ids = {n.id for c in categories for n in self.bucket(c)}
        return tuple(n for n in self.notes if n.id in ids)

    def _note_keys(self) -> np.ndarray:
        if self._keys is None:
            self._keys = self.embedder.embed([n.text for n in self.notes])
        return self._keys

    # -- retrieval
    def retrieve(self, item: ReaderItem, categories: Sequence[str]) -> Retrieval:
        """Gate and rank for one item under the predicted categories (see the module doc)."""
        return self.retrieve_batch([item], [categories])[0]

    def retrieve_batch(
        self, items: Sequence[ReaderItem], categories: Sequence[Sequence[str]]
    ) -> list[Retrieval]:
        """:meth:`retrieve` for many items; the queries are embedded in one call."""
        if len(items) != len(categories):
            raise ValueError("one category list per item")
        cats = [tuple(dict.fromkeys(cs)) for cs in categories]
        for it, cs in zip(items, cats, strict=True):
            unknown = [c for c in cs if c not in CATEGORIES]
            if unknown:
                raise ValueError(f"item {it.item_id!r}: unknown categories {unknown}")
        pools = [self.pool(cs) for cs in cats]
        need = [i for i, p in enumerate(pools) if p]
        sims: dict[int, np.ndarray] = {}
        if need:
            queries = self.embedder.embed(
                [query_text(items[i], include_story=self.include_story) for i in need]
            )
            matrix = cosine(queries, self._note_keys())
            sims = {i: matrix[row] for row, i in enumerate(need)}
        out = []
        for i, (it, cs, pool) in enumerate(zip(items, cats, pools, strict=True)):
            out.append(self._decide(it, cs, pool, sims.get(i)))
        return out

    def _decide(
        self, item: ReaderItem, cats: tuple[str, ...], pool: tuple[Note, ...], sim: Any
    ) -> Retrieval:
        def result(decision: Decision, best=None, chosen=(), block="") -> Retrieval:
            return Retrieval(item.item_id, cats, len(pool), decision, best, tuple(chosen), block)

        if not cats:
            return result("no_category")
        if not pool:
            return result("empty_pool")
        scored = []
        for n in pool:
            s = float(sim[self._index[n.id]])
            cw = max(self.category_weight(c) for c in n.categories if c in cats)
            scored.append(Scored(n.id, s, s * cw * self.note_weight(n.id)))
        best = max(s.similarity for s in scored)
        eligible = [s for s in scored if s.similarity >= self.min_similarity]
        if not eligible:
            return result("below_threshold", best)
        order = {n.id: i for i, n in enumerate(pool)}
        eligible.sort(key=lambda s: (-s.score, -s.similarity, order[s.note_id]))
        chosen = eligible[: self.k]
        block = render_block([self._by_id[s.note_id] for s in chosen])
        return result("inject", best, chosen, block)

    def with_weights(
        self, category_weights: Mapping[str, float], note_weights: Mapping[str, float]
    ) -> Retriever:
        """The same store and settings under new weights (the note embeddings are shared)."""
        r = Retriever(
            self.notes,
            self.embedder,
            k=self.k,
            min_similarity=self.min_similarity,
            category_weights=category_weights,
            note_weights=note_weights,
            include_story=self.include_story,
        )
        r._keys = self._keys
        return r


# ------------------------------------------------------------ validation credit (eq. 9)


@dataclass(frozen=True)
class ValidationRow:
    """One validation item: the notes injected for it and whether the answer was right with
    the injection and without it."""

    item_id: str
    injected: tuple[str, ...]
    correct_with: bool
    correct_without: bool

    @staticmethod
    def of(row: ValidationRow | Mapping[str, Any]) -> ValidationRow:
        if isinstance(row, ValidationRow):
            return row
        try:
            injected = row["injected"]
            if isinstance(injected, str):
                raise TypeError("injected must be a list of note ids")
            return ValidationRow(
                str(row["item_id"]),
                tuple(str(i) for i in injected),
                _flag(row["correct_with"]),
                _flag(row["correct_without"]),
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"malformed validation row {dict(row)!r}: {e}") from e

    @property
    def effect(self) -> int:
        """+1 a repair (wrong without, right with), -1 damage (the reverse), 0 no change."""
        return int(self.correct_with) - int(self.correct_without)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"expected a boolean, got {value!r}")
    return bool(value)


@dataclass(frozen=True)
class Credit:
    """``u(e)``: a note's mean effect over the validation items it was injected for."""

    note_id: str
    repairs: int
    damages: int
    unchanged: int
    items: tuple[str, ...]

    @property
    def n(self) -> int:
        return self.repairs + self.damages + self.unchanged

    @property
    def utility(self) -> float:
        return (self.repairs - self.damages) / self.n if self.n else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "note_id": self.note_id, "repairs": self.repairs, "damages": self.damages,
            "unchanged": self.unchanged, "n": self.n, "utility": self.utility,
        }  # fmt: skip


def _check_disjoint(ids: Iterable[str], evaluation_ids: Iterable[str]) -> None:
    overlap = sorted(set(ids) & set(map(str, evaluation_ids)))
    if overlap:
        shown = ", ".join(overlap[:5]) + (" ..." if len(overlap) > 5 else "")
        raise ValueError(f"{len(overlap)} validation items are evaluation items: {shown}")


def credit(
    validation_rows: Iterable[ValidationRow | Mapping[str, Any]],
    *,
    evaluation_ids: Iterable[str] = (),
) -> dict[str, Credit]:
    """``u(e) = Credit(e; V)`` (eq. 9): each row adds its effect (+1 repair, -1 damage, 0 no
    change) to every note injected for it; a note's utility is the mean over its rows. Rows
    without injected notes carry no credit. Duplicate validation ids, and validation ids
    among ``evaluation_ids``, raise ``ValueError``."""
    rows = [ValidationRow.of(r) for r in validation_rows]
    ids = [r.item_id for r in rows]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate validation items: {dup}")
    _check_disjoint(ids, evaluation_ids)
    tally: dict[str, list[int]] = {}
    items: dict[str, list[str]] = {}
    for r in rows:
        for nid in dict.fromkeys(r.injected):
            t = tally.setdefault(nid, [0, 0, 0])
            t[{1: 0, -1: 1, 0: 2}[r.effect]] += 1
            items.setdefault(nid, []).append(r.item_id)
    return {nid: Credit(nid, t[0], t[1], t[2], tuple(items[nid])) for nid, t in tally.items()}


@dataclass(frozen=True)
class Refinement:
    """What :func:`refine` decided: suppressed notes, flagged (credited, kept, utility 0)
    notes and skipped categories."""

    suppressed: tuple[str, ...]
    flagged: tuple[str, ...]
    skipped_categories: tuple[str, ...]


def refine(
    retriever: Retriever,
    credits: Mapping[str, Credit],
    *,
    suppress_below: float = 0.0,
    evaluation_ids: Iterable[str] = (),
) -> Retriever:
    """``K, pi_ret <- Refine(K, pi_ret; {u(e)})`` (eq. 9), as a new retriever.

    - a credited note with ``u(e) < suppress_below`` is suppressed (weight 0: never retrieved);
    - every other credited note's weight is multiplied by ``1 + u(e)`` (so from 1 it becomes
      ``w(e) = 1 + u(e)`` in [0, 2]; uncredited notes keep theirs); kept notes with
      ``u(e) == 0`` are listed as flagged for revision;
    - a category's weight is multiplied by ``1 + mean u(e)`` over the credited notes kept in
      its bucket (unchanged when none is credited); a category is skipped (weight 0) when
      none of its notes is kept, or when every kept note of it is credited with ``u(e) <= 0``
      (its notes carry no retained utility).

    The result carries the decisions in ``refinement``. Credits for unknown notes, or whose
    validation items are among ``evaluation_ids``, raise ``ValueError``.
    """
    unknown = sorted(set(credits) - {n.id for n in retriever.notes})
    if unknown:
        raise ValueError(f"credits for unknown notes: {unknown}")
    _check_disjoint((i for c in credits.values() for i in c.items), evaluation_ids)
    note_w = dict(retriever.note_weights)
    for nid, c in credits.items():
        base = retriever.note_weight(nid)
        note_w[nid] = 0.0 if c.utility < suppress_below else base * (1.0 + c.utility)
    kept = {n.id for n in retriever.notes if note_w.get(n.id, 1.0) > 0}
    cat_w = dict(retriever.category_weights)
    for cat in CATEGORIES:
        members = [n.id for n in retriever.notes if cat in n.categories and n.id in kept]
        utils = [credits[i].utility for i in members if i in credits]
        uncredited = len(members) > len(utils)
        if not members or (not uncredited and all(u <= 0 for u in utils)):
            if any(cat in n.categories for n in retriever.notes):
                cat_w[cat] = 0.0
        elif utils:
            cat_w[cat] = retriever.category_weight(cat) * (1.0 + float(np.mean(utils)))
    out = retriever.with_weights(cat_w, note_w)
    out.refinement = Refinement(
        suppressed=tuple(sorted(out.suppressed)),
        flagged=tuple(sorted(i for i, c in credits.items() if i in kept and c.utility == 0)),
        skipped_categories=tuple(sorted(out.skipped_categories)),
    )
    return out
