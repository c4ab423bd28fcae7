"""The loops' one view of the system they improve (DESIGN.md: GEPA's engine/adapter split).

The engine never sees a reader's internals: it asks a :class:`PrincipleSystem` for a
:class:`~cogrsi_lib.reader.system.System` with principle P in its slot and has it answer
items. The grounded reader (``GroundedReader.with_principle``) is one; a baseline or
PDDL-Mind can be another. :class:`Scorer` batches those calls and remembers each
(principle, item) record within a run, so an unchanged incumbent is not answered twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import System, run_system


@runtime_checkable
class PrincipleSystem(Protocol):
    """Anything that can answer under a principle P (text, or "none"/"expert")."""

    def with_principle(self, principle: str | None) -> System: ...


class FunctionSlot:
    """A :class:`PrincipleSystem` from a function ``principle -> System``."""

    def __init__(self, make: Callable[[str], System]) -> None:
        self._make = make

    def with_principle(self, principle: str | None) -> System:
        return self._make(principle or "")


class Scorer:
    """Answer items under principles, in batches, remembering each record."""

    def __init__(self, system: PrincipleSystem, batch_size: int = 64, memo: bool = True) -> None:
        self.system = system
        self.batch_size = batch_size
        self.memo = memo
        self._records: dict[tuple[str, str], ItemRecord] = {}
        self.answered = 0  # items the system itself answered (memo misses)

    def answer(self, principle: str, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        """One record per item, in order, under ``principle``."""
        todo = [it for it in items if (principle, it.item_id) not in self._records]
        # an item listed twice is answered once
        todo = list({it.item_id: it for it in todo}.values())
        if todo:
            recs = run_system(self.system.with_principle(principle), todo, self.batch_size)
            self.answered += len(todo)
            fresh = {(principle, it.item_id): r for it, r in zip(todo, recs, strict=True)}
            if not self.memo:
                return [fresh[(principle, it.item_id)] if (principle, it.item_id) in fresh
                        else self._records[(principle, it.item_id)] for it in items]
            self._records.update(fresh)
        return [self._records[(principle, it.item_id)] for it in items]

    def correct(self, principle: str, items: Sequence[ReaderItem]) -> list[bool]:
        """Per item: answered right (an unparsed answer is wrong)."""
        return [bool(r.correct) for r in self.answer(principle, items)]
