"""The loops' scorer answers several principles in one stream (cogrsi_lib/loops/slot.py):
the incumbent and its candidates on the same cohort share the engine, with the records each
gets answered alone, each asked once."""

from __future__ import annotations

from reader.helpers import Script, narrative

from cogrsi_lib.llm import ScriptedBackend
from cogrsi_lib.loops.slot import FunctionSlot, Scorer
from cogrsi_lib.reader import GroundedReader, ReaderConfig

PRINCIPLES = ["Count who saw the move.", "Trust what was said.", "Count who saw the move."]


def items():
    return [narrative(f"q{i}", question=f"Where will Aiden look, case {i}?") for i in range(3)]


def scorer(backend, memo=True):
    return Scorer(FunctionSlot(lambda p: GroundedReader(backend, p, ReaderConfig())),
                  memo=memo)


def rows(records):
    return [r.to_row() for r in records]


def test_several_principles_in_one_stream_give_each_principle_s_own_records() -> None:
    together = ScriptedBackend(Script(annotated="Aiden left.\nAnswer: A", plain="Answer: B"))
    s = scorer(together)
    got = s.answer_many(PRINCIPLES, items())
    # perception, samples, arbitration: three waves for both principles, not three each
    assert len(together.batches) == 3
    assert s.answered == 2 * len(items())  # the repeated principle is asked once
    assert rows(got[0]) == rows(got[2])
    for principle, recs in zip(PRINCIPLES, got, strict=True):
        alone = scorer(ScriptedBackend(Script(annotated="Aiden left.\nAnswer: A",
                                              plain="Answer: B"))).answer(principle, items())
        assert rows(recs) == rows(alone)
    # remembered: asking again sends nothing
    n = together.calls
    assert rows(s.answer(PRINCIPLES[1], items())) == rows(got[1]) and together.calls == n


def test_prefetch_needs_the_memo() -> None:
    backend = ScriptedBackend(Script())
    s = scorer(backend, memo=False)
    s.prefetch(PRINCIPLES, items())
    assert backend.calls == 0 and s.answered == 0
    s = scorer(backend)
    s.prefetch(PRINCIPLES[:2], items())
    n = backend.calls
    s.answer(PRINCIPLES[0], items())
    assert backend.calls == n and s.answered == 2 * len(items())
