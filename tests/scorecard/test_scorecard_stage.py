"""The scorecard stage: parameters, frozen items, backends, and the notebook's build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogrsi_lib.llm import Request, ScriptedBackend
from cogrsi_lib.llm.fake import ScriptedSpec, prompt_text
from cogrsi_lib.llm.spec import parse_model
from cogrsi_lib.scorecard import decision_table, stage
from cogrsi_lib.scorecard.params import ScorecardParams
from cogrsi_lib.scorecard.scripted import UNSURE, ScriptedModel, prompt_kind
from cogrsi_lib.stage_params import StageParamsError, load

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"n_per_cell": 3, "n_per_game": 1, "selfpred_test": 2, "observation_counts": [0, 5],
         "bootstrap_resamples": 100}


def settings(given: dict | None = None) -> ScorecardParams:
    """The stage's parameters, checked once by its schema."""
    return load("scorecard", given)


def test_parameters_are_checked() -> None:
    p = settings(SMALL)
    assert p.n_per_cell == 3 and p.model == ScriptedSpec()
    assert p.alt_model == ScriptedSpec(variant="alt")
    assert p.cross_model == ScriptedSpec(variant="other")
    with pytest.raises(StageParamsError, match="unknown key 'n_per_cel'"):
        settings({"n_per_cel": 3})
    with pytest.raises(StageParamsError, match="unknown interventions"):
        settings({"interventions": ["telepathy"]})
    with pytest.raises(StageParamsError, match="cannot replicate"):
        settings({"model": "embedded"})
    assert settings({"model": "embedded", "alt_model": None}).alt_model is None
    with pytest.raises(StageParamsError, match="unknown key 'gates.min_gain'"):
        settings({"gates": {"min_gain": 1}})
    with pytest.raises(StageParamsError, match="unknown key 'reply_caps.cot'"):
        settings({"reply_caps": {"cot": 10}})
    with pytest.raises(StageParamsError, match="'reply_caps.bare': Input should be greater"):
        settings({"reply_caps": {"bare": 0}})
    with pytest.raises(StageParamsError, match="cross_temperature"):
        settings({"cross_temperature": -1})
    with pytest.raises(StageParamsError, match="would be the self target"):
        settings({"model": "embedded", "alt_model": None, "cross_model": "embedded"})
    # the same model however it is written: a bare kind is the kind with its defaults
    with pytest.raises(StageParamsError, match="would be the self target"):
        settings({"model": "embedded", "alt_model": None,
                "cross_model": {"backend": "embedded", "max_batch": 16}})
    assert settings({"model": "embedded", "alt_model": None,
                   "cross_model": "embedded", "cross_temperature": 1})
    cfg = settings({"gates": {"deep_depths": [3, 4]}, "bootstrap_resamples": 77}).gate_config()
    assert cfg.deep_depths == (3, 4) and cfg.n_resamples == 77
    assert settings({"gates": {"n_resamples": 5}}).gate_config().n_resamples == 5
    # a partial mapping keeps the other defaults
    caps = settings({"reply_caps": {"bare": 30}}).reply_caps
    assert (caps.bare, caps.perspective, caps.store) == (30, 160, 320)


def test_scripted_variants_are_the_stages_own() -> None:
    assert settings({"alt_model": {"backend": "scripted", "variant": "alt"}})
    with pytest.raises(StageParamsError, match=r"'model': unknown scripted variant 'other'"):
        settings({"model": {"backend": "scripted", "variant": "other"}})
    with pytest.raises(StageParamsError, match=r"'cross_model': unknown scripted variant"):
        settings({"cross_model": {"backend": "scripted", "variant": "twin"}})
    with pytest.raises(StageParamsError, match="'model': unknown backend"):
        settings({"model": "scripted-alt"})  # the old name of a variant is no kind
    frozen = stage.freeze(settings(SMALL))
    with pytest.raises(ValueError, match="unknown scripted variant 'other' here"):
        stage.make_backend(ScriptedSpec(variant="other"), frozen)


