"""The strategy-evolution loop (CogRSI §4.2, Algorithm 2, App. C.2 "Loop settings").

One round: the reader answers a discovery cohort of new development questions under the
incumbent P; its failures are grouped and the builder answers once per group (the four
largest groups, up to four failures each); every accepted reply is a candidate. The
incumbent and each candidate answer three trial cohorts; registration admits at most one
candidate (:mod:`cogrsi_lib.loops.registration`), after its gates. Every round is written
to the run folder (:mod:`cogrsi_lib.loops.logs`) and a loop resumes from its last finished
round with exactly the state and draws an uninterrupted run would have.

The engine sees the reader only through :class:`~cogrsi_lib.loops.slot.Scorer`, i.e. "answer
these items under this principle".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from cogrsi_lib.loops import logs
from cogrsi_lib.loops.arms import ArmConfig
from cogrsi_lib.loops.builder import Builder, BuilderReply, Failure, FailureGroup
from cogrsi_lib.loops.cohorts import CohortSampler, schedule
from cogrsi_lib.loops.devdata import pair_items
from cogrsi_lib.loops.gates import CandidateView, Gate, GateResult
from cogrsi_lib.loops.library import Artifact, artifact_from_json, empty_artifact
from cogrsi_lib.loops.records import round_records
from cogrsi_lib.loops.registration import Scored, Verdict, cohort_gain, select, verdict
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.progress import phase
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import principle_id
from cogrsi_lib.reader.records import ItemRecord

STATE_VERSION = 1


@dataclass(frozen=True)
class LoopSettings:
    """Sizes and switches shared by every arm (App. C.2: 8 rounds, cohorts of 80, four
    candidates per round). ``pair_groups``: in the pairs-as-data arm, how many of the builder
    calls go to failure groups of gate pairs (the rest to development failures, either side
    filling in when the other has too few groups). ``gate_all``: run the gates on every
    candidate, not only on those the accuracy rule admits."""

    rounds: int = 8
    discovery_size: int = 80
    trial_size: int = 80
    n_trials: int = 3
    max_candidates: int = 4
    failures_per_group: int = 4
    pair_groups: int = 2
    gate_all: bool = False
    log_items: bool = False

    def fingerprint(self) -> dict[str, Any]:
        """Everything a resumed run must share with the saved one (not the round count)."""
        d = asdict(self)
        d.pop("rounds")
        d.pop("log_items")
        return d


def default_group(item: ReaderItem) -> str:
    """Failure group of an item: its data source's ``group``, else its question type."""
    return str(item.meta.get("group") or item.meta.get("question_type") or "all")


def failure_groups(items: Sequence[ReaderItem], records: Sequence[ItemRecord],
                   key: Callable[[ReaderItem], str], k: int, per_group: int
                   ) -> list[FailureGroup]:
    """The ``k`` largest groups of wrong answers (ties by key), first ``per_group`` of each."""
    groups: dict[str, list[tuple[ReaderItem, ItemRecord]]] = {}
    for it, rec in zip(items, records, strict=True):
        if not rec.correct:
            groups.setdefault(key(it), []).append((it, rec))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:k]
    return [FailureGroup(g, tuple(Failure.of(it, rec) for it, rec in fs[:per_group]), len(fs),
                         tuple(rec for _, rec in fs[:per_group])) for g, fs in ranked]


