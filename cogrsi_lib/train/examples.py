"""Training examples from the oracle, in the reader's own prompts and reply formats (Zing's
staged training, SFT then RL, applied to the embedded model; issue "train the embedded model").

Every example is one request a stage really sends (built by the module that owns the prompt)
and the reply a constrained decoder of that request's declared format could produce, so the
model learns exactly the replies the pipeline parses:

- ``answer.plain`` / ``answer.annotated``: the direct answer (``answer.direct``) to a location
  question, R0 (reality) to R4 (nested beliefs), on the plain story or on the story marked
  with who witnessed each line (the oracle's perceivers);
- ``reader.perception``: who perceived each line;
- ``reader.arbitration``: the right one of two candidates, with a short reason;
- ``pairs``: both versions of counterfactual pairs of the ``train`` lexicon (narrative and
  dialogue), answered directly.

Stories are drawn with the ``train`` lexicon (``cogrsi_lib.pairs.lexicon.TRAIN``): names,
rooms, objects, containers and sentence templates that no evaluation split uses.
:func:`leaked_words` checks the rendered items against the other lexicons and the oracle's
default words.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Any

from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.oracle import sampler
from cogrsi_lib.oracle.answer import answer_all
from cogrsi_lib.oracle.render import Story, render, render_question
from cogrsi_lib.oracle.sampler import SamplerConfig, sample_worlds
from cogrsi_lib.oracle.world import Question, World
from cogrsi_lib.pairs.lexicon import EVAL, GATE, TRAIN, Lexicon, words_in
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.perception import Perception, perception_request
from cogrsi_lib.reader.views import annotated_view, plain_view
from cogrsi_lib.train.params import TrainParams

FAMILIES = ("answer.plain", "answer.open", "answer.traced", "answer.annotated",
            "reader.perception", "reader.arbitration", "pairs")
#: output cap of a direct answer (the reply is about eight tokens)
ANSWER_TOKENS = 32
#: output cap of a traced answer (the trace of a long story is about 80 tokens)
TRACE_TOKENS = 160
ARBITRATION_TOKENS = 96
#: share of false-belief questions at each depth from R1 up (R0 asks about reality): the
#: ``train`` stage's default
FALSE_BELIEF_SHARE: float = TrainParams.model_fields["false_belief_share"].default


@dataclass(frozen=True)
class OracleItem:
    """A location question about one sampled world, with the oracle's gold and perceivers."""

    item: ReaderItem
    depth: int
    false_belief: bool
    perceivers: tuple[tuple[str, ...], ...]
    trace: str | None = None  # :func:`trace`, when it reaches the gold


