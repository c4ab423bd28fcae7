"""A rule-executing reader: library entries run as code against the oracle world (CogRSI §4.2-4.3).

The loops fill a reader's principle slot with a rule library "(i) When condition: rule"
(§4.2). :class:`SymbolicReader` reads that slot literally, with no language model: every entry
is looked up in a translation table (rule text -> code defining ``applies(world, q)`` and
``predict(world, q)`` against the audit's world API, ``cogrsi_lib/audit/API.md``) and an item
is answered by the first entry, in library order, whose ``applies`` holds and whose
``predict`` gives an answer; otherwise by a stated default (``reality`` by default: the
object's true current location or property value). An entry with no translation is recorded
in :attr:`SymbolicReader.unknown` and ignored, never guessed.

The translations here are trusted, hand-written code, so they run in this process; they are
still checked by the sandbox's source policy and run with its restricted builtins on the same
read-only world and question views (:mod:`cogrsi_lib.audit.api`) that the audit's sandbox
builds, so exactly the same code is what the audit (§4.3) runs in its child processes.

:data:`BANK_RULES` gives each rule of the scripted builder's bank
(:data:`cogrsi_lib.loops.scripted.BANK`) two literal translations, ``A`` and ``B``, as two
translator models would write them (:mod:`cogrsi_lib.audit.handwritten` supplies those that
exist); :func:`bank_translators` serves them to the audit as a scripted translator pair.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cogrsi_lib.audit.api import QuestionView, WorldView, answer_string
from cogrsi_lib.audit.handwritten import (
    IN_ROOM,
    MISSED_MOVE,
    NOTHING_REACHED,
    SANDBOX_PROBE,
    HandwrittenRule,
    scripted_translator,
)
from cogrsi_lib.audit.policy import compile_rule, restricted_globals
from cogrsi_lib.audit.snapshot import world_snapshot
from cogrsi_lib.audit.translate import Translator
from cogrsi_lib.loops.scripted import BANK
from cogrsi_lib.oracle.world import World
from cogrsi_lib.reader.items import ReaderItem, answer_key
from cogrsi_lib.reader.principles import parse_rule_library, principle_id
from cogrsi_lib.reader.records import ItemRecord, new_record

#: What the reader answers when no entry applies (see :class:`SymbolicReader`).
DEFAULTS = ("reality", "initial", "none")
READINGS = ("A", "B")

# --------------------------------------------------------------------------- translations
_TOLD_A = '''
def told(world, a):
    return [e for e in world.events if e.type == "whisper" and e.listener == a]


def applies(world, q):
    if q.kind != "location" or q.depth != 1:
        return False
    a = q.chain[0]
    heard = told(world, a)
    if not heard:
        return False
    for e in world.events[heard[-1].index + 1:]:
        if e.type == "move" and a in e.perceivers:
            return False
        if e.type == "peek" and e.actor == a:
            return False
    return True


def predict(world, q):
    return told(world, q.chain[0])[-1].location
'''
_TOLD_B = '''
def applies(world, q):
    if q.kind != "location" or len(q.chain) != 1:
        return False
    a = q.chain[0]
    last = None
    for e in world.events:
        if e.type == "whisper" and e.listener == a:
            last = e
    if last is None:
        return False
    return not any(e.type == "move" and a in e.perceivers
                   for e in world.events if e.index > last.index)


def predict(world, q):
    said = [e.location for e in world.events
            if e.type == "whisper" and e.listener == q.chain[0]]
    return said[-1]
'''
_BOTH_A = '''
def applies(world, q):
    return q.kind == "location" and q.depth == 2


def predict(world, q):
    a, b = q.chain
    where = world.initial_location
    for e in world.events:
        if e.type == "move" and a in e.perceivers and b in e.perceivers:
            where = e.to
    return where
'''
_BOTH_B = '''
def applies(world, q):
    return len(q.chain) == 2


def predict(world, q):
    a, b = q.chain
    if q.kind == "location":
        value = world.initial_location
    else:
        value = world.initial_properties[q.property]
    for e in world.events:
        if a not in e.perceivers or b not in e.perceivers:
            continue
        if q.kind == "location" and e.type == "move":
            value = e.to
        elif q.kind == "property" and e.type == "change" and e.property == q.property:
            value = e.value
    return value
'''
_CHANGE_A = '''
def changes(world, q):
    return [e for e in world.events if e.type == "change" and e.property == q.property]


def applies(world, q):
    return q.kind == "property" and q.depth == 1 and bool(changes(world, q))


def predict(world, q):
    last = changes(world, q)[-1]
    a = q.chain[0]
    if a in world.present_at(last.index) and a not in world.asleep_at(last.index):
        return last.value
    return world.value_at(q.property, last.index)
'''
_CHANGE_B = '''
def applies(world, q):
    if q.kind != "property" or len(q.chain) != 1:
        return False
    return any(e.type == "change" and e.property == q.property for e in world.events)


def predict(world, q):
    a = q.chain[0]
    value = world.initial_properties[q.property]
    for e in world.events:
        if e.type == "change" and e.property == q.property:
            if a in world.present_at(e.index) and a not in world.asleep_at(e.index):
                value = e.value
    return value
'''
_LONG_A = '''
def applies(world, q):
    return len(world.events) >= 8


def predict(world, q):
    return None
'''
_LONG_B = '''
def applies(world, q):
    return q.depth >= 1 and len(world.events) > 6


def predict(world, q):
    return None
'''
_PEEK_B = '''
def mine(world, a):
    return [e for e in world.events if e.type == "peek" and e.actor == a]


def applies(world, q):
    return q.kind == "location" and len(q.chain) == 1 and bool(mine(world, q.chain[0]))


def predict(world, q):
    return mine(world, q.chain[0])[-1].container
'''
_MAJORITY_A = '''
def last_seen(world, a):
    where = world.initial_location
    for e in world.events:
        if e.type == "move" and a in e.perceivers:
            where = e.to
    return where


def applies(world, q):
    return q.kind == "location" and q.depth >= 1 and len(world.present_at(-1)) >= 2


def predict(world, q):
    votes = {}
    for a in sorted(world.present_at(-1)):
        w = last_seen(world, a)
        votes[w] = votes.get(w, 0) + 1
    return max(sorted(votes), key=lambda w: votes[w])
'''
_MAJORITY_B = '''
from collections import Counter


def applies(world, q):
    return q.kind == "location" and len(q.chain) >= 1 and len(world.present_at(-1)) > 1


def predict(world, q):
    votes = Counter()
    for a in world.agents:
        where = world.initial_location
        for e in world.events:
            if e.type == "move" and a in e.perceivers:
                where = e.to
        votes[where] += 1
    best = max(votes.values())
    return sorted(w for w in votes if votes[w] == best)[0]
'''


def _bank_rule(i: int) -> str:
    return BANK[i].text()


def _check_reuse(rule: HandwrittenRule, i: int) -> HandwrittenRule:
    if rule.text != _bank_rule(i):
        raise AssertionError(f"bank rule {i} no longer matches {rule.rule_id}")
    return rule


#: Two literal translations of each bank rule, in bank order. ``expected`` is the verdict the
#: audit gives on the paper-sized sample (6,000 worlds, seed 7); the comparison reports the
#: verdicts it measures, not these.
BANK_RULES: tuple[HandwrittenRule, ...] = (
    _check_reuse(MISSED_MOVE, 0),
    HandwrittenRule("privately_told", _bank_rule(1), "invalid", _TOLD_A, _TOLD_B,
                    "A reads 'see otherwise' as a seen move or a peek, B as a seen move. "
                    "Invalid under semantics v2: nobody takes a known liar's word, and a claim "
                    "never beats the object in plain view."),
    HandwrittenRule("both_perceived", _bank_rule(2), "invalid", _BOTH_A, _BOTH_B,
                    "Counting only jointly seen events misses a whisper between the two."),
    _check_reuse(IN_ROOM, 3),
    HandwrittenRule("present_awake_change", _bank_rule(4), "invalid", _CHANGE_A, _CHANGE_B,
                    "Misses the late view of a visible property on entering or waking."),
    HandwrittenRule("long_story", _bank_rule(5), "vacuous", _LONG_A, _LONG_B,
                    "The rule gives no answer, so it never applies."),
    HandwrittenRule("peeked", _bank_rule(6), "invalid", SANDBOX_PROBE.code_a, _PEEK_B,
                    "A: the true location at the end; B: what the peek showed. (The audit's "
                    "sandbox probe B is a policy test, not a reading, so it is not used.)"),
    HandwrittenRule("majority", _bank_rule(7), "invalid", _MAJORITY_A, _MAJORITY_B,
                    "A counts characters present at the end, B every character."),
    _check_reuse(NOTHING_REACHED, 8),
)
BANK_BY_TEXT: dict[str, HandwrittenRule] = {r.text: r for r in BANK_RULES}


def bank_translators(rules: Sequence[HandwrittenRule] = BANK_RULES) -> list[Translator]:
    """The audit's two translators as scripted backends returning the fixed translations."""
    return [Translator("A", scripted_translator("A", rules), prompt="literal", seed=0,
                       plays="hand-written reading A"),
            Translator("B", scripted_translator("B", rules), prompt="plain", seed=1,
                       plays="hand-written reading B")]


