"""Speed of the semantic audit: one rule's pair of translations over the fixed world sample.

Target (issue 6): auditing one rule pair of translations over 6,000 worlds in under 30 s on
2 cores, translation calls excluded. Measures the sample's build (once per audit run: sampling,
oracle answers, snapshot), then, for each hand-written rule, the wall time from its two
translations' code to its verdict: both sandbox processes (run in parallel) and the verdict.
Run: python benchmarks/bench_audit.py [--worlds 6000] [--repeat 3] [--out bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from cogrsi_lib.audit import RULES, Auditor, build_translators, sample_audit_worlds

SCRIPTED = [{"name": "A", "model": "scripted"},
            {"name": "B", "model": "scripted"}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worlds", type=int, default=6000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    t0 = time.perf_counter()
    sample = sample_audit_worlds(args.worlds, args.seed, args.depth)
    build_s = time.perf_counter() - t0
    auditor = Auditor(sample, build_translators(SCRIPTED))
    print(f"sample: {args.worlds} worlds, {sample.n_questions} questions, "
          f"snapshot {len(sample.payload) / 1e6:.1f} MB, built in {build_s:.2f} s")
    rows = []
    for rule in RULES:
        times = []
        verdict = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            verdict, _cx = auditor.decide_codes(rule.code_a, rule.code_b)
            times.append(time.perf_counter() - t0)
        assert verdict is not None
        rows.append({"rule_id": rule.rule_id, "verdict": verdict.verdict,
                     "median_s": round(statistics.median(times), 3),
                     "max_s": round(max(times), 3)})
        print(f"{rule.rule_id:18s} {verdict.verdict:9s} median {statistics.median(times):.2f} s"
              f"  max {max(times):.2f} s")
    worst = max(r["max_s"] for r in rows)
    print(f"slowest rule pair {worst:.2f} s (target < 30 s); "
          f"with the sample build {worst + build_s:.2f} s")
    result = {"cpus": os.cpu_count(), "worlds": args.worlds, "questions": sample.n_questions,
              "sample_build_s": round(build_s, 3), "rules": rows, "slowest_pair_s": worst}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
