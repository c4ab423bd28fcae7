"""Fixtures shared by the language-model tests."""

from __future__ import annotations

import pytest

from . import fake_vllm as _fake_vllm


@pytest.fixture
def fake_vllm(monkeypatch):
    """The ``vllm`` stand-in of :mod:`tests.llm.fake_vllm`, installed for one test."""
    return _fake_vllm.install(monkeypatch)