# --------------------------------------------------------------------------- execution
Fn = Callable[[WorldView, QuestionView], Any]


@dataclass(frozen=True)
class CompiledRule:
    """One translation compiled in-process (sandbox policy, restricted builtins, no OS limits)."""

    text: str
    applies: Fn
    predict: Fn


def compile_translation(text: str, code: str) -> CompiledRule:
    """Check ``code`` with the sandbox's policy and load its two functions."""
    env = restricted_globals()
    exec(compile_rule(code), env)  # noqa: S102 - trusted hand-written code, checked by policy
    applies, predict = env.get("applies"), env.get("predict")
    if not (callable(applies) and callable(predict)):
        raise ValueError(f"translation of {text!r} lacks applies or predict")
    return CompiledRule(text, applies, predict)


@lru_cache(maxsize=4096)
def _world_view(world_json: str) -> WorldView:
    entry, _, _ = world_snapshot(World.from_json(world_json), 1)
    return WorldView(entry)


def item_views(item: ReaderItem) -> tuple[WorldView, QuestionView]:
    """The audit's world and question views of an item that carries its oracle world
    (``meta["world_json"]`` and ``meta["question_json"]``, as oracle and pair items do)."""
    meta = item.meta
    if "world_json" not in meta or "question_json" not in meta:
        raise ValueError(f"item {item.item_id} carries no oracle world (world_json)")
    world = _world_view(str(meta["world_json"]))
    q = json.loads(str(meta["question_json"]))
    raw = {"kind": q["kind"], "property": q.get("property"), "chain": q.get("chain", []),
           "text": item.question}
    return world, QuestionView(raw, world)


