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
from cogrsi_lib.reader.system import System, answer_each


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
        return self.answer_many([principle], items)[0]

    def prefetch(self, principles: Sequence[str], items: Sequence[ReaderItem]) -> None:
        """Answer ``items`` under every principle now, all in one stream when the system
        answers as flows (:mod:`cogrsi_lib.llm.flow`): the later :meth:`answer` calls read the
        records from the memo (nothing to do without it)."""
        if self.memo:
            self.answer_many(principles, items)

    def answer_many(self, principles: Sequence[str], items: Sequence[ReaderItem]
                    ) -> list[list[ItemRecord]]:
        """Per principle (in order), one record per item: every record not yet known is
        asked once, those of all principles together."""
        claims = [self._claim(p, items) for p in dict.fromkeys(principles)]
        asked = [(p, todo, mine) for p, _, _, todo, mine in claims if todo]
        if asked:
            try:
                fresh = self._run([(p, todo) for p, todo, _ in asked])
            except BaseException as e:
                with self._lock:
                    for _, _, mine in asked:
                        for k, f in mine.items():
                            self._pending.pop(k, None)
                            f.set_exception(e)
                raise
            with self._lock:
                for (p, todo, mine), recs in zip(asked, fresh, strict=True):
                    self.answered += len(todo)
                    got = {(p, it.item_id): r for it, r in zip(todo, recs, strict=True)}
                    if self.memo:
                        self._records.update(got)
                    for k, f in mine.items():
                        self._pending.pop(k, None)
                        f.set_result(got[k])
        by_principle = {}
        for p, known, waiting, _todo, mine in claims:
            known.update({k: f.result() for k, f in {**mine, **waiting}.items()})
            by_principle[p] = [known[(p, it.item_id)] for it in items]
        return [by_principle[p] for p in principles]

    def _claim(self, principle: str, items: Sequence[ReaderItem]) -> tuple[
            str, dict[tuple[str, str], ItemRecord], dict[tuple[str, str], Future[ItemRecord]],
            list[ReaderItem], dict[tuple[str, str], Future[ItemRecord]]]:
        """The records already known, those another thread is answering, the items to ask
        (an item listed twice once) and the futures this caller now owes."""
        keys = [(principle, it.item_id) for it in items]
        with self._lock:
            known = {k: self._records[k] for k in keys if k in self._records}
            waiting = {k: self._pending[k] for k in keys
                       if k not in known and k in self._pending and self.memo}
            todo = list({it.item_id: it for it, k in zip(items, keys, strict=True)
                         if k not in known and k not in waiting}.values())
            mine = {(principle, it.item_id): Future() for it in todo}
            if self.memo:
                self._pending.update(mine)
        return principle, known, waiting, todo, mine

    def _run(self, asks: Sequence[tuple[str, Sequence[ReaderItem]]]) -> list[list[ItemRecord]]:
        """Each (principle, items)'s records: flow systems on one backend in one stream, any
        other in batches (:func:`cogrsi_lib.reader.system.answer_each`)."""
        return answer_each([(self.system.with_principle(p), its) for p, its in asks],
                           self.batch_size)[0]

    def correct(self, principle: str, items: Sequence[ReaderItem]) -> list[bool]:
        """Per item: answered right (an unparsed answer is wrong)."""
        return [bool(r.correct) for r in self.answer(principle, items)]
