"""What the ladder runs on: oracle stories with gold traces, and benchmark items (PDDL-Mind §4).

An :class:`Example` is one story and one question. Oracle examples carry the world's gold
problem and actions (:mod:`cogrsi_lib.pddl.oracle_map`), so a wrong answer can be classified
as a parsing/state error or a reasoning error given a correct trace; their questions are
multiple choice over the containers (or the property's values), gold from the oracle.
Benchmark examples come from the registry (``cogrsi_lib.bench``) and are scored by each
benchmark's own rule.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from cogrsi_lib import bench
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.oracle.answer import answer
from cogrsi_lib.oracle.render import render, render_question
from cogrsi_lib.oracle.sampler import PROPERTIES, SamplerConfig, all_questions, sample_worlds
from cogrsi_lib.oracle.state import replay
from cogrsi_lib.oracle.world import Question, World, same_value
from cogrsi_lib.pddl.oracle_map import GoldPDDL, gold_pddl
from cogrsi_lib.pipeline import find_repo_root

ORDER_NAMES = {0: "reality", 1: "first-order", 2: "second-order", 3: "third-order"}


@dataclass(frozen=True)
class Example:
    """One story and one question, with what scoring and failure analysis need."""

    id: str
    source: str  # "oracle" or a benchmark name
    story_id: str
    story: str
    question: str
    options: tuple[tuple[str, str], ...]
    gold: str  # an option label (or the free-text answer)
    category: str
    false_belief: bool | None = None
    gold_pddl: GoldPDDL | None = None
    oracle_question: Question | None = None
    item: Item | None = None


def _labels(n: int) -> list[str]:
    return [chr(ord("A") + i) for i in range(n)]


def _choices(world: World, q: Question) -> list[str]:
    if q.kind == "location":
        return list(world.containers)
    values = [str(v) for p, v in world.properties if p == q.property]
    for v in PROPERTIES.get(q.property or "", (True, ()))[1]:
        if v not in values:
            values.append(v)
    for e in world.events:
        if e.type == "change" and e.property == q.property and str(e.value) not in values:
            values.append(str(e.value))
    return values


def oracle_examples(
    n_stories: int,
    seed: int,
    questions_per_story: int = 2,
    max_depth: int = 2,
    cfg: SamplerConfig | None = None,
) -> list[Example]:
    """``questions_per_story`` questions of each of ``n_stories`` sampled worlds.

    Questions are drawn per story from reality and every chain up to ``max_depth``, with
    at least one first-order question when there is one; the same seed gives the same list.
    """
    cfg = cfg or SamplerConfig(p_hidden_observer=0.0, p_missed=0.0)  # gold_pddl's overlap
    rng = random.Random(seed + 7919)
    out: list[Example] = []
    for s, world in enumerate(sample_worlds(n_stories, seed, cfg)):
        state = replay(world, max_depth=max_depth)
        qs = all_questions(world, max_depth)
        first = [q for q in qs if q.depth == 1]
        picked = [rng.choice(first)] if first and questions_per_story > 0 else []
        rest = [q for q in qs if q not in picked]
        picked += rng.sample(rest, min(len(rest), questions_per_story - len(picked)))
        story = render(world).text
        gold = gold_pddl(world)
        for k, q in enumerate(picked):
            a = answer(state, q)
            choices = _choices(world, q)
            labels = _labels(len(choices))
            right = [lab for lab, c in zip(labels, choices, strict=True)
                     if same_value(c, a.value) or c == str(a.value)]
            out.append(Example(
                id=f"oracle-{seed}-{s}-{k}",
                source="oracle",
                story_id=f"oracle-{seed}-{s}",
                story=story,
                question=render_question(world, q),
                options=tuple(zip(labels, choices, strict=True)),
                gold=right[0],
                category=f"{q.kind}/{ORDER_NAMES.get(q.depth, f'order-{q.depth}')}",
                false_belief=a.false_belief,
                gold_pddl=gold,
                oracle_question=q,
            ))
    return out


def item_example(item: Item) -> Example:
    return Example(
        id=f"{item.benchmark}:{item.id}",
        source=item.benchmark,
        story_id=item.story_id,
        story=item.context,
        question=item.question,
        options=tuple(item.options),
        gold=item.gold,
        category=item.question_type,
        item=item,
    )


@dataclass(frozen=True)
class BenchmarkSample:
    """The examples drawn from one benchmark, or why there are none."""

    name: str
    available: bool
    examples: tuple[Example, ...]
    note: str


def _relative(text: str) -> str:
    """``text`` with the repository root left out of its paths (reports are machine-free)."""
    root = find_repo_root()
    return text.replace(f"{root}/", "") if root is not None else text


#: the question types PDDL-Mind evaluates, per benchmark (PDDL-Mind §4: on FANToM its
#: Accessibility and Answerability questions); a benchmark not listed keeps every type
PDDL_QUESTION_TYPES: dict[str, tuple[str, ...]] = {
    "fantom": ("tom:answerability", "tom:info_accessibility"),
}
#: benchmarks sampled by whole unit (``Item.group_id``), so that a unit-level metric such as
#: FANToM's All can be computed on the sample
WHOLE_UNITS = frozenset({"fantom"})


def stratified(items: Sequence[Item], n_per_category: int, seed: int, whole_units: bool = False
               ) -> list[Item]:
    """Up to ``n_per_category`` items of each question type (PDDL-Mind §4: 50 per
    sub-category), drawn at random with ``seed``, in file order. With ``whole_units`` the draw
    is of units (``group_id``): up to ``n_per_category`` units holding each type, each with all
    its items."""
    rng = random.Random(seed)
    by_type: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_type.setdefault(it.question_type, []).append(i)
    keep: set[int] = set()
    if whole_units:
        members: dict[str, list[int]] = {}
        for i, it in enumerate(items):
            members.setdefault(str(it.group_id or it.story_id), []).append(i)
        chosen: set[str] = set()
        for qtype in sorted(by_type):
            units = sorted({str(items[i].group_id or items[i].story_id) for i in by_type[qtype]})
            have = [u for u in units if u in chosen]
            rest = [u for u in units if u not in chosen]
            chosen |= set(rng.sample(rest, max(0, min(len(rest), n_per_category - len(have)))))
        keep = {i for u in chosen for i in members[u]}
    else:
        for qtype in sorted(by_type):
            idx = by_type[qtype]
            keep |= set(rng.sample(idx, min(len(idx), n_per_category)))
    return [items[i] for i in sorted(keep)]


def benchmark_examples(
    names: Sequence[str],
    n_per_category: int,
    roots: dict[str, str] | None = None,
    question_types: Sequence[str] | None = None,
    seed: int = 0,
) -> list[BenchmarkSample]:
    """A stratified sample (:func:`stratified`) of each benchmark whose files are present
    (``roots`` overrides a benchmark's folder), restricted to ``question_types`` (prefixes;
    default :data:`PDDL_QUESTION_TYPES`)."""
    out: list[BenchmarkSample] = []
    for name in names:
        root = (roots or {}).get(name)
        b = bench.get(name)
        try:
            items = bench.load(name, root)
        except FileNotFoundError as exc:
            out.append(BenchmarkSample(name, False, (), _relative(str(exc))))
            continue
        types = question_types if question_types is not None else PDDL_QUESTION_TYPES.get(name)
        if types:
            items = [it for it in items if any(it.question_type.startswith(t) for t in types)]
        chosen = stratified(items, n_per_category, seed, name in WHOLE_UNITS)
        kind = f"{b.sample} sample" if root is None else f"files under {root}"
        per = "units" if name in WHOLE_UNITS else "items"
        note = (f"{len(chosen)} of {len(items)} items ({kind}; up to {n_per_category} {per} "
                f"per question type" + (f"; types {', '.join(types)}" if types else "") + ")")
        out.append(BenchmarkSample(name, True, tuple(item_example(it) for it in chosen), note))
    return out
