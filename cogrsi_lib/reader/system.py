"""What a loop, a stage or a notebook sees of any answering system (DESIGN.md, GEPA's adapter).

The loops improve "something that answers these items under this principle": the grounded
reader, a baseline, or PDDL-Mind. All of them implement :class:`System`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol, runtime_checkable

from pydantic import NonNegativeInt

from cogrsi_lib.llm.accounting import CallLedger
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

    def seed_for(self, temperature: float) -> int:
        """The base seed of a call at ``temperature`` in this run."""
        return self.seed + self.run if temperature > 0 else self.seed


def chunks(items: Sequence[ReaderItem], size: int) -> Iterator[Sequence[ReaderItem]]:
    for i in range(0, len(items), max(1, size)):
        yield items[i : i + size]


def run_system(
    system: System, items: Sequence[ReaderItem], batch_size: int = 64
) -> list[ItemRecord]:
    """Answer items in batches (each batch is one phase-by-phase pass of the system)."""
    out: list[ItemRecord] = []
    phase("%s: %d items", system.name, len(items))
    for batch in progress(list(chunks(items, batch_size)), desc=f"{system.name} batches",
                          unit="batch"):
        out.extend(system.answer_batch(batch))
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
