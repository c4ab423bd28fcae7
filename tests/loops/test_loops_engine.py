"""The loop engine end to end with a table-driven system and scripted builders (CogRSI §4.2).

The cohort draws do not depend on what a loop admits, so :func:`schedule` tells the tests in
advance which questions each trial cohort holds, and the system's correctness is written per
cohort: gains are exact.
"""

from __future__ import annotations

import hashlib
import json

import polars as pl
import pytest

from cogrsi_lib.loops import logs
from cogrsi_lib.loops.arms import ArmConfig
from cogrsi_lib.loops.builder import Builder
from cogrsi_lib.loops.cohorts import schedule
from cogrsi_lib.loops.engine import Loop, LoopSettings
from cogrsi_lib.loops.gates import CandidateView, GateResult
from cogrsi_lib.loops.registration import RegistrationRule
from cogrsi_lib.loops.slot import Scorer

from .helpers import TableSystem, add_reply, hashed_builder, pool, routing_builder

SEED = 5
SETTINGS = LoopSettings(rounds=1, discovery_size=12, trial_size=10, n_trials=3)
POOL = pool(n_stories=120, per_story=2)
SCHED = schedule(POOL, SEED, 1, 12, 10, 3, 10)
T1, T2, T3 = ([it.item_id for it in t] for t in SCHED["rounds"][0]["trials"])
BASE = set(T1[:5] + T2[:5] + T3[:5])  # the incumbent is right on half of each cohort
SPIKE = set(T1) | set(T2[:4]) | set(T3[:4])  # +50, -10, -10: mean +10, one cohort >= 0
STEADY = BASE | {T1[5], T2[5], T3[5]}  # +10 on each cohort
TWIN = BASE | {T1[6], T2[6], T3[6]}  # the same gains with other questions
REPLIES = {"g1": add_reply("a spike case", "spike it."),
           "g2": add_reply("a steady case", "steady it."),
           "g3": add_reply("a twin case", "twin it.")}


def correct(principle: str, item) -> bool:
    for token, right in (("spike", SPIKE), ("steady", STEADY), ("twin", TWIN)):
        if token in principle:
            return item.item_id in right
    return item.item_id in BASE


class FakeGate:
    """A gate whose verdict and gain per candidate are given by a token of its principle."""

    name = "counterfactual"

    def __init__(self, table: dict[str, tuple[bool, float]]) -> None:
        self.table = table
        self.seen: list[str] = []

    def check(self, candidate: CandidateView, incumbent: str) -> GateResult:
        token = next(t for t in self.table if t in candidate.principle)
        self.seen.append(token)
        passed, gain = self.table[token]
        return GateResult(self.name, passed, gain, {"token": token})


def run(tmp_path, arm: ArmConfig, *, gates=None, replies=REPLIES, settings=SETTINGS):
    loop = Loop(arm, settings, seed=SEED, scorer=Scorer(TableSystem(correct)),
                builder=Builder(routing_builder(replies), seed=SEED), pool=POOL,
                run_dir=tmp_path / arm.name, gates=gates)
    res = loop.run()
    cands = res.table("candidates")
    token = {row["candidate"]: row["rule"].split()[0] for row in cands.iter_rows(named=True)}
    return res, cands, token


def by_token(cands: pl.DataFrame, token: str) -> dict:
    return next(r for r in cands.iter_rows(named=True) if r["rule"].startswith(token))


def test_gains_are_exact_and_the_cohort_rule_rejects_the_spike(tmp_path):
    arm = ArmConfig("acc", "library", RegistrationRule(3.0, 2))
    res, cands, token = run(tmp_path, arm)
    assert sorted(token.values()) == ["spike", "steady", "twin"]
    spike, steady, twin = (by_token(cands, t) for t in ("spike", "steady", "twin"))
    assert spike["gains"] == pytest.approx([50.0, -10.0, -10.0])
    assert steady["gains"] == pytest.approx([10.0, 10.0, 10.0]) == twin["gains"]
    assert spike["mean_gain"] == pytest.approx(steady["mean_gain"])  # same mean gain ...
    assert spike["reason"] == "cohort_rule" and not spike["admissible"]  # ... not admissible
    # steady and twin tie, there is no gate: the earlier candidate wins
    winner = min(steady["candidate"], twin["candidate"])
    assert cands.filter(pl.col("admitted"))["candidate"].to_list() == [winner]
    assert f"{token[winner]} it." in res.principle
    rounds = res.table("rounds")
    assert rounds["trial_correct"].to_list() == [[5, 5, 5]]
    assert rounds["admitted"].to_list() == [winner]
    inc = res.table("cohorts").filter((pl.col("role") == "incumbent")
                                      & pl.col("cohort").str.starts_with("trial"))
    assert inc["item_ids"].to_list() == [T1, T2, T3]


