"""Speed of the access oracle: sample N worlds and answer all their questions.

Target (issue: oracle sampler): 6,000 worlds with all their questions in under 10 s on 2 cores.
Run: python benchmarks/bench_oracle.py [--worlds 6000] [--depth 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from cogrsi_lib.oracle.sampler import SamplerConfig, question_table, sample_worlds


def run(n_worlds: int, depth: int, seed: int) -> tuple[float, int]:
    start = time.perf_counter()
    worlds = list(sample_worlds(n_worlds, seed, SamplerConfig()))
    questions = question_table(worlds, depth)
    return time.perf_counter() - start, questions.height


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--worlds", type=int, default=6000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    times = []
    for r in range(args.repeat):
        seconds, n_q = run(args.worlds, args.depth, seed=r)
        times.append(seconds)
        print(f"run {r}: {args.worlds} worlds, {n_q} questions, {seconds:.2f} s")
    print(f"median {statistics.median(times):.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