def pair_failure_groups(items: Sequence[ReaderItem], records: Sequence[ItemRecord], k: int,
                        per_group: int) -> tuple[list[FailureGroup], int]:
    """Invalid gate pairs grouped by variant: both versions of each shown pair (so a group of
    four failures shows two pairs). Returns the groups and the number of invalid pairs."""
    by_pair: dict[str, list[tuple[ReaderItem, ItemRecord]]] = {}
    for it, rec in zip(items, records, strict=True):
        by_pair.setdefault(str(it.meta["pair_id"]), []).append((it, rec))
    invalid: dict[str, list[list[tuple[ReaderItem, ItemRecord]]]] = {}
    n_invalid = 0
    for pid in sorted(by_pair):
        versions = sorted(by_pair[pid], key=lambda x: str(x[0].meta["side"]))
        if not all(rec.correct for _, rec in versions):
            n_invalid += 1
            invalid.setdefault(f"pairs/{versions[0][0].meta['variant']}", []).append(versions)
    ranked = sorted(invalid.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:k]
    out = []
    for g, pairs in ranked:
        shown: list[tuple[ReaderItem, ItemRecord, str]] = []
        for versions in pairs[: max(1, per_group // 2)]:
            for it, rec in versions:
                right = "right" if rec.correct else "wrong"
                note = (f"counterfactual pair {it.meta['pair_id']}, version {it.meta['side']}: "
                        f"the two versions differ in one fact about who could see or hear "
                        f"what; the reader was {right} on this one")
                shown.append((it, rec, note))
        out.append(FailureGroup(g, tuple(Failure.of(it, rec, note) for it, rec, note in shown),
                                len(pairs), tuple(rec for _, rec, _ in shown)))
    return out, n_invalid


def choose_groups(dev: Sequence[FailureGroup], pairs: Sequence[FailureGroup], total: int,
                  n_pairs: int) -> list[FailureGroup]:
    """Up to ``n_pairs`` pair groups and the rest development groups, each side filling in."""
    take_p = min(n_pairs, len(pairs))
    take_d = min(total - take_p, len(dev))
    take_p = min(len(pairs), total - take_d)
    return list(dev[:take_d]) + list(pairs[:take_p])


def pool_fingerprint(items: Sequence[ReaderItem]) -> str:
    ids = sorted(f"{it.story}\t{it.item_id}" for it in items)
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


@dataclass
class LoopResult:
    arm: ArmConfig
    seed: int
    artifact: Artifact
    run_dir: Path

    @property
    def principle(self) -> str:
        return self.artifact.principle()

    def table(self, name: str) -> pl.DataFrame:
        return logs.read_table(self.run_dir, name)


class Loop:
    """One arm, one seed: rounds of discovery, building, trials and registration."""

    def __init__(self, arm: ArmConfig, settings: LoopSettings, *, seed: int, scorer: Scorer,
                 builder: Builder, pool: Sequence[ReaderItem], run_dir: str | Path,
                 gates: Mapping[str, Gate] | None = None, pair_records: pl.DataFrame | None = None,
                 group_key: Callable[[ReaderItem], str] = default_group,
                 shadow_gates: Mapping[str, Gate] | None = None) -> None:
        self.arm, self.settings, self.seed = arm, settings, seed
        self.scorer, self.builder = scorer, builder
        self.pool = list(pool)
        self.run_dir = Path(run_dir)
        self.group_key = group_key
        gates = dict(gates or {})
        missing = [g for g in arm.gates if g not in gates]
        if missing:
            raise ValueError(f"arm {arm.name} needs gate(s) {missing}; given {sorted(gates)}")
        self.gates: list[Gate] = [gates[g] for g in arm.gates]
        #: gates run on every candidate and only logged (shadow registration, CogRSI App. D);
        #: an arm gate that is the same object is run once and serves both
        self.shadow_gates: dict[str, Gate] = dict(shadow_gates or {})
        self.pair_records = pair_records
        self.pair_items = pair_items(pair_records) if pair_records is not None else []
        if arm.pairs_as_data and not self.pair_items:
            raise ValueError(f"arm {arm.name} shows pairs to the builder: give pair_records")
        if arm.rule.min_nonneg > settings.n_trials:
            raise ValueError(f"cohort rule needs {arm.rule.min_nonneg} of {settings.n_trials}")

    # ----------------------------------------------------------------- state
    def config(self) -> dict[str, Any]:
        return {"version": STATE_VERSION, "arm": self.arm.to_dict(), "seed": self.seed,
                "settings": self.settings.fingerprint(), "pool": pool_fingerprint(self.pool),
                "builder": {"temperature": self.builder.temperature,
                            "max_tokens": self.builder.max_tokens, "seed": self.builder.seed,
                            "limits": asdict(self.builder.limits)},
                **({"shadow_gates": sorted(self.shadow_gates)} if self.shadow_gates else {})}

    def _start(self) -> tuple[int, Artifact, CohortSampler]:
        sampler = CohortSampler(self.pool, self.seed)
        done = logs.finished_rounds(self.run_dir)
        if not done:
            return 0, empty_artifact(self.arm.artifact), sampler
        state = logs.read_state(self.run_dir, done[-1])
        if state["config"] != self.config():
            raise ValueError(f"{self.run_dir} holds a loop with other settings; "
                             f"use another folder (saved: {json.dumps(state['config'])[:300]})")
        sampler.restore(state["sampler"])
        return done[-1] + 1, artifact_from_json(state["artifact"]), sampler

    def run(self, rounds: int | None = None) -> LoopResult:
        """Run (or resume) up to ``rounds`` rounds (default: the settings' count)."""
        n = self.settings.rounds if rounds is None else rounds
        start, artifact, sampler = self._start()
        for r in range(start, n):
            phase("loop %s seed %s: round %d of %d", self.arm.name, self.seed, r + 1, n)
            artifact = self.run_round(r, artifact, sampler)
        return LoopResult(self.arm, self.seed, artifact, self.run_dir)

    def final_cohort(self, size: int) -> list[ReaderItem]:
        """The questions after all rounds' draws (shared by every arm of this seed)."""
        s = self.settings
        return schedule(self.pool, self.seed, s.rounds, s.discovery_size, s.trial_size,
                        s.n_trials, size)["final"]

    # ----------------------------------------------------------------- round
    def run_round(self, r: int, incumbent: Artifact, sampler: CohortSampler) -> Artifact:
        """One round (see the module docstring): discovery, building, trials, gates,
        registration; its tables and state are written to the run folder."""
        s = self.settings
        discovery = sampler.draw(s.discovery_size)
        trials = [sampler.draw(s.trial_size) for _ in range(s.n_trials)]
        rnd = _Round(self.arm.name, self.seed, r, incumbent.principle(), discovery, trials,
                     s.log_items, [*self.pool, *self.pair_items])
        disc = self._discover(rnd)
        replies, candidates, reply_candidate = self._build(incumbent, disc.groups)
        trial = self._trials(rnd, candidates)
        gating = self._gate(rnd, trial.scored, candidates)
        winner, verdicts = select(self.arm.rule, gating.scored)
        # gates run on every accuracy-admissible candidate, so none is admitted without them
        assert not self.gates or winner is None or winner in gating.gate_runs

        new = candidates[winner][1] if winner is not None else incumbent
        cand_rows = self._candidate_rows(rnd, gating, verdicts, candidates, winner)
        reply_rows = _reply_rows(rnd, replies, reply_candidate, disc.groups)
        round_row = _round_row(rnd, incumbent, new, disc, trial, replies, candidates,
                               cand_rows, winner)
        tables = {"rounds": logs.frame("rounds", [round_row]),
                  "candidates": logs.frame("candidates", cand_rows),
                  "cohorts": logs.frame("cohorts", [disc.row, *trial.rows]),
                  "replies": logs.frame("replies", reply_rows)}
        if rnd.item_frames:
            tables["items"] = pl.concat(rnd.item_frames, how="diagonal_relaxed")
        state = {"config": self.config(), "round": r, "artifact": new.to_json(),
                 "sampler": sampler.state()}
        logs.write_round(self.run_dir, r, tables, state)
        return new

    def _discover(self, rnd: _Round) -> _Discovery:
        """The incumbent on the discovery cohort (and, with pairs as data, the gate pairs),
        and the failure groups the builder is shown."""
        s, arm = self.settings, self.arm
        disc_recs = self.scorer.answer(rnd.principle, rnd.discovery)
        rnd.log_items(disc_recs, "discovery", "incumbent", None)
        dev_groups = failure_groups(rnd.discovery, disc_recs, self.group_key, s.max_candidates,
                                    s.failures_per_group)
        pair_groups: list[FailureGroup] = []
        n_pair_failures = None
        if arm.pairs_as_data:
            pair_recs = self.scorer.answer(rnd.principle, self.pair_items)
            rnd.log_items(pair_recs, "gate_pairs", "incumbent", None)
            pair_groups, n_pair_failures = pair_failure_groups(
                self.pair_items, pair_recs, s.max_candidates, s.failures_per_group)
        groups = choose_groups(dev_groups, pair_groups, s.max_candidates,
                               s.pair_groups if arm.pairs_as_data else 0)
        row = {**rnd.base(), "cohort": "discovery", "role": "incumbent",
               "principle_id": rnd.pid, "n": len(rnd.discovery),
               "correct": sum(bool(x.correct) for x in disc_recs), "accuracy": _acc(disc_recs),
               "item_ids": [i.item_id for i in rnd.discovery]}
        return _Discovery(disc_recs, len(dev_groups), groups, n_pair_failures, row)

    def _build(self, incumbent: Artifact, groups: list[FailureGroup]
               ) -> tuple[list[BuilderReply], list[tuple[BuilderReply, Artifact]],
                          list[int | None]]:
        """The builder's replies, the candidates of the accepted ones, and each reply's
        candidate index (None for a rejected reply)."""
        replies: list[BuilderReply] = self.builder.propose(incumbent, groups)
        candidates: list[tuple[BuilderReply, Artifact]] = []
        reply_candidate: list[int | None] = []
        for rep in replies:
            if rep.ok and rep.edit is not None:
                reply_candidate.append(len(candidates))
                candidates.append((rep, incumbent.apply(rep.edit)))
            else:
                reply_candidate.append(None)
        return replies, candidates, reply_candidate

    def _per_cohort(self, rnd: _Round, principle: str, role: str, cand: int | None) -> list[int]:
        """Correct answers under ``principle`` on each trial cohort (one scorer call)."""
        recs = self.scorer.answer(principle, rnd.flat)
        out, pos = [], 0
        for k, t in enumerate(rnd.trials):
            chunk = recs[pos: pos + len(t)]
            pos += len(t)
            out.append(sum(bool(x.correct) for x in chunk))
            rnd.log_items(chunk, f"trial{k + 1}", role, cand)
        return out

    def _trials(self, rnd: _Round, candidates: Sequence[tuple[BuilderReply, Artifact]]
                ) -> _Trials:
        """The incumbent once, then every candidate, on the same trial cohorts, with the
        trial cohorts' rows."""
        base, pid, trials = rnd.base(), rnd.pid, rnd.trials
        # the incumbent and every candidate on the trial cohorts in one stream, then read
        self.scorer.prefetch([rnd.principle, *(a.principle() for _, a in candidates)],
                             rnd.flat)
        inc_correct = self._per_cohort(rnd, rnd.principle, "incumbent", None)
        cohort_rows = []
        for k, t in enumerate(trials):
            cohort_rows.append({**base, "cohort": f"trial{k + 1}", "role": "incumbent",
                                "principle_id": pid, "n": len(t), "correct": inc_correct[k],
                                "accuracy": 100.0 * inc_correct[k] / len(t),
                                "item_ids": [i.item_id for i in t]})
        scored: list[Scored] = []
        for c, (_rep, art) in enumerate(candidates):
            cc = self._per_cohort(rnd, art.principle(), "candidate", c)
            gains = tuple(cohort_gain(cc[k], inc_correct[k], len(t)) for k, t in enumerate(trials))
            scored.append(Scored(c, gains))
            for k, t in enumerate(trials):
                cohort_rows.append({**base, "cohort": f"trial{k + 1}", "role": "candidate",
                                    "candidate": c, "principle_id": principle_id(art.principle()),
                                    "n": len(t), "correct": cc[k],
                                    "accuracy": 100.0 * cc[k] / len(t),
                                    "item_ids": [i.item_id for i in t]})
        return _Trials(inc_correct, scored, cohort_rows)

    def _gate(self, rnd: _Round, scored: Sequence[Scored],
              candidates: Sequence[tuple[BuilderReply, Artifact]]) -> _Gating:
        """The shadow gates on every candidate; the arm's gates on the candidates the accuracy
        rule admits (or all, with ``gate_all``), a gate that is also a shadow gate run once."""
        s, arm, P = self.settings, self.arm, rnd.principle
        gate_runs: dict[int, tuple[GateResult, ...]] = {}
        shadow_runs: dict[int, tuple[GateResult, ...]] = {}
        for sc, (rep, art) in zip(scored, candidates, strict=True):
            view = CandidateView(art.principle(), rep.edit.written() if rep.edit else "",
                                 rep.edit.operation if rep.edit else "")
            done: dict[int, GateResult] = {}
            if self.shadow_gates:
                shadow_runs[sc.index] = tuple(g.check(view, P)
                                              for g in self.shadow_gates.values())
                done = {id(g): r for g, r in zip(self.shadow_gates.values(),
                                                 shadow_runs[sc.index], strict=True)}
            if self.gates and (s.gate_all or verdict(arm.rule, sc).accuracy_admissible):
                gate_runs[sc.index] = tuple(done[id(g)] if id(g) in done else g.check(view, P)
                                            for g in self.gates)
        gated = [Scored(sc.index, sc.gains, gate_runs.get(sc.index, ())) for sc in scored]
        return _Gating(gated, gate_runs, shadow_runs)

    def _candidate_rows(self, rnd: _Round, gating: _Gating, verdicts: Sequence[Verdict],
                        candidates: Sequence[tuple[BuilderReply, Artifact]],
                        winner: int | None) -> list[dict[str, Any]]:
        """One ``candidates`` row per candidate: its edit, gains, gates and verdict."""
        base, pid = rnd.base(), rnd.pid
        gate_runs, shadow_runs = gating.gate_runs, gating.shadow_runs
        cand_rows = []
        for sc, v, (rep, art) in zip(gating.scored, verdicts, candidates, strict=True):
            e = rep.edit
            assert e is not None
            gates_run = sc.index in gate_runs or not self.gates
            cand_rows.append({
                **base, "candidate": sc.index, "group": rep.group, "operation": e.operation,
                "entry": e.entry, "condition": e.condition or None, "rule": e.rule or None,
                "written": e.written(), "principle": art.principle(),
                "principle_id": principle_id(art.principle()), "incumbent_id": pid,
                "diagnosis": rep.diagnosis, "gains": list(sc.gains), "mean_gain": sc.mean_gain,
                "nonneg_cohorts": sum(g >= -1e-9 for g in sc.gains),
                "passes_margin": v.passes_margin, "passes_cohorts": v.passes_cohorts,
                "gates_run": bool(self.gates) and sc.index in gate_runs,
                "passes_gates": (v.passes_gates if gates_run else None),
                "gate_gain": sc.gate_gain,
                "gates_json": json.dumps([asdict(g) for g in sc.gates], sort_keys=True,
                                         default=str),
                "shadow_gates_json": (json.dumps([asdict(g) for g in shadow_runs[sc.index]],
                                                 sort_keys=True, default=str)
                                      if sc.index in shadow_runs else None),
                "shadow_gate_passed": (all(g.passed for g in shadow_runs[sc.index])
                                       if sc.index in shadow_runs else None),
                "shadow_gate_gain": next((g.gain for g in shadow_runs.get(sc.index, ())
                                          if g.gain is not None), None),
                "admissible": v.admissible and gates_run, "admitted": sc.index == winner,
                "reason": v.reason if gates_run or not v.accuracy_admissible
                else "gate_not_run",
            })
        return cand_rows


@dataclass
class _Round:
    """One round's cohorts and incumbent, and the item records it logs (``log_items``)."""

    arm: str
    seed: int
    r: int
    principle: str
    discovery: list[ReaderItem]
    trials: list[list[ReaderItem]]
    log_all: bool
    known: list[ReaderItem]  # the items the loop draws from (looked up by the records)
    item_frames: list[pl.DataFrame] = field(default_factory=list)
    pid: str = field(init=False)  # the incumbent's principle id
    flat: list[ReaderItem] = field(init=False)  # the trial cohorts, one after the other

    def __post_init__(self) -> None:
        self.pid = principle_id(self.principle)
        self.flat = [it for t in self.trials for it in t]

    def base(self) -> dict[str, Any]:
        """The key columns of every row of the round."""
        return {"arm": self.arm, "seed": self.seed, "round": self.r}

    def log_items(self, recs: Sequence[ItemRecord], cohort: str, role: str,
                  cand: int | None) -> None:
        """Keep the records of one answered cohort (with ``log_items``) for the items table."""
        if self.log_all and recs:
            self.item_frames.append(round_records(recs, self.known, self.arm, self.seed,
                                                  self.r, cohort, role, cand))


class _Discovery(NamedTuple):
    records: list[ItemRecord]
    n_dev_groups: int
    groups: list[FailureGroup]
    n_pair_failures: int | None
    row: dict[str, Any]  # the discovery cohort's row


class _Trials(NamedTuple):
    incumbent: list[int]  # the incumbent's correct answers per trial cohort
    scored: list[Scored]
    rows: list[dict[str, Any]]


class _Gating(NamedTuple):
    scored: list[Scored]  # with the arm's gate results
    gate_runs: dict[int, tuple[GateResult, ...]]
    shadow_runs: dict[int, tuple[GateResult, ...]]


def _reply_rows(rnd: _Round, replies: Sequence[BuilderReply],
                reply_candidate: Sequence[int | None],
                groups: Sequence[FailureGroup]) -> list[dict[str, Any]]:
    """One ``replies`` row per builder reply, accepted or not."""
    base = rnd.base()
    reply_rows = []
    for i, (rep, cand) in enumerate(zip(replies, reply_candidate, strict=True)):
        size = next((g.size for g in groups if g.key == rep.group), None)
        reply_rows.append({
            **base, "reply": i, "group": rep.group, "group_size": size,
            "status": rep.status, "reason": rep.reason or None, "detail": rep.detail or None,
            "diagnosis": rep.diagnosis or None, "text": rep.text, "shown": list(rep.shown),
            "candidate": cand, "prompt_tokens": rep.usage.get("prompt_tokens"),
            "completion_tokens": rep.usage.get("completion_tokens"),
            "finish_reason": rep.usage.get("finish_reason")})
    return reply_rows


def _round_row(rnd: _Round, incumbent: Artifact, new: Artifact, disc: _Discovery,
               trial: _Trials, replies: Sequence[BuilderReply],
               candidates: Sequence[tuple[BuilderReply, Artifact]],
               cand_rows: Sequence[Mapping[str, Any]], winner: int | None) -> dict[str, Any]:
    """The round's ``rounds`` row: the incumbent's accuracies, the builder's yield, the
    admitted edit and the new principle."""
    disc_recs, inc_correct = disc.records, trial.incumbent
    win_edit = candidates[winner][0].edit if winner is not None else None
    return {
        **rnd.base(), "artifact": incumbent.kind, "incumbent_id": rnd.pid,
        "incumbent_principle": rnd.principle,
        "incumbent_size": _size(incumbent), "discovery_n": len(rnd.discovery),
        "discovery_correct": sum(bool(x.correct) for x in disc_recs),
        "discovery_accuracy": _acc(disc_recs), "trial_n": [len(t) for t in rnd.trials],
        "trial_correct": inc_correct,
        "trial_accuracy": 100.0 * sum(inc_correct) / max(1, len(rnd.flat)),
        "n_failures": sum(not x.correct for x in disc_recs),
        "n_groups": disc.n_dev_groups, "n_pair_failures": disc.n_pair_failures,
        "n_replies": len(replies), "n_rejected": sum(not x.ok for x in replies),
        "n_candidates": len(candidates),
        "n_admissible": sum(row["admissible"] for row in cand_rows),
        "admitted": winner, "admitted_operation": win_edit.operation if win_edit else None,
        "admitted_written": win_edit.written() if win_edit else None,
        "new_principle_id": principle_id(new.principle()), "new_principle": new.principle(),
        "new_size": _size(new), "artifact_json": new.to_json(),
    }


def _acc(recs: Sequence[ItemRecord]) -> float:
    return 100.0 * sum(bool(x.correct) for x in recs) / len(recs) if recs else float("nan")


def _size(a: Artifact) -> int:
    rules = getattr(a, "rules", None)
    if rules is not None:
        return len(rules)
    return int(bool(a.principle()))