def test_params_yaml_section_matches_the_stage() -> None:
    import yaml

    section = yaml.safe_load((ROOT / "params.yaml").read_text())["scorecard"]
    # every knob but the design's: `model` is the one-model matrix of `models`
    assert set(ScorecardParams.model_fields) - set(section) == {"models", "runs"}
    assert set(section) <= set(ScorecardParams.model_fields)
    settings(section)


def test_freeze_is_deterministic_and_replication_is_new() -> None:
    p = settings(SMALL)
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

    p = settings(SMALL | {"cross_model": {"backend": "fake", "reply": "x"},
                        "cross_temperature": 0.7, "reply_caps": {"bare": 30}})
    frozen = stage.freeze(p)
    # the scripted model plays the predictor; the target is a real backend (here a fake one
    # that answers the last option only when told to)
    last = '{"answer": "yellow", "confidence": 0.9}'
    target = ScriptedBackend(lambda job: last if stage.CHANGED_POLICY in prompt_text(job)
                             else '{"answer": "red", "confidence": 0.9}', model="target-m")
    with_targets = stage.attach_targets(frozen, target, p.cross_temperature, 30)
    (cross,) = with_targets.suites.cross_targets
    assert cross.description == ("another system (target-m, sampling at temperature 0.7), "
                                 "asked the task directly")
    assert with_targets.suites.changed["other"].description == cross.description
    predictor = make_variant("bare", stage.make_backend(parse_model("scripted"), frozen))
    ledger = run_selfpred(predictor, [cross], with_targets.suites.selfpred,
                          with_targets.suites.changed)
    df = score_selfpred(ledger).ledger
    assert set(df.filter(df["phase"] == "learning")["actual"]) == {"red"}
    assert set(df.filter(df["phase"] == "after_change")["actual"]) == {"yellow"}
    params = {(j.request.params.temperature, j.request.params.max_tokens,
               j.request.messages[0].role) for j in target.jobs}
    assert params == {(0.7, 30, "user"), (0.7, 30, "system")}
    # the stage reuses the predictor's backend when the target is its own model
    same = settings({"model": {"backend": "fake", "reply": "x"}, "alt_model": None,
                   "cross_model": {"backend": "fake", "reply": "x"}, "cross_temperature": 1})
    model = stage.make_backend(same.model, frozen)
    assert stage.cross_backend(same, frozen, model) is model
    assert stage.cross_backend(p, frozen, model) is not model
    assert stage.cross_backend(settings(SMALL), frozen, model) is None


def test_backends() -> None:
    p = settings(SMALL)
    frozen = stage.freeze(p)
    assert stage.make_backend(None, frozen) is None
    assert stage.make_backend(p.model, frozen).identity == "fake:scripted"
    assert stage.make_backend(p.alt_model, frozen).identity == "fake:scripted-alt"
    fake = stage.make_backend(parse_model({"backend": "fake", "reply": "x"}), frozen)
    assert fake.identity == "fake:scripted"
    with pytest.raises(ValueError, match="unknown backend"):
        parse_model("gpt-telepathy")


def test_stage_end_to_end_on_the_scripted_model() -> None:
    p = settings(SMALL)
    frozen = stage.attach_targets(stage.freeze(p))
    backend = stage.make_backend(p.model, frozen)
    variants = stage.variants_for(p)
    runs = stage.run_variants(backend, frozen.suites, variants)
    seed_runs = stage.run_variants(backend, frozen.replication, variants)
    alt = stage.make_backend(p.alt_model, frozen)
    model_runs = stage.run_variants(alt, frozen.core(), variants)
    a = stage.check_gate_a(frozen, list(runs.values()))
    decisions = [stage.decide(n, runs, stage.replications_for(n, seed_runs, model_runs, "s",
                                                              "m"), a, stage.gate_config(p))
                 for n in p.interventions]
    assert [d.intervention for d in decisions] == ["perspective", "store"]
    assert all(len(d.outcomes) == 5 for d in decisions)
    summary = stage.summary_json([], decisions)
    assert json.dumps(summary) and summary["decisions"][0]["intervention"] == "perspective"
    # without the alternate model Gate D is not run, so nothing can be kept
    no_alt = stage.decide("perspective", runs,
                          stage.replications_for("perspective", seed_runs, None, "s", ""), a,
                          stage.gate_config(p))
    d = {c.check: c.status for c in no_alt.outcomes[3].checks}
    assert d["replication on an alternate model or backend"] == "not_run"
    assert no_alt.outcomes[3].status != "pass" and not no_alt.keep


