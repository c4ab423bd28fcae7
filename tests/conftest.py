"""Fixtures shared by every test folder, and the test tiers.

Tiers (markers, declared in ``pyproject.toml``): ``model`` runs the embedded model, ``vllm``
runs vLLM's engine or server, ``e2e`` runs stage notebooks or the DVC pipeline, ``slow`` marks
a full-size run. README's test command runs every tier; ``pytest -m "not model and not vllm
and not e2e"`` is the inner loop. A test that uses the ``embedded_model`` fixture is marked
``model`` here, and a notebook ``e2e``; any other test that loads the embedded model without
one of those markers fails, so the inner loop never loads it unnoticed.
"""

from __future__ import annotations

import pytest

#: markers under which a test may load the embedded model
MAY_LOAD_MODEL = ("model", "vllm", "e2e")


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if "embedded_model" in getattr(item, "fixturenames", ()):
            item.add_marker("model")
        if item.path.suffix == ".ipynb":
            item.add_marker("e2e")


@pytest.fixture(autouse=True)
def _embedded_model_only_where_marked(request, monkeypatch):
    if any(request.node.get_closest_marker(m) for m in MAY_LOAD_MODEL):
        return
    from cogrsi_lib.llm import embedded

    def refuse(*_args, **_kwargs):
        raise AssertionError(f"{request.node.nodeid} loads the embedded model: mark it "
                             f"with one of {MAY_LOAD_MODEL}")

    monkeypatch.setattr(embedded, "loaded_weights", refuse)


@pytest.fixture(scope="session")
def embedded_model():
    """The embedded CPU model, loaded once per test session (skipped, with the reason, when
    the ``embedded`` extra or the weights package is not installed)."""
    from cogrsi_lib.llm.embedded import EmbeddedBackend, embedded_available

    ok, why = embedded_available()
    if not ok:
        pytest.skip(f"embedded model unavailable: {why}")
    return EmbeddedBackend(max_batch=8)
