"""The scorecard's bare variant on the embedded CPU model, two Suite A items.

It checks that real replies go through the strict parser and the accounting (a reply that
breaks the format is recorded as unparsed, with its reason, never mapped to an option); never
accuracy: SmolLM2-135M is far too weak for theory of mind. Every variant through every suite
on a real model, with the gates computed from its runs, is the scorecard's stage run through
``vllm serve`` (tests/llm/test_llm_vllm_serve.py); the variants' sharing of the bare replies
through the completion cache and the gates' logic are tests/scorecard/test_scorecard_variants.py
and test_scorecard_stage.py. Skipped, with the reason, when the ``embedded`` extra or the
weights package is not installed.
"""

from __future__ import annotations

import pytest

from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.scorecard.answers import run_nested
from cogrsi_lib.scorecard.direct import DirectSystem

from .helpers import nested_items

OK, WHY = embedded_available()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}"),
]


def test_bare_variant_on_the_embedded_model(embedded_model, tmp_path) -> None:
    from cogrsi_lib.llm import CachedBackend

    backend = CachedBackend(embedded_model, tmp_path / "llm-cache")
    items = nested_items(5, 3)[:2]
    run = run_nested(DirectSystem(backend, max_tokens=16), items)
    assert len(run.records) == 2 and run.score.n == 2
    for rec, it in zip(run.records, items, strict=True):
        usage = rec.ledger.total()
        assert usage.calls == 1 and usage.prompt_tokens > 0
        assert rec.samples[0].status == ("ok" if rec.status == "ok" else "unparsed")
        if rec.status == "ok":
            assert rec.answer_text in it.options
        else:
            assert rec.answer is None and rec.extra["error"]
    assert run.score.n_unparsed == sum(r.status != "ok" for r in run.records)
