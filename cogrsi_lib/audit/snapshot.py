"""The audit's fixed sample of oracle worlds and questions, as a JSON snapshot (CogRSI §4.3).

The paper audits every rule on 6,000 small worlds with about 85k questions.  An
:class:`AuditSample` holds the sampled worlds, one row per question with the oracle's gold
answer (kept on this side only), and the snapshot that translated code sees: world facts
(events and who perceived them, who was present or asleep, the true location and property
values at each step, the world's testimony and opening policies) and the questions, never an
answer or a belief.  A question whose chain holds no belief (``opening: unknown``) is left
out.  The snapshot is encoded once and sent to every sandbox child.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cogrsi_lib.audit.api import API_VERSION
from cogrsi_lib.oracle import OracleState, World, answer, situations
from cogrsi_lib.oracle.render import render_question
from cogrsi_lib.oracle.sampler import SamplerConfig, all_questions, sample_worlds

QUESTION_SCHEMA = {
    "question_id": pl.Int64, "world_id": pl.Int64, "kind": pl.Utf8, "property": pl.Utf8,
    "chain": pl.List(pl.Utf8), "depth": pl.Int64, "gold": pl.Utf8, "reality": pl.Utf8,
    "false_belief": pl.Boolean, "via": pl.Utf8, "question": pl.Utf8,
}  # fmt: skip


def world_snapshot(world: World, max_depth: int) -> tuple[dict[str, Any], list[dict], list[dict]]:
    """One world's snapshot entry, its questions (snapshot form) and their gold rows."""
    state = OracleState.initial(world, max_depth)
    present: list[list[str]] = []
    asleep: list[list[str]] = []
    location: list[str] = []
    values: dict[str, list[Any]] = {p: [] for p, _ in world.properties}
    candidates: dict[str, list[Any]] = {"location": list(world.containers)}
    for p, v in world.properties:
        candidates[f"property:{p}"] = [v]
    events: list[dict[str, Any]] = []

    def snap() -> None:
        present.append([a for a in world.agents if a in state.present])
        asleep.append([a for a in world.agents if a in state.asleep])
        location.append(state.location)
        for p in values:
            values[p].append(state.properties[p])

    for i, e in enumerate(world.events):
        snap()
        raw: dict[str, Any] = {"type": e.type, "actor": e.actor}
        if e.type == "move":
            raw |= {"to": e.to, "origin": state.location}
        elif e.type == "whisper":
            raw |= {"listener": e.listener, "location": e.location,
                    "truthful": e.location == state.location}
        elif e.type == "peek":
            raw |= {"container": state.location}
        elif e.type == "change":
            raw |= {"property": e.property, "value": e.value, "visible": e.visible}
            seen = candidates[f"property:{e.property}"]
            if e.value not in seen:
                seen.append(e.value)
        if e.hidden_observers:
            raw["hidden_observers"] = list(e.hidden_observers)
        if e.missed_by:
            raw["missed_by"] = list(e.missed_by)
        who = state.apply(e, i)
        raw["perceivers"] = [a for a in world.agents if a in who]
        if e.type in ("enter", "wake"):
            raw["late_view"] = (i, "view") in state.observation_log[e.actor]
        events.append(raw)
    snap()
    entry = {
        "agents": list(world.agents), "containers": list(world.containers),
        "object": world.object, "room": world.room,
        "open_containers": [c for c in world.containers if c in world.open_containers],
        "events": events, "present": present, "asleep": asleep, "location": location,
        "values": values, "candidates": candidates,
        "known_liars": [a for a in world.agents if a in world.known_liars],
        "testimony": world.testimony, "opening": world.opening,
    }  # fmt: skip
    qs, gold = [], []
    for q in all_questions(world, max_depth):
        a = answer(state, q)
        if not a.known:
            continue  # no belief (``opening: unknown``) is never a forced-choice question
        text = render_question(world, q)
        qs.append({"kind": q.kind, "property": q.property, "chain": list(q.chain), "text": text})
        gold.append({
            "kind": q.kind, "property": q.property, "chain": list(q.chain), "depth": q.depth,
            "gold": str(a.value), "reality": str(a.reality), "false_belief": a.false_belief,
            "via": a.via, "question": text,
        })  # fmt: skip
    return entry, qs, gold


@dataclass
class AuditSample:
    """Worlds, gold questions and the encoded snapshot the sandbox reads."""

    worlds: list[World]
    questions: pl.DataFrame
    payload: bytes = field(repr=False)
    max_depth: int = 2
    seed: int | None = None

    @property
    def n_questions(self) -> int:
        return self.questions.height

    @property
    def gold(self) -> list[str]:
        return self.questions["gold"].to_list()

    def snapshot(self) -> dict[str, Any]:
        """The decoded snapshot (what the sandbox child parses)."""
        return json.loads(self.payload)

    def world_tags(self) -> pl.DataFrame:
        """Per world: its event types, whether it has a lie, and whether it lies outside
        ExploreToM's situations (:mod:`cogrsi_lib.oracle.situations`)."""
        types = [sorted({e.type for e in w.events}) for w in self.worlds]
        lies = [any(e.type == "whisper" and not t for e, t in zip(w.events, _truthful(w),
                                                              strict=True)) for w in self.worlds]
        return pl.DataFrame({
            "world_id": list(range(len(self.worlds))),
            "event_types": types,
            "has_lie": lies,
            "outside_exploretom": [not situations.inside(w) for w in self.worlds],
        }, schema={"world_id": pl.Int64, "event_types": pl.List(pl.Utf8), "has_lie": pl.Boolean,
                   "outside_exploretom": pl.Boolean})


def _truthful(world: World) -> list[bool]:
    state = OracleState.initial(world, 1)
    out = []
    for i, e in enumerate(world.events):
        out.append(e.type != "whisper" or e.location == state.location)
        state.apply(e, i)
    return out


def build_sample(
    worlds: Sequence[World], max_depth: int = 2, seed: int | None = None
) -> AuditSample:
    """The snapshot and gold table of ``worlds`` with every question up to ``max_depth``."""
    entries, questions, rows = [], [], []
    for wid, w in enumerate(worlds):
        entry, qs, gold = world_snapshot(w, max_depth)
        entries.append(entry)
        for q, g in zip(qs, gold, strict=True):
            q["w"] = wid
            g["world_id"] = wid
            g["question_id"] = len(rows)
            questions.append(q)
            rows.append(g)
    snapshot = {"api_version": API_VERSION, "worlds": entries, "questions": questions}
    payload = json.dumps(snapshot, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    table = pl.DataFrame(rows, schema=QUESTION_SCHEMA)
    return AuditSample(list(worlds), table, payload, max_depth, seed)


def sample_audit_worlds(
    n_worlds: int, seed: int, max_depth: int = 2, cfg: SamplerConfig | None = None
) -> AuditSample:
    """The audit sample: ``n_worlds`` oracle worlds from ``seed`` (paper: 6,000)."""
    worlds = list(sample_worlds(n_worlds, seed, cfg or SamplerConfig()))
    return build_sample(worlds, max_depth, seed)
