"""Fixtures shared by every test folder."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def embedded_model():
    """The embedded CPU model, loaded once per test session (skipped, with the reason, when
    the ``embedded`` extra or the weights package is not installed)."""
    from cogrsi_lib.llm.embedded import EmbeddedBackend, embedded_available

    ok, why = embedded_available()
    if not ok:
        pytest.skip(f"embedded model unavailable: {why}")
    return EmbeddedBackend(max_batch=8)