def test_without_the_cohort_rule_the_spike_ties_too(tmp_path):
    arm = ArmConfig("loose", "library", RegistrationRule(3.0, 0))
    _, cands, token = run(tmp_path, arm)
    assert cands["admissible"].all()
    assert cands.filter(pl.col("admitted"))["candidate"].to_list() == [min(token)]


def test_a_margin_above_the_gain_admits_nothing(tmp_path):
    arm = ArmConfig("strict", "library", RegistrationRule(10.01, 2))
    res, cands, _ = run(tmp_path, arm)
    assert not cands["admitted"].any() and set(cands["reason"]) == {"below_margin"}
    assert res.principle == ""


def test_ties_are_broken_by_the_gate_gain(tmp_path):
    arm = ArmConfig("gated", "library", RegistrationRule(3.0, 2), ("counterfactual",))
    gate = FakeGate({"spike": (True, 9.0), "steady": (True, 1.0), "twin": (True, 5.0)})
    res, cands, _ = run(tmp_path, arm, gates={"counterfactual": gate})
    assert by_token(cands, "twin")["admitted"]
    assert by_token(cands, "twin")["gate_gain"] == pytest.approx(5.0)
    assert "spike" not in gate.seen  # the gate runs only on accuracy-admissible candidates
    assert by_token(cands, "spike")["reason"] == "cohort_rule"
    gates = json.loads(by_token(cands, "twin")["gates_json"])
    assert gates[0]["record"] == {"token": "twin"}


def test_a_failed_gate_blocks_the_tie_winner(tmp_path):
    arm = ArmConfig("gated", "library", RegistrationRule(3.0, 2), ("counterfactual",))
    gate = FakeGate({"spike": (True, 0.0), "steady": (True, -1.0), "twin": (False, 5.0)})
    _, cands, _ = run(tmp_path, arm, gates={"counterfactual": gate})
    assert by_token(cands, "steady")["admitted"]
    assert by_token(cands, "twin")["reason"] == "gate"
    assert by_token(cands, "twin")["passes_gates"] is False


def test_gate_all_runs_the_gate_on_every_candidate(tmp_path):
    arm = ArmConfig("gated", "library", RegistrationRule(3.0, 2), ("counterfactual",))
    gate = FakeGate({"spike": (True, 0.0), "steady": (True, 0.0), "twin": (True, 0.0)})
    s = LoopSettings(rounds=1, discovery_size=12, trial_size=10, n_trials=3, gate_all=True)
    _, cands, _ = run(tmp_path, arm, gates={"counterfactual": gate}, settings=s)
    assert sorted(gate.seen) == ["spike", "steady", "twin"] and cands["gates_run"].all()


def test_rejected_builder_replies_are_logged_and_never_scored(tmp_path):
    bad = {"g1": "The reader should look harder.",
           "g2": add_reply("a character leaves", " ".join(["word"] * 60)),
           "g3": add_reply("a character leaves", "Mia keeps her belief.")}
    system = TableSystem(correct)
    loop = Loop(ArmConfig("acc", "library"), SETTINGS, seed=SEED, scorer=Scorer(system),
                builder=Builder(routing_builder(bad), seed=SEED), pool=POOL,
                run_dir=tmp_path / "bad")
    res = loop.run()
    replies = res.table("replies")
    assert sorted(replies["reason"].to_list()) == ["malformed_json", "names_story", "too_long"]
    assert replies["candidate"].is_null().all()
    assert replies.filter(pl.col("reason") == "malformed_json")["text"].to_list() == [bad["g1"]]
    assert res.table("candidates").height == 0 and res.principle == ""
    r = res.table("rounds").row(0, named=True)
    assert (r["n_replies"], r["n_rejected"], r["n_candidates"], r["admitted"]) == (3, 3, 0, None)
    assert {p for p, _ in system.calls} == {""}  # only the incumbent was ever answered


def test_the_arm_must_be_given_its_gates(tmp_path):
    arm = ArmConfig("gated", "library", gates=("counterfactual",))
    with pytest.raises(ValueError, match="needs gate"):
        Loop(arm, SETTINGS, seed=SEED, scorer=Scorer(TableSystem(correct)),
             builder=Builder(routing_builder(REPLIES)), pool=POOL, run_dir=tmp_path)


