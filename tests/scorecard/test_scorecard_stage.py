"""The scorecard stage: parameters, frozen items, backends, and the notebook's build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogrsi_lib.llm import Request, ScriptedBackend
from cogrsi_lib.llm.fake import prompt_text
from cogrsi_lib.scorecard import stage
from cogrsi_lib.scorecard.scripted import UNSURE, ScriptedModel, prompt_kind

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"n_per_cell": 3, "n_per_game": 1, "selfpred_test": 2, "observation_counts": [0, 5],
         "bootstrap_resamples": 100}


def test_parameters_are_checked() -> None:
    p = stage.stage_params(SMALL | {"out_dir": None})
    assert p["n_per_cell"] == 3 and p["model"] == "scripted"
    with pytest.raises(ValueError, match="unknown scorecard parameters"):
        stage.stage_params({"n_per_cel": 3})
    with pytest.raises(ValueError, match="unknown interventions"):
        stage.stage_params({"interventions": ["telepathy"]})
    with pytest.raises(ValueError, match="cannot replicate"):
        stage.stage_params({"model": "embedded"})
    assert stage.stage_params({"model": "embedded", "alt_model": None})["alt_model"] is None
    with pytest.raises(ValueError, match="unknown gate settings"):
        stage.stage_params({"gates": {"min_gain": 1}})
    with pytest.raises(ValueError, match="unknown reply caps"):
        stage.stage_params({"reply_caps": {"cot": 10}})
    with pytest.raises(ValueError, match="cross_temperature"):
        stage.stage_params({"cross_temperature": -1})
    with pytest.raises(ValueError, match="would be the self target"):
        stage.stage_params({"model": "embedded", "alt_model": None, "cross_model": "embedded"})
    assert stage.stage_params({"model": "embedded", "alt_model": None,
                               "cross_model": "embedded", "cross_temperature": 1})
    cfg = stage.gate_config(stage.stage_params({"gates": {"deep_depths": [3, 4]},
                                                "bootstrap_resamples": 77}))
    assert cfg.deep_depths == (3, 4) and cfg.n_resamples == 77


def test_params_yaml_section_matches_the_stage() -> None:
    import yaml

    section = yaml.safe_load((ROOT / "params.yaml").read_text())["scorecard"]
    assert set(section) == set(stage.DEFAULTS)
    stage.stage_params(section)


def test_freeze_is_deterministic_and_replication_is_new() -> None:
    p = stage.stage_params(SMALL)
    a, b = stage.freeze(p), stage.freeze(p)
    assert [i.id for i in a.suites.nested] == [i.id for i in b.suites.nested]
    assert [i.story for i in a.suites.nested] == [i.story for i in b.suites.nested]
    assert {i.story for i in a.suites.nested}.isdisjoint(i.story for i in a.replication.nested)
    assert a.integrity["passed"].all()
    assert a.core().strategic == () and a.core().selfpred is None
    with_targets = stage.attach_targets(a)
    assert [t.name for t in with_targets.suites.cross_targets] == ["other"]
    assert with_targets.suites.changed["other"].name == "other"


def test_a_real_cross_target_is_the_model_sampled_and_its_change_a_system_message() -> None:
    from cogrsi_lib.scorecard.selfpred import run_selfpred, score_selfpred
    from cogrsi_lib.scorecard.variants import make_variant

    p = stage.stage_params(SMALL | {"cross_model": {"backend": "fake", "reply": "x"},
                                    "cross_temperature": 0.7, "reply_caps": {"bare": 30}})
    frozen = stage.freeze(p)
    # the scripted model plays the predictor; the target is a real backend (here a fake one
    # that answers the last option only when told to)
    last = '{"answer": "yellow", "confidence": 0.9}'
    target = ScriptedBackend(lambda job: last if stage.CHANGED_POLICY in prompt_text(job)
                             else '{"answer": "red", "confidence": 0.9}', model="target-m")
    with_targets = stage.attach_targets(frozen, target, p["cross_temperature"], 30)
    (cross,) = with_targets.suites.cross_targets
    assert cross.description == ("another system (target-m, sampling at temperature 0.7), "
                                 "asked the task directly")
    assert with_targets.suites.changed["other"].description == cross.description
    predictor = make_variant("bare", stage.make_backend("scripted", frozen))
    ledger = run_selfpred(predictor, [cross], with_targets.suites.selfpred,
                          with_targets.suites.changed)
    df = score_selfpred(ledger).ledger
    assert set(df.filter(df["phase"] == "learning")["actual"]) == {"red"}
    assert set(df.filter(df["phase"] == "after_change")["actual"]) == {"yellow"}
    params = {(j.request.params.temperature, j.request.params.max_tokens,
               j.request.messages[0].role) for j in target.jobs}
    assert params == {(0.7, 30, "user"), (0.7, 30, "system")}
    # the stage reuses the predictor's backend when the target is its own model
    same = stage.stage_params({"model": {"backend": "fake", "reply": "x"}, "alt_model": None,
                               "cross_model": {"backend": "fake", "reply": "x"},
                               "cross_temperature": 1})
    model = stage.make_backend(same["model"], frozen)
    assert stage.cross_backend(same, frozen, model) is model
    assert stage.cross_backend(p, frozen, model) is not model
    assert stage.cross_backend(stage.stage_params(SMALL), frozen, model) is None


def test_backends() -> None:
    p = stage.stage_params(SMALL)
    frozen = stage.freeze(p)
    assert stage.make_backend(None, frozen) is None
    assert stage.make_backend("scripted", frozen).identity == "fake:scripted"
    assert stage.make_backend("scripted-alt", frozen).identity == "fake:scripted-alt"
    fake = stage.make_backend({"backend": "fake", "reply": "x"}, frozen)
    assert fake.identity == "fake:scripted"
    with pytest.raises(ValueError, match="unknown model"):
        stage.make_backend("gpt-telepathy", frozen)


def test_stage_end_to_end_on_the_scripted_model() -> None:
    p = stage.stage_params(SMALL)
    frozen = stage.attach_targets(stage.freeze(p))
    backend = stage.make_backend("scripted", frozen)
    variants = stage.variants_for(p)
    runs = stage.run_variants(backend, frozen.suites, variants)
    seed_runs = stage.run_variants(backend, frozen.replication, variants)
    alt = stage.make_backend("scripted-alt", frozen)
    model_runs = stage.run_variants(alt, frozen.core(), variants)
    a = stage.check_gate_a(frozen, list(runs.values()))
    decisions = [stage.decide(n, runs, stage.replications_for(n, seed_runs, model_runs, "s",
                                                              "m"), a, stage.gate_config(p))
                 for n in p["interventions"]]
    assert [d.intervention for d in decisions] == ["perspective", "store"]
    assert all(len(d.outcomes) == 5 for d in decisions)
    summary = stage.summary_json([], decisions)
    assert json.dumps(summary) and summary["decisions"][0]["intervention"] == "perspective"
    # without the alternate model Gate D is not run, so nothing can be kept
    no_alt = stage.decide("perspective", runs,
                          stage.replications_for("perspective", seed_runs, None, "s", ""), a,
                          stage.gate_config(p))
    assert no_alt.outcomes[3].status == "not_run" and not no_alt.keep


def test_prompt_kinds_and_unknown_prompts() -> None:
    assert prompt_kind("hello") is None
    m = ScriptedModel()
    assert ScriptedBackend(m).generate_one(Request.of("Where is it?"))[0].text == UNSURE
