"""Shadow registration: every candidate replayed under every registration rule (CogRSI §5.4,
Figure 7a-b, App. D).

The engine logs, for each candidate, its trial gains against its own round's incumbent and,
with shadow gates, the gate's result whatever the arm (:class:`~cogrsi_lib.loops.engine.Loop`
``shadow_gates``). From that log alone this module asks what each registration rule would
have done with the same candidate:

- ``1-point margin``: mean gain at least the loose margin (no cohort rule, no gate);
- ``3-point margin``: mean gain at least delta and gains >= 0 on ``min_nonneg`` cohorts;
- ``gate``: the 3-point rule and the counterfactual gate.

A rule *keeps* a candidate when the candidate passes it (Figure 7a counts kept candidates);
``wins`` says whether it would also have been its round's choice among the candidates the
rule keeps. :func:`replay_live` replays each arm's own rule from the log and must give the
winner the loop admitted. :func:`kept_validity` (Figure 7a), :func:`gain_by_validity`
(Figure 7b) and :func:`library_by_round` (Figure 7c) join the candidates and the kept
libraries with the semantic audit's verdicts: of the symbolic study's bank (:func:`figure7`,
in the loops stage) and, in the audit stage, of the model loops' own candidates
(:func:`audited_figure7`, from the loops' :data:`REPLAY_FILE`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from cogrsi_lib.loops.arms import ArmConfig
from cogrsi_lib.loops.gates import GateResult
from cogrsi_lib.loops.registration import RegistrationRule, Scored, select
from cogrsi_lib.stats import wilson

#: the verdicts Figure 7 decides between; the rest (ambiguous, vacuous, retire) are undecided
DECIDED = ("valid", "invalid")


@dataclass(frozen=True)
class ShadowRule:
    """A registration rule replayed on logged evidence: margin, cohort rule, and whether the
    counterfactual gate (the shadow gate's logged result) must pass."""

    name: str
    rule: RegistrationRule
    gate: bool = False


def shadow_rules(delta: float = 3.0, min_nonneg: int = 2,
                 loose_delta: float = 1.0) -> tuple[ShadowRule, ...]:
    """The three rules of Figure 7a at the loops' margins."""
    strict = RegistrationRule(delta, min_nonneg)
    return (ShadowRule(f"{loose_delta:g}-point margin", RegistrationRule(loose_delta, 0)),
            ShadowRule(f"{delta:g}-point margin", strict),
            ShadowRule("gate", strict, gate=True))


def _gates(raw: str | None) -> tuple[GateResult, ...]:
    return tuple(GateResult(g["gate"], bool(g["passed"]), g.get("gain"))
                 for g in json.loads(raw or "[]"))


def _rounds(candidates: pl.DataFrame) -> list[pl.DataFrame]:
    return candidates.sort("arm", "seed", "round", "candidate").partition_by(
        "arm", "seed", "round", maintain_order=True)


def replay(candidates: pl.DataFrame, rules: Sequence[ShadowRule]) -> pl.DataFrame:
    """One row per candidate and rule: ``kept`` (passes the rule) and ``wins``. A gate rule
    needs the shadow gate's result; a candidate without one is not kept (``gate_logged``
    false), so run the loops with shadow gates for a full replay."""
    rows = []
    for rnd in _rounds(candidates):
        recs = rnd.to_dicts()
        for sr in rules:
            scored = [Scored(r["candidate"], tuple(r["gains"]),
                             _gates(r["shadow_gates_json"]) if sr.gate else ()) for r in recs]
            logged = [not sr.gate or r["shadow_gates_json"] is not None for r in recs]
            scored = [s if ok else Scored(s.index, s.gains, (GateResult("missing", False),))
                      for s, ok in zip(scored, logged, strict=True)]
            winner, verdicts = select(sr.rule, scored)
            for r, v, ok in zip(recs, verdicts, logged, strict=True):
                rows.append({"arm": r["arm"], "seed": r["seed"], "round": r["round"],
                             "candidate": r["candidate"], "rule": sr.name,
                             "written": r["written"], "mean_gain": r["mean_gain"],
                             "gate_logged": ok, "kept": v.admissible,
                             "wins": r["candidate"] == winner, "admitted": r["admitted"]})
    return pl.DataFrame(rows, schema={
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "candidate": pl.Int64,
        "rule": pl.Utf8, "written": pl.Utf8, "mean_gain": pl.Float64, "gate_logged": pl.Boolean,
        "kept": pl.Boolean, "wins": pl.Boolean, "admitted": pl.Boolean})


def replay_live(candidates: pl.DataFrame, arms: Mapping[str, ArmConfig]) -> pl.DataFrame:
    """Per arm, seed and round: the winner the arm's own rule picks from the logged gains and
    the logged results of its own gates, beside the one the loop admitted (``agrees``)."""
    rows = []
    for rnd in _rounds(candidates):
        recs = rnd.to_dicts()
        arm = arms[recs[0]["arm"]]
        scored = [Scored(r["candidate"], tuple(r["gains"]), _gates(r["gates_json"]))
                  for r in recs]
        # a candidate whose gates were not run (the accuracy rule refused it) cannot win
        winner, _ = select(arm.rule, scored)
        live = next((r["candidate"] for r in recs if r["admitted"]), None)
        rows.append({"arm": arm.name, "seed": recs[0]["seed"], "round": recs[0]["round"],
                     "candidates": len(recs), "admitted": live, "replayed": winner,
                     "agrees": live == winner})
    return pl.DataFrame(rows, schema={
        "arm": pl.Utf8, "seed": pl.Int64, "round": pl.Int64, "candidates": pl.Int64,
        "admitted": pl.Int64, "replayed": pl.Int64, "agrees": pl.Boolean})


def with_verdicts(shadow: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """``shadow`` (or a candidates log) with each candidate's audit verdict, looked up by the
    text it writes in ``verdicts`` (``text``, ``verdict``); null for a retire, or a text the
    audit did not see."""
    of = dict(zip(verdicts["text"], verdicts["verdict"], strict=True))
    return shadow.with_columns(pl.Series(
        "verdict", [of.get(t) if t else None for t in shadow["written"]], dtype=pl.Utf8))


def kept_validity(shadow: pl.DataFrame) -> pl.DataFrame:
    """Figure 7a: per rule, the candidates it keeps, their verdicts (``unaudited``: retires
    and texts the audit did not see) and the share of invalid among the decided ones (valid
    or invalid), with a Wilson 95% interval; no share when none is decided."""
    rows = []
    for rule in shadow["rule"].unique(maintain_order=True):
        kept = shadow.filter((pl.col("rule") == rule) & pl.col("kept"))
        decided = kept.filter(pl.col("verdict").is_in(DECIDED))
        n_inv = int((decided["verdict"] == "invalid").sum())
        lo, hi = wilson(n_inv, decided.height)
        lo, hi = (None, None) if lo is None else (100.0 * lo, 100.0 * hi)
        rows.append({"rule": rule, "kept": kept.height,
                     "kept_texts": kept["written"].drop_nulls().n_unique(),
                     "decided": decided.height, "invalid": n_inv,
                     "valid": decided.height - n_inv,
                     "ambiguous": int((kept["verdict"] == "ambiguous").sum()),
                     "vacuous": int((kept["verdict"] == "vacuous").sum()),
                     "unaudited": int(kept["verdict"].is_null().sum()),
                     "invalid_share": 100.0 * n_inv / decided.height if decided.height else None,
                     "ci_low": lo, "ci_high": hi})
    return pl.DataFrame(rows, schema={
        "rule": pl.Utf8, "kept": pl.Int64, "kept_texts": pl.Int64, "decided": pl.Int64,
        "invalid": pl.Int64, "valid": pl.Int64, "ambiguous": pl.Int64, "vacuous": pl.Int64,
        "unaudited": pl.Int64, "invalid_share": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64})


def total_variation(a: Sequence[float], b: Sequence[float]) -> float:
    """Total-variation distance between the empirical distributions of ``a`` and ``b``."""
    if not a or not b:
        raise ValueError("both samples need values")
    ka = [round(x, 6) for x in a]
    kb = [round(x, 6) for x in b]
    support = set(ka) | set(kb)
    return 0.5 * sum(abs(ka.count(v) / len(ka) - kb.count(v) / len(kb)) for v in support)


def gain_by_validity(candidates: pl.DataFrame, n_boot: int = 2000,
                     seed: int = 0) -> pl.DataFrame:
    """Figure 7b: mean trial gain of valid and of invalid candidates (one row each, every
    candidate that reached registration), their difference (valid minus invalid) with a 95%
    bootstrap interval over candidates (none when either kind has a single candidate), the
    total-variation distance between the two gain distributions and 1 - TV, the least sum of
    the two mislabelling rates of any rule that keeps candidates by trial gain alone."""
    gains = {v: candidates.filter(pl.col("verdict") == v)["mean_gain"].to_list()
             for v in DECIDED}
    rows: list[dict] = [{"verdict": v, "n": len(g), "mean_gain": sum(g) / len(g) if g else None}
                        for v, g in gains.items()]
    valid, invalid = gains["valid"], gains["invalid"]
    diff = lo = hi = tv = None
    if valid and invalid:
        diff = sum(valid) / len(valid) - sum(invalid) / len(invalid)
        if min(len(valid), len(invalid)) > 1:  # no interval from a single candidate
            lo, hi = _difference_interval(valid, invalid, n_boot, seed)
        tv = total_variation(valid, invalid)
    rows.append({"verdict": "valid - invalid", "n": len(valid) + len(invalid),
                 "mean_gain": diff, "ci_low": lo, "ci_high": hi, "tv_distance": tv,
                 "min_error_sum": None if tv is None else 1.0 - tv})
    return pl.DataFrame(rows, schema={
        "verdict": pl.Utf8, "n": pl.Int64, "mean_gain": pl.Float64, "ci_low": pl.Float64,
        "ci_high": pl.Float64, "tv_distance": pl.Float64, "min_error_sum": pl.Float64})


def _difference_interval(a: Sequence[float], b: Sequence[float], n_boot: int,
                         seed: int) -> tuple[float, float]:
    """95% percentile interval of mean(a) - mean(b), each sample resampled on its own
    (scipy's bootstrap)."""
    import numpy as np
    from scipy.stats import bootstrap

    res = bootstrap((np.asarray(a, float), np.asarray(b, float)),
                    lambda x, y, axis: x.mean(axis=axis) - y.mean(axis=axis),
                    n_resamples=n_boot, method="percentile", vectorized=True,
                    rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def situation_split(verdicts: pl.DataFrame) -> pl.DataFrame:
    """The invalid texts' shared counterexamples inside and outside ExploreToM's situations,
    one row per text, then a pooled row (``text`` null) whose ``only_outside`` counts the texts
    that fail only outside (CogRSI §5.4: 116 of 286)."""
    inv = verdicts.filter(pl.col("verdict") == "invalid").select(
        "text", "counterexamples", "inside_exploretom", "outside_exploretom",
        pl.col("only_outside").cast(pl.Int64))
    pooled = pl.DataFrame({"text": [None], "counterexamples": [int(inv["counterexamples"].sum())],
                           "inside_exploretom": [int(inv["inside_exploretom"].sum())],
                           "outside_exploretom": [int(inv["outside_exploretom"].sum())],
                           "only_outside": [int(inv["only_outside"].sum())]},
                          schema=inv.schema)
    return pl.concat([inv.sort("text"), pooled])


def library_by_round(rounds: pl.DataFrame, verdicts: pl.DataFrame) -> pl.DataFrame:
    """Figure 7c: per arm and round, the entries of the libraries kept after that round,
    summed over seeds, by audit verdict (``unaudited``: a text the audit did not see)."""
    from cogrsi_lib.loops.library import artifact_from_json

    of = dict(zip(verdicts["text"], verdicts["verdict"], strict=True))
    rows = []
    for r in rounds.sort("arm", "seed", "round").iter_rows(named=True):
        texts = [rule.text() for rule in getattr(artifact_from_json(r["artifact_json"]),
                                                 "rules", ())]
        found = [of.get(t) for t in texts]
        rows.append({"arm": r["arm"], "round": r["round"], "entries": len(texts),
                     **{v: sum(f == v for f in found) for v in
                        ("invalid", "valid", "ambiguous", "vacuous")},
                     "unaudited": sum(f is None for f in found)})
    schema = {"arm": pl.Utf8, "round": pl.Int64, "entries": pl.Int64, "invalid": pl.Int64,
              "valid": pl.Int64, "ambiguous": pl.Int64, "vacuous": pl.Int64,
              "unaudited": pl.Int64}
    frame = pl.DataFrame(rows, schema=schema)
    return (frame.group_by("arm", "round", maintain_order=True)
            .agg(pl.len().alias("seeds"), *[pl.col(c).sum() for c in list(schema)[2:]])
            .sort("arm", "round"))


def figure7(candidates: pl.DataFrame, verdicts: pl.DataFrame, rules: Sequence[ShadowRule],
            arms: Mapping[str, ArmConfig], rounds: pl.DataFrame | None = None
            ) -> dict[str, pl.DataFrame]:
    """The shadow tables of audited loops: ``live`` (:func:`replay_live`), ``figure7a``,
    ``figure7b``, ``figure7c`` (with ``rounds``) and ``invalid_situations``
    (:func:`situation_split`)."""
    audited = with_verdicts(candidates, verdicts)
    out = {"live": replay_live(candidates, arms),
           "figure7a": kept_validity(with_verdicts(replay(candidates, rules), verdicts)),
           "figure7b": gain_by_validity(audited)}
    if rounds is not None:
        out["figure7c"] = library_by_round(rounds, verdicts)
    out["invalid_situations"] = situation_split(verdicts)
    return out


#: the loops stage's replay of its candidates under each rule (:func:`replay`), for the audit
REPLAY_FILE = "shadow_replay.parquet"


def audited_figure7(run_dir: str | Path, verdicts: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Figure 7a-c of a loops run's own candidates (its :data:`REPLAY_FILE`,
    ``candidates.parquet`` and ``rounds.parquet``) with the audit's ``verdicts`` of their
    texts: what each registration rule keeps, trial gain by verdict, the kept libraries by
    round (the tables of :func:`figure7` without the live replay and the situation split)."""
    run_dir = Path(run_dir)
    paths = {name: run_dir / name for name in (REPLAY_FILE, "candidates.parquet",
                                               "rounds.parquet")}
    missing = [str(p) for p in paths.values() if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"not a loops run (run the loops stage first): no {missing[0]}")
    frames = {name: pl.read_parquet(path) for name, path in paths.items()}
    return {"figure7a": kept_validity(with_verdicts(frames[REPLAY_FILE], verdicts)),
            "figure7b": gain_by_validity(with_verdicts(frames["candidates.parquet"], verdicts)),
            "figure7c": library_by_round(frames["rounds.parquet"], verdicts)}