def test_models_run_side_by_side_on_the_same_frozen_items() -> None:
    """``models: [...]`` scores each model on the same items: its own runs, Gate D
    replications and decisions; one model is the one-model matrix, and runs stay one."""
    two = [{"backend": "scripted"}, {"backend": "scripted", "variant": "alt"}]
    p = settings({**SMALL, "models": two})
    assert p.model_list() == [ScriptedSpec(), ScriptedSpec(variant="alt")]
    with pytest.raises(StageParamsError, match="not both"):
        settings({**SMALL, "model": "scripted", "models": two})
    with pytest.raises(StageParamsError, match="greedy"):
        settings({**SMALL, "runs": 2})
    with pytest.raises(StageParamsError, match="cannot replicate"):
        settings({**SMALL, "models": [*two, "embedded"]})
    frozen = stage.freeze(p)
    alt = stage.alternate(p, frozen)
    cards = [stage.score_model(p, frozen, spec, alt) for spec in p.model_list()]
    assert [c.model for c in cards] == ["scripted", "scripted-alt"]
    assert all(c.frozen.suites.nested == frozen.suites.nested for c in cards)
    assert all(c.frozen.suites.cross_targets for c in cards)
    # the alternate answers the items every model shares, once for all of them
    assert all(c.frozen.core() == frozen.core() for c in cards)
    assert all(c.model_runs is alt.runs for c in cards) and set(alt.runs) == set(cards[0].runs)
    # the weaker alternate answers the same items differently
    acc = {c.model: c.runs["bare"].nested.score.accuracy for c in cards}
    assert acc["scripted"] != acc["scripted-alt"]
    table = stage.over_models(cards, lambda c: decision_table(c.decisions))
    assert table.columns[0] == "model"
    assert table["model"].to_list() == ["scripted"] * 2 + ["scripted-alt"] * 2
    # a single model is the same work as before: the decisions of the one-model matrix
    one = stage.score_model(settings(SMALL), frozen, ScriptedSpec(), alt)
    assert [d.summary() for d in one.decisions] == [d.summary() for d in cards[0].decisions]


def test_prompt_kinds_and_unknown_prompts() -> None:
    assert prompt_kind("hello") is None
    m = ScriptedModel()
    assert ScriptedBackend(m).generate_one(Request.of("Where is it?"))[0].text == UNSURE


def test_variants_side_by_side_give_the_serial_run_s_records() -> None:
    """On a backend that serves concurrent requests the variants run side by side
    (cogrsi_lib/llm/together.py): the same requests, the same records and ledgers."""
    import threading

    from cogrsi_lib.scorecard.runs import stage_records

    p = settings(SMALL)
    frozen = stage.attach_targets(stage.freeze(p))
    variants = stage.variants_for(p)
    out = {}
    for together in (False, True):
        backend = stage.make_backend(p.model, frozen)
        backend.concurrent = together
        seen: set[str] = set()
        respond = backend._responder
        backend._responder = lambda job, seen=seen, respond=respond: (
            seen.add(threading.current_thread().name) or respond(job))
        runs = stage.run_variants(backend, frozen.suites, variants)
        out[together] = (runs, seen, sorted(repr((j.request.messages_dicts(),
                                                  j.request.params)) for j in backend.jobs))
    (serial, one, asked), (side, many, asked_too) = out[False], out[True]
    assert one == {"MainThread"} and len(many) > 1
    assert asked == asked_too and list(serial) == list(side) == variants
    assert stage_records(serial).equals(stage_records(side))
    for v in variants:
        assert serial[v].selfpred.ledger.equals(side[v].selfpred.ledger), v
