"""The audit-in-registration arm: the semantic audit as a registration gate (CogRSI §6)."""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest

from cogrsi_lib.loops import gates as gates_mod
from cogrsi_lib.loops.arms import builtin_arms
from cogrsi_lib.loops.builder import Builder
from cogrsi_lib.loops.engine import Loop, LoopSettings
from cogrsi_lib.loops.gates import (
    AuditRegistrationGate,
    CandidateView,
    GateUnavailable,
    audit_gate_from_params,
)
from cogrsi_lib.loops.slot import Scorer

from .helpers import TableSystem, pool, routing_builder

audit = pytest.importorskip("cogrsi_lib.audit.gate", reason="cogrsi_lib.audit is not available")
from cogrsi_lib.audit.handwritten import IN_ROOM, NOTHING_REACHED  # noqa: E402

SCRIPTED = {"n_worlds": 150, "seed": 7,
            "translators": [{"name": "A", "model": "scripted"}, {"name": "B", "model": "scripted"}],
            "limits": {"wall_s": 60, "cpu_s": 10, "memory_mb": 512}}


@pytest.fixture(scope="module")
def gate() -> AuditRegistrationGate:
    return AuditRegistrationGate(params=SCRIPTED)


def split(text: str) -> tuple[str, str]:
    cond, rule = text[len("When "):].split(": ", 1)
    return cond, rule


def test_the_audit_gate_rejects_an_invalid_rule_and_passes_a_valid_one(gate):
    bad = gate.check(CandidateView("p", IN_ROOM.text, "add"), "")
    assert not bad.passed and bad.record["verdict"] == "invalid" and bad.gain is None
    good = gate.check(CandidateView("p", NOTHING_REACHED.text, "add"), "")
    assert good.passed and good.record["verdict"] == "valid"
    assert gate.check(CandidateView("p", "", "retire"), "").passed  # nothing written


def test_audit_library_arm_blocks_the_invalid_rule(tmp_path, gate):
    bad_c, bad_r = split(IN_ROOM.text)
    good_c, good_r = split(NOTHING_REACHED.text)
    replies = {"g1": json.dumps({"diagnosis": "d", "operation": "add", "entry": None,
                                 "condition": bad_c, "rule": bad_r}),
               "g2": json.dumps({"diagnosis": "d", "operation": "add", "entry": None,
                                 "condition": good_c, "rule": good_r})}
    replies["g3"] = replies["g2"]

    def correct(p, it):  # the invalid rule helps more on trial accuracy
        h = int(hashlib.sha256(it.item_id.encode()).hexdigest()[:8], 16) % 10
        return h < 8 if "really is" in p else (h < 6 if "where it started" in p else h < 3)

    arm = builtin_arms()["audit_library"]
    fake_cf = type("Pass", (), {"name": "counterfactual",
                                "check": lambda self, c, i: gates_mod.GateResult(
                                    "counterfactual", True, 0.0)})()
    loop = Loop(arm, LoopSettings(rounds=1, discovery_size=30, trial_size=30), seed=0,
                scorer=Scorer(TableSystem(correct)), builder=Builder(routing_builder(replies)),
                pool=pool(n_stories=150), run_dir=tmp_path,
                gates={"counterfactual": fake_cf, "audit": gate})
    res = loop.run()
    cands = res.table("candidates")
    assert res.table("replies")["status"].to_list() == ["ok"] * 3, res.table("replies")
    bad = cands.filter(pl.col("written") == IN_ROOM.text).row(0, named=True)
    good = cands.filter(pl.col("written") == NOTHING_REACHED.text).row(0, named=True)
    assert cands.filter(pl.col("written") == NOTHING_REACHED.text).height == 2
    assert bad["mean_gain"] > good["mean_gain"] >= 3.0
    assert bad["reason"] == "gate" and not bad["admitted"]
    assert good["admitted"] and res.principle == f"(1) {NOTHING_REACHED.text}"
    audit_rec = [g for g in json.loads(bad["gates_json"]) if g["gate"] == "audit"][0]
    assert audit_rec["record"]["verdict"] == "invalid"


def test_a_missing_audit_is_a_clear_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_audit(name, *a, **kw):
        if name.startswith("cogrsi_lib.audit"):
            raise ImportError("no audit here")
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_audit)
    with pytest.raises(GateUnavailable, match="drop 'audit'"):
        audit_gate_from_params(SCRIPTED)


def test_audit_settings_are_checked():
    with pytest.raises(ValueError, match="unknown key 'loops.audit.colour'"):
        audit_gate_from_params({**SCRIPTED, "colour": 1})
    with pytest.raises(ValueError, match="'loops.audit.translators': Field required"):
        audit_gate_from_params({"n_worlds": 5})
    with pytest.raises(ValueError, match=r"unknown key 'loops\.audit\.translators\.1\.llm'"):
        audit_gate_from_params({**SCRIPTED, "translators": [{"name": "A"}, {"llm": {}}]})


def test_the_stage_runs_the_audit_arm_as_a_configuration(tmp_path):
    from cogrsi_lib.loops.stage import run_stage, stage_data
    from cogrsi_lib.stage_params import load

    cfg = load("loops", {
        "arms": ["audit_library"], "seeds": [0], "rounds": 3, "discovery_size": 8,
        "trial_size": 8, "final_size": 8, "heldout_size": 4, "dev_stories": 50,
        "model": "scripted", "audit": SCRIPTED, "gate_all": True,
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 6,
                  "n_gate_dialogue": 4, "n_eval_narrative": 2, "n_eval_dialogue": 2}})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    cands = run.candidates
    assert cands.height and cands["gates_run"].all()
    audits = [next(g for g in json.loads(j) if g["gate"] == "audit") for j in cands["gates_json"]]
    assert all("verdict" in a["record"] or "skipped" in a["record"] for a in audits)
    for row, a in zip(cands.iter_rows(named=True), audits, strict=True):
        if a["record"].get("verdict") == "invalid":
            assert not a["passed"] and not row["admitted"]
