"""Starling: an attribution-first state memory (zing-social-mind-report §5.4, §5.4.1-5.4.2).

The unit is an attributed :class:`Statement`: who holds it (a chain of agents: ``("Anne",)``
Anne believes, ``("Anne", "Bob")`` Anne believes Bob believes; ``()`` the world as
narrated), about what (object, attribute, value), from which source and which line. Updates
never overwrite: a new statement for the same (holder, object, attribute) gets the next
version and points to the one it revises. A chain with no statement is UNKNOWN; nothing is
inferred.

Nested chains are rebuilt from perception with the access oracle's rules (v2,
``cogrsi_lib/oracle/SEMANTICS.md``): a seen move or change writes every chain whose first
agent witnessed it and whose other agents everyone takes to have (co-presence: a line's
secret observers and unnoticed misses are read from its text); seeing the object (a move,
a peek, the object in an open container) shows its location and visible properties; an
agent who enters or wakes while the object is in view joins that common view; a private
tell S -> L writes every chain over {S, L} but ``(S,)``, unless the speaker is a known liar
or the object is in plain view.
``tell_rule="exit_order"`` replaces the tell rule by Hi-ToM's (He et al. 2023): a listener
trusts a speaker who left the room later than they did, and a teller's own belief is
unchanged. ``move_rule="hitom_generator"`` copies what Hi-ToM's released generator actually
writes, which is narrower than its stated assumptions: a move updates only chains ordered
[watchers in exit order, actor] (so the mover's belief about a watcher's belief stays
stale), chains never repeat an agent, and entering a room shows where its objects are.
:func:`agreement_with_oracle` and :func:`agreement_with_hitom` measure how often the
memory's answer equals gold (zing-social-mind-report §5.8.4).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from itertools import combinations, product
from typing import Any

import polars as pl

from cogrsi_lib.harness.extract import (
    Event,
    Extraction,
    Observation,
    extract,
    parse_line,
    parse_question,
    presence_witnesses,
)
from cogrsi_lib.oracle.render import NARRATIVE, Story, Templates, render
from cogrsi_lib.oracle.sampler import question_records
from cogrsi_lib.oracle.world import World

Chain = tuple[str, ...]
Value = str | int | float | bool
SOURCES = ("saw", "told", "initial", "reported")
TELL_RULES = ("oracle", "exit_order")
MOVE_RULES = ("witnessed", "hitom_generator")
#: ordinal trust in a statement by its source (not a calibrated probability)
CONFIDENCE = {"initial": 1.0, "saw": 1.0, "told": 0.8, "reported": 0.7}
_OPENING_KINDS = frozenset({"present", "asleep", "located", "open", "has_property",
                            "known_liar"})


@dataclass(frozen=True)
class Statement:
    """One attributed statement: ``holder`` holds that ``object``'s ``attribute`` is
    ``value`` (``polarity`` False: is not), since line ``time``, from ``source``."""

    id: int
    holder: Chain
    attitude: str  # "knows" (perceived and true when perceived) | "believes"
    object: str
    attribute: str
    value: Value
    polarity: bool
    time: int
    source: str
    evidence_line: int
    evidence_text: str
    confidence: float
    version: int
    supersedes: int | None
    layer: str  # "revisable" | "stable"

    def to_row(self) -> dict[str, Any]:
        return asdict(self) | {"holder": list(self.holder), "value": str(self.value)}

    def describe(self) -> str:
        """``"Anne believes Bob believes"`` (``"reality"`` for the empty holder)."""
        if not self.holder:
            return "reality"
        return " ".join(
            f"{a} {self.attitude if k == 0 else 'believes'}" for k, a in enumerate(self.holder)
        )


@lru_cache(maxsize=4096)
def chains_over(agents: frozenset[str], max_depth: int) -> tuple[Chain, ...]:
    """Every chain of 1..max_depth agents from ``agents`` with no agent twice in a row."""
    names = sorted(agents)
    out: list[Chain] = []
    for k in range(1, max_depth + 1):
        out += [
            c
            for c in product(names, repeat=k)
            if all(a != b for a, b in zip(c, c[1:], strict=False))
        ]
    return tuple(out)


@dataclass
class StateMemory:
    """Versioned attributed statements built observation by observation."""

    max_depth: int = 4
    tell_rule: str = "oracle"
    move_rule: str = "witnessed"
    #: exit-order public claims: also write (listener, believer) (Hi-ToM's generator code
    #: does; its released labels do not show it, see agreement_with_hitom)
    listeners_track_believers: bool = False
    statements: list[Statement] = field(default_factory=list)
    unparsed: list[Observation] = field(default_factory=list)
    open_containers: set[str] = field(default_factory=set)
    visibility: dict[str, bool] = field(default_factory=dict)
    exit_time: dict[str, int] = field(default_factory=dict)
    liars: set[str] = field(default_factory=set)
    _current: dict[tuple[Chain, str, str], int] = field(default_factory=dict, repr=False)
    _opening: bool = True
    _listing: list[str] = field(default_factory=list, repr=False)
    _scene: str | None = None
    _object_room: dict[str, str | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.max_depth < 1:
            raise ValueError("max_depth must be at least 1")
        if self.tell_rule not in TELL_RULES:
            raise ValueError(f"unknown tell_rule {self.tell_rule!r}; expected one of {TELL_RULES}")
        if self.move_rule not in MOVE_RULES:
            raise ValueError(f"unknown move_rule {self.move_rule!r}; expected one of {MOVE_RULES}")

    @classmethod
    def from_observations(cls, observations: Iterable[Observation], **kw: Any) -> StateMemory:
        mem = cls(**kw)
        for o in observations:
            mem.observe(o)
        return mem

    @classmethod
    def from_story(
        cls, lines: Sequence[str] | str, witnesses: Any = "presence", **kw: Any
    ) -> StateMemory:
        """Parse ``lines`` (see :func:`~cogrsi_lib.harness.extract.extract`) and observe them."""
        return cls.from_observations(extract(lines, witnesses).observations, **kw)

    # -- writing ------------------------------------------------------------------------
    def _write(
        self,
        holder: Chain,
        obj: str,
        attribute: str,
        value: Value,
        o: Observation,
        source: str,
    ) -> Statement:
        """Every observation writes to the revisable layer (§5.4.2: no direct stable writes)."""
        key = (holder, obj, attribute)
        prev = self.statements[self._current[key]] if key in self._current else None
        truth = self.query((), obj, attribute)
        perceived = source in ("saw", "initial")
        knows = not holder or (perceived and (truth is None or truth.value == value))
        st = Statement(
            id=len(self.statements),
            holder=holder,
            attitude="knows" if knows else "believes",
            object=obj,
            attribute=attribute,
            value=value,
            polarity=True,
            time=o.index,
            source=source,
            evidence_line=o.index,
            evidence_text=o.text,
            confidence=CONFIDENCE[source] if holder else 1.0,
            version=prev.version + 1 if prev else 1,
            supersedes=prev.id if prev else None,
            layer="revisable",
        )
        self.statements.append(st)
        self._current[key] = st.id
        return st

    def consolidate(self, min_support: int = 2) -> list[Statement]:
        """Promote to the stable layer every current revisable statement whose value the last
        ``min_support`` versions agree on (repeated support); each promotion is a new version
        that supersedes the revisable one. A later observation revises it as usual."""
        if min_support < 1:
            raise ValueError("min_support must be at least 1")
        promoted: list[Statement] = []
        for key, idx in list(self._current.items()):
            st = self.statements[idx]
            if st.layer == "stable":
                continue
            recent = self.history(*key)[-min_support:]
            if len(recent) < min_support or any(r.value != st.value for r in recent):
                continue
            new = replace(
                st,
                id=len(self.statements),
                version=st.version + 1,
                supersedes=st.id,
                layer="stable",
            )
            self.statements.append(new)
            self._current[key] = new.id
            promoted.append(new)
        return promoted

    def _seen(
        self,
        who: Iterable[str],
        obj: str,
        attribute: str,
        value: Value,
        o: Observation,
        source: str,
        actor: str | None = None,
    ) -> None:
        who = frozenset(who)
        if self.move_rule == "hitom_generator":
            chains = _generator_chains(who, self._listing, actor, self.max_depth)
        else:
            chains = chains_over(who, self.max_depth)
        for chain in chains:
            self._write(chain, obj, attribute, value, o, source)

    def _tell(
        self, speaker: str, listener: str, obj: str, value: str, o: Observation, trusted: bool
    ) -> None:
        if self.tell_rule == "oracle":
            self._tell_v2(speaker, listener, obj, value, o)
            return
        if listener in o.witnesses and trusted:
            self._write((listener,), obj, "location", value, o, "told")
            if self.max_depth >= 2:
                self._write((listener, speaker), obj, "location", value, o, "told")
        if speaker in o.witnesses and self.max_depth >= 2:
            self._write((speaker, listener), obj, "location", value, o, "reported")

    def _tell_v2(self, speaker: str, listener: str, obj: str, value: str,
                 o: Observation) -> None:
        """Every chain over {speaker, listener} but the speaker's own, whose first agent
        heard it; nothing when the speaker is a known liar or the object is in view."""
        if speaker in self.liars or self._in_view(obj):
            return
        heard = o.witnesses | {speaker}
        for chain in chains_over(frozenset((speaker, listener)), self.max_depth):
            if chain != (speaker,) and chain[0] in heard:
                source = "told" if chain[0] == listener else "reported"
                self._write(chain, obj, "location", value, o, source)

    def _in_view(self, obj: str) -> bool:
        where = self.query((), obj, "location")
        return where is not None and where.value in self.open_containers

    def _sight(self, obj: str) -> list[tuple[str, Value]]:
        """What seeing ``obj`` shows now: its location and every visible property."""
        out: list[tuple[str, Value]] = []
        for attr in ["location", *(p for p, v in self.visibility.items() if v)]:
            now = self.query((), obj, attr)
            if now is not None:
                out.append((attr, now.value))
        return out

    def _seen_v2(self, e: Event, o: Observation, values: list[tuple[str, Value]],
                 view: list[tuple[str, Value]]) -> None:
        """Co-presence for a move or change: ``values`` to the chains whose first agent
        perceived it and the rest are taken to; ``view`` to the other chains of public
        perceivers when the object lies in view."""
        hidden, missed = set(e.hidden_observers), set(e.missed_by)
        actual = frozenset((o.witnesses | set(e.agents) | hidden) - missed)
        public = frozenset((o.witnesses | set(e.agents) | missed) - hidden)
        for chain in chains_over(actual | public, self.max_depth):
            if chain[0] in actual and set(chain[1:]) <= public:
                for attr, value in values:
                    self._write(chain, e.object or "", attr, value, o, "saw")
            elif view and set(chain) <= public:
                for attr, value in view:
                    self._write(chain, e.object or "", attr, value, o, "saw")

    def _trusts(self, listener: str, speaker: str) -> bool:
        if self.tell_rule == "oracle":
            return True
        return self.exit_time.get(speaker, -1) > self.exit_time.get(listener, -1)

    def observe(self, o: Observation) -> list[Statement]:
        """Apply one observation; returns the statements it wrote."""
        start = len(self.statements)
        e = o.event
        if e is None:
            self.unparsed.append(o)
            return []
        if e.kind not in _OPENING_KINDS:
            self._opening = False
        handler = getattr(self, f"_on_{e.kind}", None)
        if handler is not None:
            handler(e, o)
        return self.statements[start:]

    def _on_located(self, e: Event, o: Observation) -> None:
        source = "initial" if self._opening else "saw"
        self._object_room[e.object] = self._scene
        self._write((), e.object, "location", e.container, o, "reported")
        self._seen(o.witnesses, e.object, "location", e.container, o, source)

    def _on_known_liar(self, e: Event, o: Observation) -> None:
        self.liars.update(e.agents)

    def _on_has_property(self, e: Event, o: Observation) -> None:
        if e.property and e.visible is not None:
            self.visibility.setdefault(e.property, bool(e.visible))
        obj = e.object
        self._write((), obj, e.property, e.value, o, "reported")
        self._seen(o.witnesses, obj, e.property, e.value, o, "initial" if self._opening else "saw")

    def _on_open(self, e: Event, o: Observation) -> None:
        self.open_containers.add(e.container)
        self._write((), e.container, "open", True, o, "reported")

    def _on_move(self, e: Event, o: Observation) -> None:
        self._write((), e.object, "location", e.location, o, "reported")
        if self.move_rule == "hitom_generator":
            self._seen(o.witnesses | set(e.agents), e.object, "location", e.location, o, "saw",
                       actor=e.agent)
            return
        sight = self._sight(e.object or "")
        self._seen_v2(e, o, sight, sight if self._in_view(e.object or "") else [])

    def _on_change(self, e: Event, o: Observation) -> None:
        self.visibility.setdefault(e.property, bool(e.visible))
        self._write((), e.object, e.property, e.value, o, "reported")
        if self.move_rule == "hitom_generator":
            self._seen(o.witnesses | set(e.agents), e.object, e.property, e.value, o, "saw")
            return
        changed = [(e.property or "", e.value or "")]
        shown = e.visible and self._in_view(e.object or "")
        self._seen_v2(e, o, changed, changed if shown else [])

    def _on_peek(self, e: Event, o: Observation) -> None:
        for obj in self.objects():
            where = self.query((), obj, "location")
            if where is None or (e.container and e.object and e.object != obj):
                continue
            self._write((e.agent,), obj, "location", e.container or where.value, o, "saw")
            for attr, value in self._sight(obj)[1:]:
                self._write((e.agent,), obj, attr, value, o, "saw")

    def _late_view(self, e: Event, o: Observation) -> None:
        """Entering or waking while the object is in view: join the common view of those
        present and awake (the line's witnesses)."""
        group = frozenset(o.witnesses | set(e.agents))
        for obj in self.objects():
            if not self._in_view(obj):
                continue
            sight = self._sight(obj)
            for agent in e.agents:
                if agent not in o.witnesses:
                    continue
                for chain in chains_over(group, self.max_depth):
                    if agent in chain:
                        for attr, value in sight:
                            self._write(chain, obj, attr, value, o, "saw")

    def _on_enter(self, e: Event, o: Observation) -> None:
        if len(e.agents) > 1:
            self._listing = list(e.agents)
        self._scene = e.room
        if self.move_rule == "hitom_generator":
            self._enter_sees_room(e, o)
        self._late_view(e, o)

    def _on_present(self, e: Event, o: Observation) -> None:
        self._scene = e.room

    def _enter_sees_room(self, e: Event, o: Observation) -> None:
        """Hi-ToM's generator: agents who enter a room see where each object in it is."""
        entering = frozenset(e.agents) & (o.witnesses | set(e.agents))
        chains = [c for c in chains_over(entering, self.max_depth) if len(set(c)) == len(c)]
        for obj, room in self._object_room.items():
            where = self.query((), obj, "location")
            if room is None or room != e.room or where is None:
                continue
            for chain in chains:
                self._write(chain, obj, "location", where.value, o, "saw")

    _on_wake = _late_view

    def _on_leave(self, e: Event, o: Observation) -> None:
        for agent in e.agents:
            self.exit_time[agent] = o.index

    def _on_tell(self, e: Event, o: Observation) -> None:
        self._tell(e.agent, e.listener, e.object, e.location, o, self._trusts(e.listener, e.agent))

    def _on_public_tell(self, e: Event, o: Observation) -> None:
        s = e.agent
        listeners = sorted(o.witnesses - {s})
        if self.tell_rule == "oracle":
            for lis in listeners:
                self._tell(s, lis, e.object, e.location, o, True)
            return
        believers = [x for x in listeners if self._trusts(x, s)]
        for b in believers:
            self._write((b,), e.object, "location", e.location, o, "told")
            if self.max_depth >= 2:
                self._write((b, s), e.object, "location", e.location, o, "told")
        if self.max_depth < 2:
            return
        for lis in listeners:
            self._write((s, lis), e.object, "location", e.location, o, "reported")
            for b in believers if self.listeners_track_believers else ():
                if b != lis:
                    self._write((lis, b), e.object, "location", e.location, o, "reported")

    # -- reading ------------------------------------------------------------------------
    def objects(self) -> list[str]:
        """Objects with a narrated location, in order of first mention."""
        seen: dict[str, None] = {}
        for holder, obj, attr in self._current:
            if not holder and attr == "location":
                seen.setdefault(obj, None)
        return list(seen)

    def query(
        self, chain: Sequence[str], obj: str, attribute: str = "location"
    ) -> Statement | None:
        """The current statement of ``chain`` about ``obj``'s ``attribute``; None = UNKNOWN."""
        idx = self._current.get((tuple(chain), obj, attribute))
        return None if idx is None else self.statements[idx]

    def history(
        self, chain: Sequence[str], obj: str, attribute: str = "location"
    ) -> list[Statement]:
        """Every version for (chain, obj, attribute), oldest first, following supersedes."""
        out: list[Statement] = []
        st = self.query(chain, obj, attribute)
        while st is not None:
            out.append(st)
            st = None if st.supersedes is None else self.statements[st.supersedes]
        return out[::-1]

    def attributes(self, obj: str) -> list[str]:
        seen: dict[str, None] = {}
        for _, o, attr in self._current:
            if o == obj:
                seen.setdefault(attr, None)
        return list(seen)

    def render_block(
        self, chains: Iterable[Sequence[str]], obj: str, attributes: Sequence[str] | None = None
    ) -> str:
        """A compact prompt block: per chain and attribute, the current statement and the
        line it rests on (line numbers 1-based), or UNKNOWN."""
        attrs = list(attributes) if attributes is not None else self.attributes(obj)
        out = [f"Tracked state of the {obj} (each entry cites its story line):"]
        for chain in chains:
            chain = tuple(chain)
            who = " thinks ".join(chain) + " thinks" if chain else "In reality"
            for attr in attrs:
                st = self.query(chain, obj, attr)
                if st is None:
                    out.append(f"- {who}: {attr} UNKNOWN (no evidence)")
                    continue
                out.append(
                    f"- {who}: {attr} = {st.value} [{st.source}, line "
                    f'{st.evidence_line + 1}: "{st.evidence_text.strip()}"]'
                )
        return "\n".join(out)

    def to_rows(self) -> list[dict[str, Any]]:
        """Every statement, every version included, as plain rows."""
        return [s.to_row() for s in self.statements]


def _generator_chains(
    who: frozenset[str], listing: Sequence[str], actor: str | None, max_depth: int
) -> list[Chain]:
    """Chains the Hi-ToM generator writes (``move_rule="hitom_generator"``, which also makes
    agents entering a room see where its objects are): only chains of distinct agents, and
    for a move only those in the order [watchers as last listed on entering (= their exit
    order), actor], as its ``combinations`` calls do."""
    if actor is None:
        return [c for c in chains_over(who, max_depth) if len(set(c)) == len(c)]
    rank = {a: k for k, a in enumerate(listing)}
    order = sorted(who - {actor}, key=lambda a: (rank.get(a, len(rank)), a)) + [actor]
    return [c for k in range(1, max_depth + 1) for c in combinations(order, k)]


# -- comparison with the oracle and with Hi-ToM --------------------------------------------
WitnessSource = str | Callable[[World, Story], Sequence[Iterable[str]]]


@dataclass(frozen=True)
class Agreement:
    """Per-question comparison rows; ``status`` is agree, disagree or unknown."""

    rows: pl.DataFrame

    def summary(self, by: Sequence[str] = ("witnesses", "depth")) -> pl.DataFrame:
        return (
            self.rows.group_by(list(by), maintain_order=True)
            .agg(
                n=pl.len(),
                agree=(pl.col("status") == "agree").sum(),
                disagree=(pl.col("status") == "disagree").sum(),
                unknown=(pl.col("status") == "unknown").sum(),
            )
            .with_columns(agreement=pl.col("agree") / pl.col("n"))
            .sort(list(by))
        )

    def rate(self, **filters: Any) -> float:
        """Share of agreeing answers among the rows matching ``filters`` (column=value)."""
        df = self.rows
        for k, v in filters.items():
            df = df.filter(pl.col(k) == v)
        if df.height == 0:
            raise ValueError(f"no rows match {filters}")
        return float((df["status"] == "agree").mean())


def _status(gold: str, st: Statement | None) -> str:
    if st is None:
        return "unknown"
    return "agree" if str(st.value) == gold else "disagree"


def _witness_labels(source: WitnessSource, world: World, story: Story) -> tuple[str, Any]:
    if callable(source):
        return getattr(source, "__name__", "callable"), source(world, story)
    if source == "gold":
        return "gold", [line.perceivers for line in story.lines]
    if source == "presence":
        return "presence", "presence"
    raise ValueError(f"unknown witness source {source!r}; expected gold, presence or callable")


def presence_ignoring_sleep(world: World, story: Story) -> list[frozenset[str]]:
    """Presence witnesses that disregard every sleep cue (a witness source for
    :func:`agreement_with_oracle`): an asleep agent in the room counts as a witness."""
    return presence_witnesses([parse_line(ln.text) for ln in story.lines], respect_sleep=False)


def agreement_with_oracle(
    worlds: Iterable[World],
    witnesses: WitnessSource | Sequence[WitnessSource] = "gold",
    max_depth: int = 4,
    templates: Templates = NARRATIVE,
) -> Agreement:
    """Answer every question of :func:`~cogrsi_lib.oracle.sampler.question_records` (reality
    and every chain to ``max_depth``, location and properties) from the memory built on each
    world's rendered story, per witness source, against the oracle's gold. ``source_agrees``
    says whether the cited line tells the event the oracle names as the belief's source."""
    if not 1 <= max_depth <= 4:
        raise ValueError("max_depth must lie in 1..4")
    sources = [witnesses] if isinstance(witnesses, str) or callable(witnesses) else list(witnesses)
    rows: list[dict[str, Any]] = []
    for wid, world in enumerate(worlds):
        story = render(world, templates)
        records = question_records(world, wid, max_depth)
        for source in sources:
            name, labels = _witness_labels(source, world, story)
            mem = StateMemory.from_story(
                [ln.text for ln in story.lines], labels, max_depth=max_depth
            )
            for r in records:
                attr = "location" if r["kind"] == "location" else r["property"]
                st = mem.query(tuple(r["chain"]), world.object, attr)
                cited = None if st is None else story.lines[st.evidence_line].event
                rows.append(
                    {
                        "world_id": wid,
                        "witnesses": name,
                        "kind": r["kind"],
                        "depth": r["depth"],
                        "chain": "/".join(r["chain"]),
                        "gold": r["answer"],
                        "predicted": None if st is None else str(st.value),
                        "status": _status(r["answer"], st),
                        "source_agrees": None
                        if st is None or not r["chain"]
                        else (cited if cited is not None else -1) == r["source_event"],
                        "false_belief": r["false_belief"],
                        "unparsed": len(mem.unparsed),
                    }
                )
    return Agreement(
        pl.DataFrame(rows, schema_overrides={"predicted": pl.Utf8, "source_agrees": pl.Boolean})
    )


def agreement_with_hitom(
    items: Iterable[Any],
    tell_rule: str = "exit_order",
    move_rule: str = "witnessed",
    max_depth: int = 4,
) -> Agreement:
    """The memory's answer for each Hi-ToM question's chain (witnesses from presence) vs the
    gold container, with order (0-4) and the deception flag; ``items`` are the
    :func:`cogrsi_lib.bench.hitom.load` items. ``move_rule="witnessed"`` applies the stated
    perception rule, ``"hitom_generator"`` the generator's own (see the module docstring)."""
    rows: list[dict[str, Any]] = []
    cache: dict[str, StateMemory] = {}
    for it in items:
        if it.story_id not in cache:
            cache[it.story_id] = StateMemory.from_story(
                it.context,
                "presence",
                max_depth=max_depth,
                tell_rule=tell_rule,
                move_rule=move_rule,
            )
        mem = cache[it.story_id]
        gold = it.extra.get("answer_text") or dict(it.options).get(it.gold, it.gold)
        parsed = parse_question(it.question)
        st = None if parsed is None else mem.query(parsed[0], parsed[1], parsed[2])
        rows.append(
            {
                "item_id": it.id,
                "witnesses": "presence",
                "tell_rule": tell_rule,
                "move_rule": move_rule,
                "order": int(str(it.question_type).removeprefix("order_")),
                "deception": bool(it.extra.get("deception")),
                "gold": gold,
                "predicted": None if st is None else str(st.value),
                "status": "unparsed_question" if parsed is None else _status(gold, st),
                "unparsed": len(mem.unparsed),
            }
        )
    return Agreement(pl.DataFrame(rows, schema_overrides={"predicted": pl.Utf8}))


def story_extraction(
    world: World, witnesses: WitnessSource = "gold", templates: Templates = NARRATIVE
) -> Extraction:
    """The observations of ``world``'s rendered story with gold or presence witnesses."""
    story = render(world, templates)
    name, labels = _witness_labels(witnesses, world, story)
    return extract([ln.text for ln in story.lines], labels)
