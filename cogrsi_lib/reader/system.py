"""What a loop, a stage or a notebook sees of any answering system (DESIGN.md, GEPA's adapter).

The loops improve "something that answers these items under this principle": the grounded
reader, a baseline, or PDDL-Mind. All of them implement :class:`System`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import NonNegativeInt

from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.flow import Flow, run_flows
from cogrsi_lib.llm.types import Completion, Request
from cogrsi_lib.progress import phase, progress
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import read_answer
from cogrsi_lib.reader.records import ItemRecord, SampleRecord
from cogrsi_lib.settings import Settings


@runtime_checkable
class System(Protocol):
    name: str

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        """One record per item, in order."""
        ...


class SamplingConfig(Settings):
    """Sampling settings shared by the reader and the baselines (CogRSI §4.1, G.1).

    The paper samples at temperature 0.7 with a 1,024-token output cap; on the embedded CPU
    model smaller caps keep a run short. ``structured``: the backend enforces each reply's
    declared format while decoding (False: free generation, parsed by the same format).
    Typed settings (unknown keys refused), so a stage's schema takes them as they are.

    ``run`` is the repeat (CogRSI reports three runs per system, §5.1): run ``r`` seeds every
    sampled call with ``seed + r`` and every greedy call with ``seed``, so a greedy call, whose
    reply the seed does not change, is the same request in every run (one cache entry) and
    run 0 is the run without repeats.

    ``perceivers``: where a perceiving system's perceivers come from, its perception call
    (``model``) or the item's gold perceivers (``gold``, CogRSI Table 27; no call is made).
    """

    temperature: float = 0.7
    top_p: float = 1.0
    sample_max_tokens: int = 1024
    direct_max_tokens: int = 32
    perception_max_tokens: int = 1024
    arbitration_max_tokens: int = 512
    perspective_max_tokens: int = 512
    seed: int = 0
    structured: bool = True
    run: NonNegativeInt = 0
    perceivers: Literal["model", "gold"] = "model"

    def seed_for(self, temperature: float) -> int:
        """The base seed of a call at ``temperature`` in this run."""
        return self.seed + self.run if temperature > 0 else self.seed


class FlowSystem:
    """A system that answers each item as one flow (:mod:`cogrsi_lib.llm.flow`): a batch's
    items, or several systems' items (:func:`run_systems`), share one stream."""

    name: str
    backend: Backend

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        """One item's calls; its record is the flow's result."""
        raise NotImplementedError

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        return run_flows(self.backend, [self.flow(it) for it in items])

    def answer(self, item: ReaderItem) -> ItemRecord:
        return self.answer_batch([item])[0]


def chunks(items: Sequence[ReaderItem], size: int) -> Iterator[Sequence[ReaderItem]]:
    for i in range(0, len(items), max(1, size)):
        yield items[i : i + size]


def run_system(
    system: System, items: Sequence[ReaderItem], batch_size: int = 64
) -> list[ItemRecord]:
    """Answer items: a flow system's items all in one stream, another system's in batches
    of ``batch_size`` (each one ``answer_batch``)."""
    return run_systems([system], items, batch_size)[0][0]


def run_systems(
    systems: Sequence[System], items: Sequence[ReaderItem], batch_size: int = 64
) -> tuple[list[list[ItemRecord]], dict[str, float]]:
    """Every system's records on ``items`` (per system, in order) and the wall seconds until
    each system's last record (:func:`answer_each` with the same items for every system)."""
    return answer_each([(system, items) for system in systems], batch_size)


def answer_each(
    asks: Sequence[tuple[System, Sequence[ReaderItem]]], batch_size: int = 64
) -> tuple[list[list[ItemRecord]], dict[str, float]]:
    """Each (system, items)'s records, in order, and the wall seconds until each system's
    last record. Flow systems on one backend run in one stream, all their items' ready calls
    in flight together; any other system answers in batches."""
    out: list[list[ItemRecord]] = [[] for _ in asks]
    wall: dict[str, float] = {}
    streams: dict[int, list[int]] = {}  # backend id -> the flow asks on it
    for k, (system, items) in enumerate(asks):
        if isinstance(system, FlowSystem):
            streams.setdefault(id(system.backend), []).append(k)
            continue
        phase("%s: %d items", system.name, len(items))
        t0 = time.perf_counter()
        for batch in progress(list(chunks(items, batch_size)), desc=f"{system.name} batches",
                              unit="batch"):
            out[k].extend(system.answer_batch(batch))
        wall[system.name] = wall.get(system.name, 0.0) + time.perf_counter() - t0
    for ks in streams.values():
        for k, recs in zip(ks, _one_stream([asks[k] for k in ks], wall),  # type: ignore[misc]
                           strict=True):
            out[k] = recs
    for (system, items), recs in zip(asks, out, strict=True):
        if len(recs) != len(items):
            raise RuntimeError(f"{system.name} returned {len(recs)} records for "
                               f"{len(items)} items")
    return out, wall


def _one_stream(asks: Sequence[tuple[FlowSystem, Sequence[ReaderItem]]],
                wall: dict[str, float]) -> list[list[ItemRecord]]:
    """Flow systems sharing a backend, every item of each at once: each ask's records, and
    in ``wall`` the seconds until each system's last one."""
    names = ", ".join(dict.fromkeys(s.name for s, _ in asks))
    phase("%s: %d items", names, sum(len(items) for _, items in asks))
    owner = [s.name for s, items in asks for _ in items]
    left = dict.fromkeys(owner, 0)
    for name in owner:
        left[name] += 1
    t0 = time.perf_counter()
    bar = progress(desc=names, total=len(owner), unit="item")

    def done(i: int) -> None:
        bar.update()
        left[owner[i]] -= 1
        if left[owner[i]] == 0:
            wall[owner[i]] = wall.get(owner[i], 0.0) + time.perf_counter() - t0

    try:
        records = run_flows(asks[0][0].backend, [s.flow(it) for s, items in asks
                                                 for it in items], done)
    finally:
        bar.close()
    out, pos = [], 0
    for _, items in asks:
        out.append(records[pos:pos + len(items)])
        pos += len(items)
    return out


def parse_samples(
    item: ReaderItem, view: str, request: Request, completions: Sequence[Completion],
    ledger: CallLedger, role: str,
) -> tuple[list[SampleRecord], list[str | None]]:
    """Parse answering samples strictly by their request's reply format; record them and
    count their calls under ``role``."""
    ledger.add(role, completions)
    recs, answers = [], []
    for c in completions:
        p = read_answer(item, request.reply, c.text)
        recs.append(SampleRecord.of(view, c, p.value, p.status, p.reason, request))
        answers.append(p.value)
    return recs, answers
