"""Seeded generation of counterfactual pairs and of the gate and evaluation splits.

CogRSI §3 and App. C "Counterfactual pairs": each pair is two oracle worlds that differ
in one access fact of a target character, one first-order location question about that
character, and gold answers the oracle computes for each world.  Narratives are ToMi
numbered sentences with two characters; conversations are group chats of three in
which the speaker claims the move.  Every pair is checked as it is made (the declared
kind against the oracle's golds, one differing access fact, shared reality), and a
failed check raises :class:`PairGenerationError` instead of emitting the pair.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from cogrsi_lib.oracle import Answer, Question, World, answer_all
from cogrsi_lib.oracle.render import Templates, render, render_question
from cogrsi_lib.pairs.lexicon import Lexicon, lexicon
from cogrsi_lib.pairs.variants import (
    VARIANTS,
    AccessFacts,
    Condition,
    Variant,
    access_facts,
    script_events,
)

CODA_P = 0.5  # chance that the mover leaves at the end of both versions (a neutral event)
MAX_DRAWS = 10_000


class PairGenerationError(RuntimeError):
    """A generated pair broke one of its checks: a generator bug, never a valid pair."""


@dataclass(frozen=True)
class Cast:
    """The surface of one pair, shared by its two versions."""

    agents: tuple[str, ...]
    target: str
    mover: str
    teller: str
    place: str
    object: str
    containers: tuple[str, ...]
    old: str
    new: str
    other: str
    coda: bool

    @property
    def roles(self) -> dict[str, str]:
        return {"T": self.target, "M": self.mover, "R": self.teller}

    @property
    def places(self) -> dict[str, str]:
        return {"old": self.old, "new": self.new, "other": self.other}


@dataclass(frozen=True)
class Version:
    """One side of a pair: its condition, world, question, oracle gold and access facts."""

    side: str
    condition: Condition
    world: World
    question: Question
    gold: Answer
    facts: AccessFacts
    story: str
    question_text: str


@dataclass(frozen=True)
class Pair:
    """Two versions that differ in one access fact of ``target`` (CogRSI App. C)."""

    pair_id: str
    split: str
    form: str
    variant: Variant
    cast: Cast
    a: Version
    b: Version
    varied: str

    @property
    def kind(self) -> str:
        return self.variant.kind

    @property
    def versions(self) -> tuple[Version, Version]:
        return (self.a, self.b)


def allocate(n: int, k: int) -> list[int]:
    """Split ``n`` pairs over ``k`` variants as evenly as possible, earlier variants first.

    160 over 6 gives 27, 27, 27, 27, 26, 26.
    """
    if n < 0 or k < 1:
        raise ValueError("need n >= 0 and k >= 1")
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def sample_cast(rng: random.Random, lex: Lexicon, form: str) -> Cast:
    """Draw names, place, object and containers for one pair of ``form``."""
    if form == "narrative":
        target, mover = rng.sample(lex.names, 2)
        teller = mover
        agents = [target, mover]
        rng.shuffle(agents)
        place = rng.choice(lex.rooms)
    elif form == "dialogue":
        target, mover, bystander = rng.sample(lex.names, 3)
        teller = bystander
        rest = [target, bystander]
        rng.shuffle(rest)
        agents = [mover, *rest]  # the speaker opens the chat
        place = rng.choice(lex.chats)
    else:
        raise ValueError(f"unknown form {form!r}")
    obj = rng.choice(lex.objects)
    old, new, other = rng.sample(lex.containers, 3)
    containers = [old, new, other]
    rng.shuffle(containers)
    return Cast(tuple(agents), target, mover, teller, place, obj, tuple(containers),
                old, new, other, rng.random() < CODA_P)


def make_world(cast: Cast, condition: Condition) -> World:
    """The oracle world of one condition: everyone present, the object in ``old``.

    The world carries its question, so its JSON is a complete ``cogrsi oracle answer`` input.
    """
    events = script_events(condition.script, cast.roles, cast.places)
    if cast.coda:
        events += script_events((("leave", "M"),), cast.roles, cast.places)
    return World(
        agents=cast.agents,
        containers=cast.containers,
        object=cast.object,
        location=cast.old,
        present=frozenset(cast.agents),
        events=events,
        room=cast.place,
        questions=(target_question(cast),),
    )


def target_question(cast: Cast) -> Question:
    """Where does the target think the object is? (first-order location belief)."""
    return Question("location", (cast.target,))


def make_version(side: str, condition: Condition, cast: Cast, templates: Templates) -> Version:
    """One version: the world, the target's location question and the oracle's gold."""
    world = make_world(cast, condition)
    question = target_question(cast)
    (gold,) = answer_all(world, (question,))
    return Version(
        side=side,
        condition=condition,
        world=world,
        question=question,
        gold=gold,
        facts=access_facts(world, cast.target),
        story=render(world, templates).text,
        question_text=render_question(world, question, templates),
    )


def make_pair(variant: Variant, cast: Cast, split: str, pair_id: str) -> Pair:
    """Build and check one pair; raises :class:`PairGenerationError` if a check fails."""
    lex = lexicon(split)
    templates = lex.narrative if variant.form == "narrative" else lex.chat
    a = make_version("a", variant.a, cast, templates)
    b = make_version("b", variant.b, cast, templates)
    varied = a.facts.differing(b.facts)
    pair = Pair(pair_id, split, variant.form, variant, cast, a, b, varied[0] if varied else "")
    check_pair(pair)
    return pair


def check_pair(pair: Pair) -> None:
    """The invariants of a pair (CogRSI App. C); raises :class:`PairGenerationError`."""
    a, b = pair.versions
    where = f"{pair.pair_id} ({pair.form} {pair.variant.name})"
    varied = a.facts.differing(b.facts)
    problems = []
    if pair.kind not in ("flip", "same"):
        problems.append(f"unknown kind {pair.kind!r}")
    flipped = a.gold.value != b.gold.value
    if flipped != (pair.kind == "flip"):
        problems.append(f"declared {pair.kind} but the oracle gives {a.gold.value!r} "
                        f"and {b.gold.value!r}")
    if len(varied) != 1:
        problems.append(f"versions must differ in exactly one access fact, not {list(varied)}")
    if a.gold.reality != b.gold.reality:
        problems.append("the versions disagree on where the object really is")
    if a.question != b.question:
        problems.append("the versions ask different questions")
    for v in (a, b):
        if v.gold.value not in v.world.containers:
            problems.append(f"gold {v.gold.value!r} of side {v.side} is not an option")
    if (a.world.agents, a.world.containers, a.world.object, a.world.location, a.world.room) != (
        b.world.agents, b.world.containers, b.world.object, b.world.location, b.world.room
    ):
        problems.append("the versions differ in their cast")
    if a.story == b.story:
        problems.append("the versions tell the same story")
    if problems:
        raise PairGenerationError(f"{where}: " + "; ".join(problems))


def _rng(seed: int, *path: str) -> random.Random:
    return random.Random("/".join(("cogrsi-pairs", str(seed), *path)))


def generate_form(split: str, seed: int, form: str, n: int) -> list[Pair]:
    """``n`` pairs of ``form`` for ``split``, spread evenly over the form's variants.

    Each variant draws from its own seeded stream, so a smaller split holds the first
    pairs of a larger one; the pairs are then put in a seeded order and numbered.
    """
    lex = lexicon(split)
    variants = VARIANTS[form]
    drafts: list[tuple[Variant, Cast]] = []
    for v, count in zip(variants, allocate(n, len(variants)), strict=True):
        rng = _rng(seed, form, v.name)
        seen: set[Cast] = set()
        draws = 0
        while len(seen) < count:
            if draws == MAX_DRAWS:
                raise PairGenerationError(f"could not draw {count} distinct {v.name} pairs")
            draws += 1
            cast = sample_cast(rng, lex, form)
            if cast not in seen:
                seen.add(cast)
                drafts.append((v, cast))
    _rng(seed, form, "order").shuffle(drafts)
    return [make_pair(v, cast, split, f"{split}-{form[0]}{i:03d}")
            for i, (v, cast) in enumerate(drafts)]


def generate_split(split: str, seed: int, n_narrative: int, n_dialogue: int) -> list[Pair]:
    """The pairs of one split: narrative pairs first, then dialogue pairs."""
    return (generate_form(split, seed, "narrative", n_narrative)
            + generate_form(split, seed, "dialogue", n_dialogue))
