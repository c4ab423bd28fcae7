"""The loops' one view of the system they improve (DESIGN.md: GEPA's engine/adapter split).

The engine never sees a reader's internals: it asks a :class:`PrincipleSystem` for a
:class:`~cogrsi_lib.reader.system.System` with principle P in its slot and has it answer
items. The grounded reader (``GroundedReader.with_principle``) is one; a baseline or
PDDL-Mind can be another. :class:`Scorer` batches those calls and remembers each
(principle, item) record within a run, so an unchanged incumbent is not answered twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
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
    """Answer items under principles, in batches, remembering each record. Threads may share
    a scorer (:mod:`cogrsi_lib.llm.together`): a record another thread is answering is
    waited for, not asked again, so every record is asked once, as in a serial run."""

    def __init__(self, system: PrincipleSystem, batch_size: int = 64, memo: bool = True) -> None:
        self.system = system
        self.batch_size = batch_size
        self.memo = memo
        self._records: dict[tuple[str, str], ItemRecord] = {}
        self._pending: dict[tuple[str, str], Future[ItemRecord]] = {}
        self._lock = threading.Lock()
        self.answered = 0  # items the system itself answered (memo misses)

    def answer(self, principle: str, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        """One record per item, in order, under ``principle``."""
        keys = [(principle, it.item_id) for it in items]
        with self._lock:
            known = {k: self._records[k] for k in keys if k in self._records}
            waiting = {k: self._pending[k] for k in keys
                       if k not in known and k in self._pending and self.memo}
            # an item listed twice is answered once
            todo = list({it.item_id: it for it, k in zip(items, keys, strict=True)
                         if k not in known and k not in waiting}.values())
            mine = {(principle, it.item_id): Future() for it in todo}
            if self.memo:
                self._pending.update(mine)
        if todo:
            try:
                recs = run_system(self.system.with_principle(principle), todo, self.batch_size)
            except BaseException as e:
                with self._lock:
                    for k, f in mine.items():
                        self._pending.pop(k, None)
                        f.set_exception(e)
                raise
            fresh = {(principle, it.item_id): r for it, r in zip(todo, recs, strict=True)}
            with self._lock:
                self.answered += len(todo)
                if self.memo:
                    self._records.update(fresh)
                for k, f in mine.items():
                    self._pending.pop(k, None)
                    f.set_result(fresh[k])
            known.update(fresh)
        known.update({k: f.result() for k, f in waiting.items()})
        return [known[k] for k in keys]

    def correct(self, principle: str, items: Sequence[ReaderItem]) -> list[bool]:
        """Per item: answered right (an unparsed answer is wrong)."""
        return [bool(r.correct) for r in self.answer(principle, items)]
