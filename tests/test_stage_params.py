"""Stage schemas: beside their stages, typed at every depth, partial mappings over defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.stage_params import SCHEMAS, StageParamsError, load, schema

ROOT = Path(__file__).resolve().parents[1]


def test_each_schema_lives_beside_its_stage_and_loads_alone() -> None:
    for stage, entry in SCHEMAS.items():
        module, _, name = entry.partition(":")
        assert module.startswith("cogrsi_lib.") and module.endswith(".params"), stage
        assert schema(stage).__name__ == name and load(stage) == schema(stage)()
    with pytest.raises(StageParamsError, match="no parameter schema for stage 'x'"):
        load("x")


@pytest.mark.parametrize("stage,given,path", [
    ("reader_eval", {"model": {"backend": "fake", "backnd": "x"}}, "unknown key 'model.backnd'"),
    ("reader_eval", {"reader_config": {"n_plian": 1}}, "unknown key 'reader_config.n_plian'"),
    ("audit", {"translators": [{"model": {"backend": "vllm",
                                          "engine": {"max_model_len": "long"}}}, {}]},
     "'translators.0.model.engine.max_model_len': Input should be a valid integer"),
    ("audit", {"replay": {"model": {"backend": "embedded"}, "max_per_rul": 1}},
     "unknown key 'replay.max_per_rul'"),
    ("audit", {"registration": {"pairs": {"n_gate": 1}}},
     "unknown key 'registration.pairs.n_gate'"),
    ("audit", {"limits": {"wall": 1}}, "unknown key 'limits.wall'"),
    ("loops", {"shadow_audit": {"n_world": 1}}, "unknown key 'shadow_audit.n_world'"),
    ("loops", {"audit": {"translators": [{}, {}], "n_world": 1}}, "unknown key 'audit.n_world'"),
    ("harness", {"dev": {"budjet": 1}}, "unknown key 'dev.budjet'"),
    ("harness", {"harness_config": {"modules": ["skills"]}},
     "unknown key 'harness_config.modules'"),
    ("harness", {"agreement": {"max_depth": 0}}, "'agreement.max_depth': Input should be"),
    ("scorecard", {"gates": {"min_gain": 1}}, "unknown key 'gates.min_gain'"),
    ("pddl_mind", {"script": {"p_drops": 0.1}}, "unknown key 'script.p_drops'"),
    ("pddl_mind", {"variants": ["all"]}, "'variants.0': Input should be"),
    ("benchmarks", {"sample_sizes": {"S5": 1}}, "unknown key 'sample_sizes.S5'"),
    ("benchmarks", {"seeds": {"S1": "x"}}, "'seeds.S1': Input should be a valid integer"),
    ("benchmarks", {"sample_sizes_by_benchmark": {"tomy": {"S2": 1}}}, "unknown benchmarks"),
    ("benchmarks", {"sample_sizes_by_benchmark": {"tomi": {"S9": 1}}},
     "'sample_sizes_by_benchmark.tomi.S9'"),
    ("train", {"eval_nested": {"n_per_cell": 3}}, "unknown key 'eval_nested.n_per_cell'"),
    ("train", {"eval_pairs": {"gate_seed": 3}}, "unknown key 'eval_pairs.gate_seed'"),
    ("train", {"eval_benchmarks": {"tomy": 1}}, "unknown benchmarks ['tomy']"),
    ("train", {"eval_traced": {"tomy": ["first"]}}, "unknown evaluation sets ['tomy']"),
    ("train", {"mix": {"answer.loud": 1.0}}, "unknown example families ['answer.loud']"),
    ("train", {"model": {"backend": "openai", "model": "m", "base_url": "http://x/v1"}},
     "cannot serve the trained adapter"),
    ("train", {"lora": {"rank": 4}}, "unknown key 'lora.rank'"),
])
def test_a_bad_key_at_any_depth_is_refused_by_its_full_path(stage, given, path) -> None:
    with pytest.raises(StageParamsError) as err:
        load(stage, given)
    assert str(err.value).startswith(f"stage '{stage}': ") and path in str(err.value)


@pytest.mark.parametrize("stage,key", [("reader_eval", "model"), ("harness", "model"),
                                       ("train", "model")])
def test_a_model_without_a_stand_in_refuses_scripted(stage, key) -> None:
    with pytest.raises(StageParamsError, match=f"'{key}': no scripted stand-in here"):
        load(stage, {key: "scripted"})
    with pytest.raises(StageParamsError, match="'replay.model': no scripted stand-in"):
        load("audit", {"replay": {"model": "scripted"}})


def test_a_partial_nested_mapping_keeps_the_schemas_other_defaults() -> None:
    defaults = load("reader_eval")
    p = load("reader_eval", {"reader_config": {"arbitration_max_tokens": 9},
                             "pairs": {"n_eval_dialogue": 2}})
    assert p.reader_config.arbitration_max_tokens == 9
    assert p.reader_config.model_dump(exclude={"arbitration_max_tokens"}) == \
        defaults.reader_config.model_dump(exclude={"arbitration_max_tokens"})
    assert (p.pairs.eval_seed, p.pairs.n_eval_narrative, p.pairs.n_eval_dialogue) == (
        defaults.pairs.eval_seed, defaults.pairs.n_eval_narrative, 2)
    # two levels down: the study's pair splits keep the stage's defaults, not the class's
    loops = load("loops")
    deep = load("loops", {"shadow_study": {"pairs": {"n_gate_dialogue": 1}}})
    assert deep.shadow_study.pairs.n_gate_dialogue == 1
    assert deep.shadow_study.pairs.model_dump(exclude={"n_gate_dialogue"}) == \
        loops.shadow_study.pairs.model_dump(exclude={"n_gate_dialogue"})
    assert deep.shadow_study.model_dump(exclude={"pairs"}) == \
        loops.shadow_study.model_dump(exclude={"pairs"})
    harness = load("harness", {"dev": {"rounds": 2}, "agreement": {"n_worlds": 7}})
    assert harness.dev.model_dump(exclude={"rounds"}) == \
        load("harness").dev.model_dump(exclude={"rounds"})
    assert (harness.agreement.seed, harness.agreement.max_depth) == (
        load("harness").agreement.seed, load("harness").agreement.max_depth)
    audit = load("audit", {"replay": {"n_controls": 1}, "registration": {"rounds": 1}})
    assert audit.replay.model == load("audit").replay.model
    assert audit.registration.seeds == load("audit").registration.seeds


KEYS = ("gate_seed", "eval_seed", "n_gate_narrative", "n_gate_dialogue", "n_eval_narrative",
        "n_eval_dialogue")


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(KEYS), st.integers(0, 200), max_size=len(KEYS)))
def test_pair_splits_given_in_part_are_the_defaults_but_those_keys(part) -> None:
    default = load("loops").pairs.model_dump()
    merged = {**default, **part}
    if merged["gate_seed"] == merged["eval_seed"]:
        with pytest.raises(StageParamsError, match="different seeds"):
            load("loops", {"pairs": part})
        return
    for split in ("gate", "eval"):
        if merged[f"n_{split}_narrative"] + merged[f"n_{split}_dialogue"] < 1:
            with pytest.raises(StageParamsError, match=f"the {split} split would be empty"):
                load("loops", {"pairs": part})
            return
    assert load("loops", {"pairs": part}).pairs.model_dump() == merged


def test_the_loops_shadow_study_takes_the_sections_own_settings_unless_given() -> None:
    p = load("loops", {"dev_situations": "oracle", "delta": 2.0, "gate_tolerance": 5,
                       "shadow_study": {"min_nonneg": 1}})
    study = p.study()
    assert (study.dev_situations, study.delta, study.gate_tolerance, study.min_nonneg) == (
        "oracle", 2.0, 5, 1)
    assert study.rounds == load("loops").shadow_study.rounds
    assert load("loops", {"shadow_study": None}).study() is None


def test_the_gpu_setting_keeps_the_papers_reader_caps() -> None:
    """``reader_config: {}`` meant the reader's own caps; given in part it would now keep the
    stage's small ones, so the GPU file names the paper's caps."""
    from cogrsi_lib.reader.reader import ReaderConfig

    gpu = yaml.safe_load((ROOT / "params.gpu.yaml").read_text())
    p = load("reader_eval", gpu["reader_eval"])
    assert p.reader() == ReaderConfig(structured=p.structured)
    loops = load("loops", gpu["loops"])
    assert loops.audit is not None and [t.model for t in loops.audit.translators] == [
        t.model for t in load("audit", gpu["audit"]).translators]


@pytest.mark.parametrize("stage,given,message", [
    ("pairs", {"n_eval_narrative": True}, "'n_eval_narrative': must be a whole number, not true"),
    ("pairs", {"n_eval_narrative": -5}, "'n_eval_narrative': Input should be greater than"),
    ("loops", {"rounds": -1}, "'rounds': must not be negative"),
    ("reader_eval", {"n_pairs": False}, "'n_pairs': must be a whole number, not true"),
    ("train", {"sft": {"bf16": "yes"}}, "'sft.bf16': must be true or false"),
    ("train", {"sft": {"bf16": 1}}, "'sft.bf16': must be true or false"),
    ("loops", {"eval_pairs": "false"}, "'eval_pairs': must be true or false"),
    ("train", {"false_belief_share": 1.5}, "'false_belief_share'"),
    ("audit", {"max_failed_share": -0.1}, "'max_failed_share'"),
    ("pairs", {"n_eval_narrative": 0, "n_eval_dialogue": 0}, "the eval split would be empty"),
    ("pairs", {"n_gate_narrative": 0, "n_gate_dialogue": 0}, "the gate split would be empty"),
    # lists that mean nothing empty
    ("reader_eval", {"systems": []}, "'systems': List should have at least 1 item"),
    ("reader_eval", {"benchmarks": []}, "'benchmarks': List should have at least 1 item"),
    ("benchmarks", {"systems": []}, "'systems': List should have at least 1 item"),
    ("harness", {"ablations": []}, "'ablations': List should have at least 1 item"),
    ("loops", {"arms": []}, "'arms': List should have at least 1 item"),
    ("loops", {"seeds": []}, "'seeds': List should have at least 1 item"),
    ("pddl_mind", {"variants": []}, "'variants': List should have at least 1 item"),
    ("scorecard", {"applied_depths": []}, "'applied_depths': List should have at least 1 item"),
    ("scorecard", {"observation_counts": []}, "'observation_counts': List should have at least"),
    ("train", {"depth_weights": []}, "'depth_weights': List should have at least 1 item"),
])
def test_values_that_make_no_sense_are_refused_by_key(stage, given, message) -> None:
    with pytest.raises(StageParamsError) as err:
        load(stage, given)
    assert message in str(err.value)


def test_sensible_values_pass_unchanged() -> None:
    p = load("pairs", {"n_eval_narrative": 0, "n_eval_dialogue": 3, "n_gate_narrative": 1})
    assert (p.n_eval_narrative, p.n_eval_dialogue, p.n_gate_narrative) == (0, 3, 1)
    assert load("train", {"sft": {"bf16": True}, "threads": None}).sft.bf16 is True
    assert load("audit", {"max_failed_share": 1}).max_failed_share == 1.0