def default_answer(world: WorldView, q: QuestionView, default: str) -> str | None:
    """The base reader's answer: ``reality`` (true value at the end), ``initial`` (the
    opening value, i.e. nothing that happened was seen) or ``none`` (no answer)."""
    if default == "none":
        return None
    step = len(world.events) if default == "reality" else 0
    if q.kind == "location":
        return world.location_at(step)
    return answer_string(world.value_at(q.property, step))


def library_entries(principle: str) -> list[str]:
    """The entry texts of a library principle; a text that is not a numbered library is one
    entry (and has no translation)."""
    if not principle.strip():
        return []
    try:
        return [r.text() for r in parse_rule_library(principle)]
    except ValueError:
        return [" ".join(principle.split())]


class _Answering:
    """The reader with one principle in its slot (a :class:`~cogrsi_lib.reader.system.System`)."""

    def __init__(self, owner: SymbolicReader, principle: str) -> None:
        self.owner = owner
        self.principle = principle
        self.name = "symbolic"
        self.entries = library_entries(principle)
        self.rules: list[CompiledRule | None] = [owner.compiled(t) for t in self.entries]

    def answer_one(self, item: ReaderItem) -> ItemRecord:
        rec = new_record(self.name, item, principle_id(self.principle))
        world, q = item_views(item)
        value, used = None, None
        for k, rule in enumerate(self.rules):
            if rule is None:
                continue
            try:
                if not rule.applies(world, q):
                    continue
                value = answer_string(rule.predict(world, q))
            except Exception:  # noqa: BLE001 - a failing entry counts as not applying
                self.owner.errors[rule.text] = self.owner.errors.get(rule.text, 0) + 1
                continue
            if value is not None:
                used = k + 1
                break
        if used is None:
            value = default_answer(world, q, self.owner.default)
        rec.extra = {"entry": used, "default": used is None}
        if value is None:
            return rec
        try:
            key = answer_key(value, item.options, item.labels)
        except ValueError:
            rec.answer_text = value  # an answer that names no option is wrong
            return rec
        rec.answer, rec.answer_text, rec.status = key, item.option_text(key), "ok"
        return rec

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        return [self.answer_one(it) for it in items]


class SymbolicReader:
    """A :class:`~cogrsi_lib.loops.slot.PrincipleSystem` that executes library entries.

    ``table`` maps a rule text to its translations (default :data:`BANK_RULES`); ``reading``
    picks translation ``A`` or ``B``; ``default`` is the answer where no entry applies:
    ``reality`` (the base reader answers with the true current location or value, so it is
    right on every true belief and wrong on every false one), ``initial`` (the opening value)
    or ``none`` (no answer, counted wrong). ``unknown`` records, with counts, every entry text
    met without a translation; ``errors`` counts entries whose code raised on an item.
    """

    def __init__(self, table: Iterable[HandwrittenRule] | Mapping[str, str] = BANK_RULES, *,
                 reading: str = "A", default: str = "reality") -> None:
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, not {reading!r}")
        if default not in DEFAULTS:
            raise ValueError(f"default must be one of {DEFAULTS}, not {default!r}")
        if isinstance(table, Mapping):
            self.codes: dict[str, str] = dict(table)
        else:
            self.codes = {r.text: r.code(reading) for r in table}
        self.reading = reading
        self.default = default
        self.unknown: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self._compiled: dict[str, CompiledRule] = {}

    def compiled(self, text: str) -> CompiledRule | None:
        """The compiled translation of ``text``, or ``None`` (recorded as unknown)."""
        if text in self._compiled:
            return self._compiled[text]
        code = self.codes.get(text)
        if code is None:
            self.unknown[text] = self.unknown.get(text, 0) + 1
            return None
        self._compiled[text] = compile_translation(text, code)
        return self._compiled[text]

    def with_principle(self, principle: str | None) -> _Answering:
        return _Answering(self, principle or "")