# ----------------------------------------------------------------------------- resume
TEXTS = [add_reply("a good case", "good one."), add_reply("another good case", "good two."),
         add_reply("a bad case", "bad idea."), "not json",
         json.dumps({"diagnosis": "d", "operation": "retire", "entry": 1}),
         json.dumps({"diagnosis": "d", "operation": "revise", "entry": 1,
                     "condition": "a revised case", "rule": "good three."})]


def noisy(principle: str, item) -> bool:
    h = int(hashlib.sha256(f"{principle}|{item.item_id}".encode()).hexdigest()[:8], 16) % 100
    return h < 40 + 12 * principle.count("good") - 15 * principle.count("bad")


class Crashing(TableSystem):
    def __init__(self, after: int) -> None:
        super().__init__(noisy)
        self.after = after

    def with_principle(self, principle):
        if len(self.calls) >= self.after:
            raise RuntimeError("backend went away")
        return super().with_principle(principle)


RESUME = LoopSettings(rounds=4, discovery_size=12, trial_size=10, n_trials=3, log_items=True)


def make_loop(run_dir, system=None, arm=None, settings=RESUME):
    return Loop(arm or ArmConfig("acc", "library", RegistrationRule(1.0, 2)), settings, seed=2,
                scorer=Scorer(system or TableSystem(noisy)),
                builder=Builder(hashed_builder(TEXTS), seed=2), pool=POOL, run_dir=run_dir)


def tables(run_dir) -> dict[str, pl.DataFrame]:
    return {t: logs.read_table(run_dir, t) for t in ("rounds", "candidates", "cohorts",
                                                     "replies", "items")}


def assert_same(a, b) -> None:
    ta, tb = tables(a), tables(b)
    for name in ta:
        assert ta[name].equals(tb[name]), name


def test_resume_from_a_saved_round_is_exact(tmp_path):
    full = make_loop(tmp_path / "full").run()
    assert logs.finished_rounds(tmp_path / "full") == [0, 1, 2, 3]
    assert full.table("rounds")["admitted"].is_not_null().any()  # the library does change
    part = make_loop(tmp_path / "part").run(rounds=2)
    assert logs.finished_rounds(tmp_path / "part") == [0, 1]
    assert part.principle  # the saved library is not the empty one: resume must restore it
    saved = (logs.round_dir(tmp_path / "part", 0) / "rounds.parquet").stat().st_mtime_ns
    system = TableSystem(noisy)
    resumed = make_loop(tmp_path / "part", system).run()  # fresh system, backend and scorer
    assert resumed.artifact == full.artifact
    assert_same(tmp_path / "full", tmp_path / "part")
    # rounds 0 and 1 were not redone: their files are untouched, no round-0 question was asked
    assert (logs.round_dir(tmp_path / "part", 0) / "rounds.parquet").stat().st_mtime_ns == saved
    round0 = set(tables(tmp_path / "full")["cohorts"].filter(pl.col("round") == 0)
                 .explode("item_ids")["item_ids"])
    assert system.calls and not {i for _, i in system.calls} & round0


def test_resume_after_a_crash_inside_a_round_is_exact(tmp_path):
    make_loop(tmp_path / "full").run()
    crashing = Crashing(after=250)  # a round answers at most 12 + 5 x 30 questions
    with pytest.raises(RuntimeError):
        make_loop(tmp_path / "crash", crashing).run()
    done = logs.finished_rounds(tmp_path / "crash")
    assert done and len(done) < 4
    make_loop(tmp_path / "crash").run()
    assert_same(tmp_path / "full", tmp_path / "crash")


def test_an_interrupted_round_folder_is_redone(tmp_path):
    make_loop(tmp_path / "full").run()
    make_loop(tmp_path / "part").run(rounds=3)
    (logs.round_dir(tmp_path / "part", 2) / "state.json").unlink()  # round 2 never finished
    assert logs.finished_rounds(tmp_path / "part") == [0, 1]
    make_loop(tmp_path / "part").run()
    assert_same(tmp_path / "full", tmp_path / "part")


def test_resuming_with_other_settings_is_refused(tmp_path):
    make_loop(tmp_path / "r").run(rounds=1)
    with pytest.raises(ValueError, match="other settings"):
        make_loop(tmp_path / "r", arm=ArmConfig("acc", "library", RegistrationRule(3.0, 2))
                  ).run()
    other = LoopSettings(rounds=4, discovery_size=12, trial_size=9, n_trials=3)
    with pytest.raises(ValueError, match="other settings"):
        make_loop(tmp_path / "r", settings=other).run()
