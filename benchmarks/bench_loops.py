"""Registration noise and the cost of a scripted loop run (CogRSI §4.2, App. C.2).

1. The calibration of the margin: the share of rounds in which four null candidates (no real
   gain), scored on three trial cohorts whose per-cohort gain varies with SD ``--sd`` (the
   paper's 2.7 points), get one admitted, at a 1-point and a 3-point margin, with and without
   the two-of-three cohort rule; for independent gains (the paper's calibration), for gains
   that share the incumbent's noise, and with accuracies rounded to whole questions of 80.
2. Wall time of every arm of the stage on the scripted backend (no model) at a given size.

Run:  python benchmarks/bench_loops.py [--sd 2.7] [--rounds 100000] [--stage-rounds 2]
      [--cohort 8] [--out bench.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from cogrsi_lib.loops import calibration_table, run_stage, stage_data
from cogrsi_lib.stage_params import load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sd", type=float, default=2.7)
    ap.add_argument("--rounds", type=int, default=100_000)
    ap.add_argument("--stage-rounds", type=int, default=2)
    ap.add_argument("--cohort", type=int, default=8)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()

    out: dict = {"sd": a.sd, "n_rounds": a.rounds, "noise": {}}
    for name, kw in {"independent": {}, "shared_incumbent": {"shared_incumbent": True},
                     "whole_questions_of_80": {"cohort_size": 80}}.items():
        t = calibration_table(a.sd, n_rounds=a.rounds, seed=0, **kw)
        out["noise"][name] = t.select("delta", "min_nonneg", "share", "se").to_dicts()
        print(f"\n{name}:")
        for r in out["noise"][name]:
            rule = "two of three" if r["min_nonneg"] else "no cohort rule"
            print(f"  margin {r['delta']:g} pt, {rule:14s}: {100 * r['share']:.1f}% "
                  f"(s.e. {100 * r['se']:.2f})")

    cfg = load("loops", {
        "seeds": [0], "rounds": a.stage_rounds, "discovery_size": a.cohort,
        "trial_size": a.cohort, "final_size": 3 * a.cohort, "heldout_size": a.cohort,
        "dev_stories": max(60, 40 * a.stage_rounds * a.cohort // 8), "model": "scripted",
        "gepa_budget": 10 * a.cohort, "gepa_val_size": a.cohort, "gepa_seeds": [0],
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8,
                  "n_gate_dialogue": 4, "n_eval_narrative": 8, "n_eval_dialogue": 4}})
    t0 = time.perf_counter()
    data = stage_data(cfg)
    t1 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        run = run_stage(cfg, data, d)
    t2 = time.perf_counter()
    out["scripted_stage"] = {"rounds": a.stage_rounds, "cohort": a.cohort,
                             "data_s": round(t1 - t0, 3), "run_s": round(t2 - t1, 3),
                             "loop_rounds": run.rounds.height,
                             "candidates": run.candidates.height}
    print(f"\nscripted stage, every arm, {a.stage_rounds} rounds, cohorts of {a.cohort}: "
          f"data {t1 - t0:.1f} s, run {t2 - t1:.1f} s")
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
