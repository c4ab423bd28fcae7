"""The order in which pytest-xdist hands out the test files (tests/conftest.py): the models'
unit first, every model-free file before the files that wait for the vLLM files."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).parents[1]


def _tiers():
    spec = importlib.util.spec_from_file_location("cogrsi_test_tiers", ROOT / "tests/conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_models_unit_comes_first_and_the_waiting_files_last_in_any_insertion_order():
    tiers = _tiers()
    # as xdist's --loadscope-reorder inserts them: the scopes with most tests first
    inserted = ["notebooks/audit.ipynb", "tests/oracle/test_properties.py", tiers.MODELS_UNIT,
                "tests/test_reruns.py", "tests/test_papers.py", "notebooks/loops.ipynb",
                "tests/test_rehearse.py"]
    queue = tiers.WorkQueue(ROOT)
    for scope in inserted:
        queue[scope] = {}
    assert list(queue) == [tiers.MODELS_UNIT, "tests/oracle/test_properties.py",
                           "tests/test_papers.py", "tests/test_rehearse.py",
                           "notebooks/audit.ipynb", "tests/test_reruns.py",
                           "notebooks/loops.ipynb"]


def test_the_notebook_that_trains_a_model_is_in_the_models_unit_and_does_not_wait():
    tiers = _tiers()
    train = str(ROOT / "notebooks/train.ipynb")
    assert tiers._unit(train) == tiers.MODELS_UNIT and not tiers._after_vllm(train)
    assert tiers._after_vllm(str(ROOT / "notebooks/nested.ipynb"))
    assert tiers._unit(str(ROOT / "tests/llm/test_llm_vllm_serve.py")) == tiers.MODELS_UNIT
    assert tiers._unit(str(ROOT / "tests/test_rehearse.py")) is None
