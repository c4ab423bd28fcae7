"""Shadow registration: the replay of logged evidence under each rule, and Figure 7's tables."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib.loops import shadow
from cogrsi_lib.loops.arms import builtin_arms
from cogrsi_lib.loops.stage import run_shadow_study, run_stage, stage_data
from cogrsi_lib.stage_params import load
from cogrsi_lib.stats import wilson, wilson_bounds

from .test_loops_stage import TINY

RULES = shadow.shadow_rules(3.0, 2, 1.0)


def _cand(c, gains, gate=None, written="t", arm="a", rnd=0, admitted=False):
    g = None if gate is None else json.dumps([{"gate": "counterfactual", "passed": gate[0],
                                               "gain": gate[1], "record": {}}])
    return {"arm": arm, "seed": 0, "round": rnd, "candidate": c, "gains": gains,
            "mean_gain": sum(gains) / len(gains), "written": written, "gates_json": g,
            "shadow_gates_json": g, "admitted": admitted}


def test_each_rule_keeps_what_its_definition_says():
    cands = pl.DataFrame([
        _cand(0, [5.0, -2.0, 0.0], (True, 0.0), "one-point only"),   # mean 1, one cohort < 0
        _cand(1, [4.0, 3.0, -1.0], (False, -3.0), "strict, fails gate"),  # mean 2: below 3
        _cand(2, [5.0, 5.0, -1.0], (False, -4.0), "three-point, fails gate"),
        _cand(3, [4.0, 4.0, 4.0], (True, 1.0), "three-point and gate"),
        _cand(4, [6.0, 6.0, 6.0], None, "gate never logged"),
    ])
    out = shadow.replay(cands, RULES)
    kept = {r: set(out.filter((pl.col("rule") == r) & pl.col("kept"))["candidate"])
            for r in out["rule"].unique()}
    assert kept["1-point margin"] == {0, 1, 2, 3, 4}
    assert kept["3-point margin"] == {2, 3, 4}
    assert kept["gate"] == {3}
    wins = out.filter(pl.col("wins"))
    assert dict(zip(wins["rule"], wins["candidate"], strict=True)) == {
        "1-point margin": 4, "3-point margin": 4, "gate": 3}
    assert not out.filter(pl.col("candidate") == 4)["gate_logged"].to_list()[2]


def test_figure7_tables_count_by_verdict():
    cands = pl.DataFrame([
        _cand(0, [2.0, 2.0, 2.0], (True, 0.0), "valid rule"),
        _cand(1, [4.0, 4.0, 4.0], (True, 0.0), "invalid rule"),
        _cand(2, [-1.0, -1.0, -1.0], (True, 0.0), "invalid rule", rnd=1),
        _cand(3, [4.0, 4.0, 4.0], (False, -5.0), "ambiguous rule", rnd=2),
    ])
    verdicts = pl.DataFrame({"text": ["valid rule", "invalid rule", "ambiguous rule"],
                             "verdict": ["valid", "invalid", "ambiguous"]})
    f7a = shadow.kept_validity(shadow.with_verdicts(shadow.replay(cands, RULES), verdicts))
    row = {r["rule"]: r for r in f7a.to_dicts()}
    assert (row["1-point margin"]["kept"], row["1-point margin"]["decided"],
            row["1-point margin"]["invalid"]) == (3, 2, 1)
    assert row["3-point margin"]["invalid_share"] == 100.0 and row["3-point margin"]["kept"] == 2
    assert row["gate"]["kept"] == 1 and row["gate"]["decided"] == 1
    assert row["1-point margin"]["ambiguous"] == 1 and row["gate"]["ambiguous"] == 0
    lo, hi = row["1-point margin"]["ci_low"], row["1-point margin"]["ci_high"]
    assert lo < 50.0 < hi
    f7b = shadow.gain_by_validity(shadow.with_verdicts(cands, verdicts), n_boot=200)
    means = dict(zip(f7b["verdict"], f7b["mean_gain"], strict=True))
    assert means["valid"] == 2.0 and means["invalid"] == 1.5
    assert means["valid - invalid"] == pytest.approx(0.5)
    diff = f7b.filter(pl.col("verdict") == "valid - invalid").to_dicts()[0]
    assert diff["tv_distance"] == 1.0 and diff["min_error_sum"] == 0.0


def test_total_variation_and_wilson():
    assert shadow.total_variation([0.0, 1.0], [0.0, 1.0]) == 0.0
    assert shadow.total_variation([0.0, 0.0, 1.0, 2.0], [0.0, 1.0]) == pytest.approx(0.25)
    lo, hi = wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert wilson(0, 0) == (None, None)
    # a chart's bar: the share times n, rounded, and nothing measured at n = 0
    assert wilson_bounds([0.5, 0.3], [10, 0]) == ([lo, 0.0], [hi, 1.0])


def test_shadow_replay_reproduces_the_live_decisions_of_a_real_stage(tmp_path):
    arms = ["accuracy_loop", "accuracy_library", "gated_library"]
    cfg = load("loops", {**TINY, "arms": arms, "rounds": 3, "shadow": True})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    c = run.candidates
    assert c.height > 0 and c["shadow_gates_json"].is_not_null().all()
    # the gated arm's own gate is the shadow gate: identical logged results where both ran
    g = c.filter(pl.col("arm") == "gated_library").filter(pl.col("gates_run"))
    assert g["gates_json"].to_list() == g["shadow_gates_json"].to_list()
    live = shadow.replay_live(c, {a.name: a for a in cfg.arm_configs()})
    assert live.height == c.select("arm", "seed", "round").unique().height
    assert live["agrees"].all()
    # against the rounds log, too: the replayed winner is the round's admitted candidate
    rounds = run.rounds.select("arm", "seed", "round", pl.col("admitted").alias("logged"))
    both = live.join(rounds, on=["arm", "seed", "round"])
    assert both.height == live.height
    assert both.select((pl.col("replayed").eq_missing(pl.col("logged"))).all()).item()
    assert (live["admitted"].is_not_null()).any()  # something was admitted and replayed
    # a wrong rule does not reproduce every decision: the replay is not vacuous
    loose = {a: builtin_arms(0.0, 0)["accuracy_library"] for a in arms}
    assert not shadow.replay_live(c, loose)["agrees"].all() or live["admitted"].is_null().all()


def test_without_shadow_no_gate_is_logged_for_ungated_arms(tmp_path):
    cfg = load("loops", {**TINY, "arms": ["accuracy_library"], "rounds": 1, "shadow": False})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    assert run.candidates.height > 0 and run.candidates["shadow_gates_json"].is_null().all()


def test_symbolic_study_gives_figure7_and_the_situation_split():
    cfg = load("loops", {**TINY, "shadow_study": {
        "arms": ["accuracy_library", "gated_library"], "seeds": [0], "rounds": 3,
        "dev_stories": 120, "final_size": 20,
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 6, "n_gate_dialogue": 6,
                  "n_eval_narrative": 4, "n_eval_dialogue": 4}},
        "shadow_audit": {"n_worlds": 120, "seed": 7}})
    study = run_shadow_study(cfg)
    assert study is not None and study.config.dev_situations == "exploretom"
    tables = shadow.figure7(study.candidates, study.verdicts, RULES,
                            builtin_arms(cfg.delta, cfg.min_nonneg, cfg.loose_delta),
                            rounds=study.rounds)
    assert tables["live"]["agrees"].all()
    f7c = tables["figure7c"]
    assert f7c.height == 2 * 3 and (f7c["seeds"] == 1).all()
    verdicts = ["invalid", "valid", "ambiguous", "vacuous", "unaudited"]
    assert (f7c.select(verdicts).sum_horizontal() == f7c["entries"]).all()
    # the entries are the kept library's, round by round
    sizes = study.rounds.sort("arm", "round")["new_size"].to_list()
    assert f7c.sort("arm", "round")["entries"].to_list() == sizes
    assert tables["figure7a"]["kept"].to_list()[0] >= tables["figure7a"]["kept"].to_list()[1]
    split = tables["invalid_situations"]
    inv = study.verdicts.filter(pl.col("verdict") == "invalid")
    assert split.height == inv.height + 1 and inv.height > 0
    pooled = split.row(-1, named=True)
    assert pooled["text"] is None
    assert pooled["inside_exploretom"] + pooled["outside_exploretom"] == pooled[
        "counterexamples"] > 0
    # the private-telling rule can only fail where someone is told something privately
    told = inv.filter(pl.col("text").str.contains("privately told"))
    assert told.height == 1 and told["only_outside"].item()
    assert run_shadow_study(load("loops", {**TINY, "shadow_study": None})) is None


def test_gain_difference_interval_follows_the_samples():
    def interval(valid, invalid):
        frame = pl.DataFrame({"verdict": ["valid"] * len(valid) + ["invalid"] * len(invalid),
                              "mean_gain": [float(g) for g in valid + invalid]})
        row = shadow.gain_by_validity(frame, n_boot=500).to_dicts()[-1]
        return row["mean_gain"], row["ci_low"], row["ci_high"]

    diff, lo, hi = interval([3, 4, 5, 4, 3, 5], [-1, 0, 1, 0, -1, 1])
    assert diff == pytest.approx(4.0) and 0 < lo < diff < hi
    diff, lo, hi = interval([0, 2, 0, 2, 1, 1], [2, 0, 1, 1, 0, 2])
    assert diff == 0.0 and lo < 0 < hi
    assert interval([0, 2, 4], [1, 2, 3]) == interval([0, 2, 4], [1, 2, 3])  # seeded
    diff, lo, hi = interval([2], [0, 1])  # one valid candidate: a mean, no interval
    assert diff == pytest.approx(1.5) and lo is None and hi is None


def test_figure7_of_a_loops_run_s_own_candidates_with_the_audit_s_verdicts(tmp_path):
    from cogrsi_lib.loops.stage import write_logs

    cfg = load("loops", {**TINY, "arms": ["accuracy_library", "gated_library"], "rounds": 3,
                         "shadow": True})
    run = run_stage(cfg, stage_data(cfg), tmp_path)
    write_logs(run, tmp_path)
    replayed = shadow.replay(run.candidates, shadow.shadow_rules())
    replayed.write_parquet(tmp_path / shadow.REPLAY_FILE)
    texts = sorted(set(t for t in run.candidates["written"] if t))
    assert len(texts) >= 2
    verdicts = pl.DataFrame({"text": texts, "verdict": ["invalid" if k % 2 else "valid"
                                                        for k in range(len(texts))]})
    fig = shadow.audited_figure7(tmp_path, verdicts)
    for row in fig["figure7a"].iter_rows(named=True):
        kept = replayed.filter((pl.col("rule") == row["rule"]) & pl.col("kept"))
        of = dict(zip(verdicts["text"], verdicts["verdict"], strict=True))
        found = [of.get(t) if t else None for t in kept["written"]]
        assert row["kept"] == kept.height
        assert (row["invalid"], row["valid"]) == (found.count("invalid"), found.count("valid"))
    gains = fig["figure7b"].filter(pl.col("verdict") == "valid").row(0, named=True)
    valid = run.candidates.filter(pl.col("written").is_in(texts[0::2]))
    assert gains["n"] == valid.height
    assert fig["figure7c"].select("arm", "round").rows() == [
        (arm, r) for arm in ("accuracy_library", "gated_library") for r in range(3)]
    (tmp_path / shadow.REPLAY_FILE).unlink()
    with pytest.raises(FileNotFoundError, match="run the loops stage first"):
        shadow.audited_figure7(tmp_path, verdicts)