@dataclass(frozen=True)
class Example:
    """One training example: the request's messages, the target reply and what it is."""

    family: str
    item_id: str
    messages: tuple[Message, ...]
    completion: str
    gold: str | None = None
    depth: int | None = None
    labels: tuple[str, ...] = ()  # the option labels of a direct answer
    meta: Mapping[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """A conversational prompt-completion row (the form trl's trainers read)."""
        return {"prompt": [{"role": m.role, "content": m.content} for m in self.messages],
                "completion": [{"role": "assistant", "content": self.completion}],
                "family": self.family, "item_id": self.item_id, "gold": self.gold,
                "depth": self.depth}


def sampler_config(lex: Lexicon = TRAIN, **knobs: Any) -> SamplerConfig:
    """The oracle sampler drawing names, rooms, objects and containers from ``lex``."""
    return SamplerConfig(agent_names=lex.names, container_names=lex.containers,
                         object_names=lex.objects, room_names=lex.rooms, **knobs)


def mentioned_places(world: World, story: str) -> tuple[str, ...]:
    """The room and containers in the order the story first names them (ToMi's answer set
    is the story's locations in order of mention)."""
    places = (world.room, *world.containers)
    found = sorted((story.find(f" {p}"), p) for p in places if f" {p}" in story)
    return tuple(p for _, p in found)


def oracle_items(
    n_worlds: int,
    seed: int,
    *,
    per_world: int = 3,
    max_depth: int = 4,
    depth_weights: Sequence[float] = (1.0, 4.0, 3.0, 2.0, 1.0),
    p_mentioned_options: float = 0.5,
    false_belief_share: float = FALSE_BELIEF_SHARE,
    lex: Lexicon = TRAIN,
    config: SamplerConfig | None = None,
) -> list[OracleItem]:
    """Up to ``per_world`` location questions of each of ``n_worlds`` worlds (seed ``seed``).

    Each question is drawn by depth (``depth_weights`` over R0..R``max_depth``), then as a
    false or a true belief by quota: at every depth from R1 up, a share
    ``false_belief_share`` of the questions drawn so far are false beliefs (a world without
    the kind the quota asks for gives no question at that draw). False beliefs are rarer
    per world, so without the quota "name where the object is now" would answer most
    questions; with it, neither that nor "answer the first place" is a shortcut. Each story
    is told in one of ``lex``'s phrasings (``narrative`` or one of its ``variants``), drawn
    per world. Options are the world's containers, or (with chance
    ``p_mentioned_options``) every place the story names (the room too, as in ToMi's answer
    sets), always in random order so that no label position predicts the answer.
    """
    if not 0.0 <= false_belief_share <= 1.0:
        raise ValueError("false_belief_share must lie in [0, 1]")
    cfg = config or sampler_config(lex, min_agents=2, max_agents=4, max_events=10)
    rng = random.Random(f"train-items-{seed}")
    drawn: Counter[tuple[int, bool]] = Counter()
    weights = list(depth_weights)[: max_depth + 1]
    out: list[OracleItem] = []
    for w_index, world in enumerate(sample_worlds(n_worlds, seed, cfg)):
        # each story in one of the lexicon's phrasings, its questions in the same one
        templates = rng.choice((lex.narrative, *lex.variants))
        story = render(world, templates)
        questions = [q for q in sampler.all_questions(world, max_depth) if q.kind == "location"]
        answers = answer_all(world, tuple(questions))
        by_cell: dict[tuple[int, bool], list[tuple[Question, Any]]] = {}
        for q, a in zip(questions, answers, strict=True):
            if a.known:
                by_cell.setdefault((q.depth, a.false_belief), []).append((q, a))
        for k in range(per_world):
            depths = sorted({d for d, _ in by_cell})
            if not depths:
                break
            d = rng.choices(depths, [weights[x] if x < len(weights) else 0 for x in depths])[0]
            fb = d > 0 and drawn[(d, True)] < false_belief_share * (
                drawn[(d, True)] + drawn[(d, False)] + 1)
            if (d, fb) not in by_cell:
                continue
            drawn[(d, fb)] += 1
            cell = by_cell[(d, fb)]
            q, a = cell.pop(rng.randrange(len(cell)))
            if not cell:
                del by_cell[(d, fb)]
            places = (mentioned_places(world, story.text)
                      if rng.random() < p_mentioned_options else tuple(world.containers))
            if a.value not in places:
                places = tuple(world.containers)
            # in random order: no option position is a cue to the answer
            options = tuple(rng.sample(places, len(places)))
            item = ReaderItem(
                item_id=f"train-{seed}-{w_index}-{k}", context=story.text,
                question=render_question(world, q, templates), options=options,
                gold=str(a.value), story_id=f"train-{seed}-{w_index}",
                meta={"chain": list(q.chain), "object": world.object, "depth": q.depth},
            )
            # an agent the story never names (absent throughout) cannot be listed
            named = [a for a in world.agents if a in story.text]
            perceivers = tuple(tuple(a for a in named if a in line.perceivers)
                               for line in story.lines)
            out.append(OracleItem(item, q.depth, fb, perceivers,
                                  trace(world, story, q, str(a.value))))
    return out


def trace(world: World, story: Story, q: Question, gold: str) -> str | None:
    """A scratchpad for a reality or first-order location question, written from the story's
    lines and their perceivers: in order, every line that places the object (``7 trough``)
    and, for a belief, whether the agent perceived it (``seen``/``unseen``), the agent's
    entrances and exits (``8 Anne out``), what the agent is told or finds by looking. The
    answer is the last place seen. None for deeper questions, and when that answer is not the
    oracle's ``gold`` (e.g. a whisper from a known liar): the trace is a way to the answer
    the oracle gives, never a different one.
    """
    if q.kind != "location" or q.depth > 1:
        return None
    agent = q.chain[0] if q.chain else None
    steps: list[str] = []
    belief = real = world.location

    def placed(n: int, place: str, who: frozenset[str]) -> None:
        nonlocal belief
        if agent is None:
            steps.append(f"{n} {place}")
            belief = place
        elif agent in who:
            steps.append(f"{n} {place} seen")
            belief = place
        else:
            steps.append(f"{n} {place} unseen")

    for n, line in enumerate(story.lines, start=1):
        if line.event is None:
            if world.object in line.text and f" {world.location}" in line.text:
                placed(n, world.location, line.perceivers)
            continue
        e = world.events[line.event]
        if e.type == "move" and e.to is not None:
            real = e.to
            placed(n, e.to, line.perceivers)
        elif agent is None or e.actor != agent and e.listener != agent:
            continue
        elif e.type in ("enter", "leave", "sleep", "wake"):
            word = {"enter": "in", "leave": "out", "sleep": "asleep", "wake": "awake"}[e.type]
            steps.append(f"{n} {agent} {word}")
        elif e.type == "whisper" and e.listener == agent and e.location is not None:
            steps.append(f"{n} told {e.location}")
            belief = e.location
        elif e.type == "peek":
            steps.append(f"{n} looks: {real}")
            belief = real
    return "; ".join(steps) if belief == gold else None


def _compact(value: Mapping[str, Any]) -> str:
    """JSON as the constrained decoders write it: no optional whitespace."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _form(traced: bool) -> tuple[str, int]:
    """The reader's instruction and the reply cap of a direct answer (the answer alone) or a
    traced one (reasoning first, under the grounded instruction)."""
    return (prompts.THINK_GROUNDED, TRACE_TOKENS) if traced else (prompts.THINK_NONE,
                                                                  ANSWER_TOKENS)


def asked(item: ReaderItem, view: str, traced: bool = False) -> Request:
    """The greedy request answering ``item`` on ``view``, direct or traced (:func:`_form`):
    the form of the training examples and of the evaluation's questions alike."""
    think, cap = _form(traced)
    return prompts.answer_request(item, view, SamplingParams(max_tokens=cap, temperature=0.0),
                                  think=think)


def answer_example(it: OracleItem | ReaderItem, view: str = "plain", family: str | None = None,
                   meta: Mapping[str, Any] | None = None) -> Example:
    """The direct answer to ``it`` on the plain or the perception-annotated story (an oracle
    item's example says in ``meta["false_belief"]`` whether its gold differs from reality)."""
    item = it.item if isinstance(it, OracleItem) else it
    if isinstance(it, OracleItem):
        meta = {"false_belief": it.false_belief, **(meta or {})}
    if view == "annotated":
        if not isinstance(it, OracleItem):
            raise ValueError("an annotated view needs the oracle's perceivers")
        text = annotated_view(item, Perception(it.perceivers))
    else:
        text = plain_view(item)
    request = asked(item, text)
    label = item.gold_key()
    target = _compact({"answer": label})
    _check(request.constraint, target)
    depth = it.depth if isinstance(it, OracleItem) else item.meta.get("depth")
    return Example(family or f"answer.{view}", item.item_id, request.messages, target,
                   label, depth, tuple(item.labels or ()), dict(meta or {}))


def traced_example(it: OracleItem) -> Example:
    """``it`` asked open with the grounded reader's instruction to think first: the reply's
    reasoning is the item's :func:`trace`, then the answer names the place."""
    if it.trace is None:
        raise ValueError(f"{it.item.item_id}: no trace reaches the gold")
    item = open_item(it.item)
    request = asked(item, plain_view(item), traced=True)
    target = _compact({"reasoning": it.trace, "answer": item.gold})
    _check(request.constraint, target)
    return Example("answer.traced", item.item_id, request.messages, target, item.gold,
                   it.depth, (), {"false_belief": it.false_belief})


def traceable(it: OracleItem) -> bool:
    """Has ``it`` a trace, short enough for a traced reply's cap?"""
    if it.trace is None:
        return False
    fmt = prompts.answer_format(open_item(it.item), *_form(traced=True))
    return fmt.ok(_compact({"reasoning": it.trace, "answer": it.item.option_text(
        it.item.gold_key())}))


def perception_example(it: OracleItem) -> Example:
    """Who perceived each line, as the perception prompt asks for it."""
    request = perception_request(it.item)
    target = _compact({str(i): list(w) for i, w in enumerate(it.perceivers, start=1)})
    _check(request.constraint, target)
    return Example("reader.perception", it.item.item_id, request.messages, target,
                   None, it.depth)


def arbitration_example(it: OracleItem, rng: random.Random) -> Example:
    """The right candidate of two (the gold and a wrong option, in random order)."""
    item = it.item
    gold = item.gold_key()
    assert gold is not None and item.labels is not None
    wrong = rng.choice([lab for lab in item.labels if lab != gold])
    pair = (gold, wrong) if rng.random() < 0.5 else (wrong, gold)
    request = prompts.arbitration_request(
        item, plain_view(item), pair, "", SamplingParams(max_tokens=ARBITRATION_TOKENS,
                                                         temperature=0.0))
    who = " and ".join(item.meta["chain"]) or "the story"
    reason = f"Tracking what {who} perceived, the {item.meta['object']} is in the " \
             f"{item.option_text(gold)}."
    target = _compact({"reason": reason, "choice": pair.index(gold) + 1})
    _check(request.constraint, target)
    return Example("reader.arbitration", item.item_id, request.messages, target,
                   str(pair.index(gold) + 1), it.depth)


def pair_examples(n_narrative: int, n_dialogue: int, seed: int) -> list[Example]:
    """Direct answers to both versions of counterfactual pairs of the ``train`` lexicon."""
    from cogrsi_lib.pairs.generate import generate_split
    from cogrsi_lib.pairs.records import to_frame
    from cogrsi_lib.reader.evaluate import pair_items

    items = pair_items(to_frame(generate_split("train", seed, n_narrative, n_dialogue)))
    return [answer_example(it.with_meta(depth=1), family="pairs",
                           meta={"variant": it.meta["variant"], "form": it.meta["form"]})
            for it in items]


def open_item(item: ReaderItem) -> ReaderItem:
    """``item`` asked without its options: the reply names the answer itself (the reader's
    free-text answer), so no option label has to be looked up."""
    if not item.options:
        raise ValueError(f"{item.item_id}: already an open question")
    gold = item.option_text(item.gold_key())
    return replace(item, options=None, labels=None, gold=gold)


def _check(fmt: Any, target: str) -> None:
    """A target must parse under its request's declared format."""
    if fmt is None or not fmt.ok(target):
        raise ValueError(f"training target {target!r} does not fit its reply format")


def shares(n: int, weights: Sequence[float]) -> list[int]:
    """``n`` split in proportion to ``weights`` by largest remainders (the parts sum to n)."""
    total = sum(weights)
    exact = [n * w / total for w in weights]
    parts = [int(x) for x in exact]
    for i in sorted(range(len(parts)), key=lambda i: parts[i] - exact[i])[: n - sum(parts)]:
        parts[i] += 1
    return parts


def build_examples(items: Sequence[OracleItem], mix: Mapping[str, float], seed: int,
                   n: int, pairs: Sequence[Example] = ()) -> list[Example]:
    """``n`` examples in the proportions of ``mix`` (families of :data:`FAMILIES`), each
    oracle item used by one family; pair examples come from ``pairs``. Seeded order."""
    unknown = set(mix) - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown example families {sorted(unknown)}; known: {FAMILIES}")
    total = sum(mix.values())
    if total <= 0:
        raise ValueError("the mix needs a positive weight")
    counts = dict(zip(mix, shares(n, list(mix.values())), strict=True))
    need = sum(c for f, c in counts.items() if f != "pairs")
    if need > len(items):
        raise ValueError(f"{need} oracle examples asked for, {len(items)} items drawn")
    if counts.get("pairs", 0) > len(pairs):
        raise ValueError(f"{counts['pairs']} pair examples asked for, {len(pairs)} built")
    rng = random.Random(f"train-mix-{seed}")
    pool = list(items)
    rng.shuffle(pool)
    out: list[Example] = []
    for fam in FAMILIES:
        k = counts.get(fam, 0)
        if fam == "pairs":
            out += list(pairs[:k])
            continue
        if fam == "answer.traced":  # only items whose trace reaches the gold
            take = list(islice((it for it in pool if traceable(it)), k))
            if len(take) < k:
                raise ValueError(f"{k} traced examples asked for, {len(take)} traceable")
            chosen = {id(it) for it in take}
            pool = [it for it in pool if id(it) not in chosen]
        else:
            take, pool = pool[:k], pool[k:]
        for it in take:
            if fam == "answer.plain":
                out.append(answer_example(it, "plain"))
            elif fam == "answer.open":
                out.append(answer_example(replace(it, item=open_item(it.item)),
                                          family="answer.open"))
            elif fam == "answer.traced":
                out.append(traced_example(it))
            elif fam == "answer.annotated":
                out.append(answer_example(it, "annotated"))
            elif fam == "reader.perception":
                out.append(perception_example(it))
            else:
                out.append(arbitration_example(it, rng))
    rng.shuffle(out)
    return out


#: words no training story may use: every other split's lexicon and the oracle's defaults
def forbidden_words() -> frozenset[str]:
    defaults = (sampler.AGENT_NAMES + sampler.CONTAINER_NAMES + sampler.OBJECT_NAMES
                + sampler.ROOM_NAMES)
    return GATE.words() | EVAL.words() | frozenset(w.lower() for w in defaults)


def leaked_words(items: Iterable[ReaderItem]) -> frozenset[str]:
    """Words of other splits (:func:`forbidden_words`) in the items' stories, questions and
    options; empty when the training data is disjoint from them."""
    found: set[str] = set()
    bad = forbidden_words()
    for it in items:
        text = " ".join([it.context, it.question, *(it.options or ())])
        found |= words_in(text) & bad
    return frozenset(found)

