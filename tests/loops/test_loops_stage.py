"""The loops stage: params, a tiny scripted run of every arm, resume, reports (Tables 1, 5)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from cogrsi_lib.loops import report
from cogrsi_lib.loops.gepa_arm import gepa_available
from cogrsi_lib.loops.params import LoopsParams
from cogrsi_lib.loops.selection import selection_quality
from cogrsi_lib.loops.stage import run_stage, stage_data
from cogrsi_lib.stage_params import StageParamsError, load

ROOT = Path(__file__).resolve().parents[2]
TINY = {"seeds": [0], "rounds": 2, "discovery_size": 8, "trial_size": 8, "final_size": 16,
        "heldout_size": 8, "dev_stories": 50, "gepa_budget": 40, "gepa_val_size": 8,
        "gepa_seeds": [0], "model": "scripted",
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 6, "n_gate_dialogue": 4,
                  "n_eval_narrative": 4, "n_eval_dialogue": 2}}


def test_params_yaml_section_is_a_valid_config():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["loops"]
    cfg = load("loops", params)
    # params.yaml carries the tiny CPU setting of the embedded default (issue §4) ...
    assert (cfg.rounds, cfg.discovery_size, cfg.trial_size) == (2, 8, 8)
    assert cfg.model.backend == "embedded" and cfg.model.cache_dir == ".cache/llm"
    # every arm of Tables 1 and 5 but the audit gate's, and a small GEPA
    assert {a.name for a in cfg.arm_configs()} == {"accuracy_loop", "accuracy_library",
                                                  "gated_library", "pairs_as_data",
                                                  "single_principle"}
    assert cfg.run_gepa and cfg.gepa_seeds == [0]
    assert (cfg.delta, cfg.min_nonneg, cfg.gepa_budget) == (3.0, 2, 48)
    # ... params.gpu.yaml the paper's full setting (App. C.2) ...
    gpu = yaml.safe_load((ROOT / "params.gpu.yaml").read_text())["loops"]
    full = load("loops", gpu)
    assert (full.rounds, full.discovery_size, full.trial_size, full.final_size) == (8, 80, 80, 300)
    assert full.seeds == [0, 1, 2, 3, 4, 5] and full.run_gepa and full.model.backend == "vllm"
    assert {a.name for a in full.arm_configs()} == {"accuracy_loop", "accuracy_library",
                                                   "gated_library", "pairs_as_data",
                                                   "single_principle", "audit_library"}
    # ... and the defaults are the schema's small CI setting, declared once
    assert load("loops", {}) == LoopsParams()
    with pytest.raises(StageParamsError, match="unknown key 'round'"):
        load("loops", {**params, "round": 3})
    with pytest.raises(StageParamsError, match="'model': unknown backend"):
        load("loops", {**params, "model": "gpt"})
    with pytest.raises(StageParamsError, match=r"unknown key 'model\.llm'"):
        load("loops", {**params, "model": {"backend": "embedded", "llm": {}}})
    with pytest.raises(StageParamsError, match=r"'arms\.0': Input should be 'accuracy_"):
        load("loops", {**params, "arms": ["gated"]})
    with pytest.raises(StageParamsError, match=r"'arms\.0\.base': Input should be"):
        load("loops", {**params, "arms": [{"name": "wide", "base": "gated"}]})
    with pytest.raises(StageParamsError, match=r"unknown key 'arms\.0\.rule'"):
        load("loops", {**params, "arms": [{"name": "wide", "rule": {}}]})
    with pytest.raises(StageParamsError, match="needs the gate's settings"):
        load("loops", {**params, "arms": ["audit_library"]})


def test_custom_arms_from_mappings():
    cfg = load("loops", {"arms": [{"name": "wide", "base": "gated_library", "delta": 2.0},
                                  "accuracy_loop"]})
    wide, loose = cfg.arm_configs()
    assert (wide.name, wide.rule.delta, wide.rule.min_nonneg, wide.gates) == (
        "wide", 2.0, 2, ("counterfactual",))
    assert (loose.artifact, loose.rule.delta, loose.rule.min_nonneg) == ("principle", 1.0, 0)


def test_tiny_scripted_stage_runs_every_arm_and_resumes(tmp_path):
    arms = ["accuracy_loop", "accuracy_library", "gated_library", "pairs_as_data",
            "single_principle"] + (["gepa"] if gepa_available()[0] else [])
    cfg = load("loops", {**TINY, "arms": arms})
    data = stage_data(cfg)
    run = run_stage(cfg, data, tmp_path)
    assert set(run.rounds["arm"]) == set(arms) - {"gepa"}
    assert run.rounds.height == 2 * 5
    labels = set(run.final_scores["label"])
    assert labels == {"none", "expert", *arms}
    assert run.final_scores.group_by("label").len()["len"].to_list() == [16] * len(labels)
    t1 = report.table1(run.final_scores, run.gate_pairs, run.eval_pairs, run.arms,
                       candidates=run.candidates)
    assert t1["label"].to_list()[:2] == ["none", "expert"] and t1["dev"].is_not_null().all()
    t5 = selection_quality(run.heldout, run.rounds)
    assert t5.height == 5 and (t5["rounds"] == 2).all()
    assert run.heldout["heldout_n"].unique().to_list() == [8]
    # resume: a second run finds every round done and returns the same logs
    mtime = (tmp_path / "runs" / "gated_library" / "seed0" / "rounds" / "r01" / "state.json"
             ).stat().st_mtime_ns
    again = run_stage(cfg, data, tmp_path)
    assert again.rounds.equals(run.rounds) and again.candidates.equals(run.candidates)
    assert (tmp_path / "runs" / "gated_library" / "seed0" / "rounds" / "r01" / "state.json"
            ).stat().st_mtime_ns == mtime
    rules = report.audit_candidates(run.candidates)
    assert rules["rule_id"].n_unique() == rules.height
    try:
        from cogrsi_lib.audit.rules import read_rules
    except ImportError:
        return
    rules.write_parquet(tmp_path / "rules.parquet")
    back = read_rules(tmp_path / "rules.parquet")
    assert back.height == rules.height and back["trial_gain"].dtype == pl.Float64


def test_two_arms_in_one_seed_sample_their_own_round0_candidates(tmp_path):
    """The scripted backend samples by each request's seed; with the arm in the builder's seed
    two arms that start from the same incumbent on the same cohorts propose different
    candidates, while their cohorts (the paired design) stay the same."""
    from cogrsi_lib.loops.builder import arm_seed

    cfg = load("loops", {**TINY, "rounds": 1, "arms": ["accuracy_library", "gated_library"]})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    r0 = run.replies.filter(pl.col("round") == 0)  # every builder reply, kept or rejected
    by_arm = {arm: r0.filter(pl.col("arm") == arm) for arm in ("accuracy_library",
                                                               "gated_library")}
    assert all(t.height > 0 for t in by_arm.values())
    # the same failure groups were shown to both arms, and they answered differently
    assert set(by_arm["accuracy_library"]["group"]) == set(by_arm["gated_library"]["group"])
    assert set(by_arm["accuracy_library"]["text"]) != set(by_arm["gated_library"]["text"])
    cohorts = run.cohorts.filter(pl.col("role") == "incumbent").filter(pl.col("round") == 0)
    acc = cohorts.filter(pl.col("arm") == "accuracy_library").sort("cohort")["accuracy"]
    gated = cohorts.filter(pl.col("arm") == "gated_library").sort("cohort")["accuracy"]
    assert acc.to_list() == gated.to_list()  # same incumbent, same cohorts
    assert arm_seed("accuracy_library", 0) != arm_seed("gated_library", 0)
    assert arm_seed("accuracy_library", 0) == arm_seed("accuracy_library", 0)


def test_arms_and_seeds_side_by_side_give_the_serial_run_s_tables(tmp_path):
    """On a backend that serves concurrent requests every seed's arms and GEPA run side by
    side (cogrsi_lib/llm/together.py): the same requests, and every table equal to the run
    one loop after another."""
    import threading

    from cogrsi_lib.llm import ScriptedBackend
    from cogrsi_lib.loops.devdata import pair_items
    from cogrsi_lib.loops.scripted import ScriptedWorld

    arms = ["accuracy_loop", "gated_library", "single_principle"] + (
        ["gepa"] if gepa_available()[0] else [])
    cfg = load("loops", {**TINY, "seeds": [0, 1], "arms": arms, "rounds": 1,
                         "gepa_budget": 16})
    data = stage_data(cfg)
    world = ScriptedWorld(data.pool + pair_items(data.gate) + pair_items(data.eval))
    runs, threads, prompts = {}, {}, {}
    for together in (False, True):
        seen: set[str] = set()

        def respond(job, seen=seen):
            seen.add(threading.current_thread().name)
            return world(job)

        backend = ScriptedBackend(respond, model="scripted-world", concurrent=together)
        runs[together] = run_stage(cfg, data, tmp_path / str(together), backend)
        threads[together], prompts[together] = seen, sorted(
            repr((j.request.messages_dicts(), j.request.params)) for j in backend.jobs)
    assert threads[False] == {"MainThread"}
    assert len(threads[True]) > 1 and "MainThread" not in threads[True]
    assert prompts[True] == prompts[False]
    for name in ("rounds", "candidates", "cohorts", "replies", "records", "heldout",
                 "gate_pairs", "eval_pairs", "gepa", "principles"):
        a, b = getattr(runs[False], name), getattr(runs[True], name)
        assert a.height > 0 or name == "gepa" and "gepa" not in arms, name
        assert a.equals(b), name
