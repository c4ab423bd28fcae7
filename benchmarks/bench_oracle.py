"""Speed of the access oracle: sample N worlds and answer all their questions.

Target (issue: oracle sampler): 6,000 worlds with all their questions in under 10 s on 2 cores.
``--plain-worlds`` samples without secret observers, unnoticed misses or lie conditions: a
probability of 0 draws no random number, so these are the very worlds the sampler drew before
those conditions existed (the same seeds give the same question counts), for a like-for-like
timing across oracle versions.
Run: python benchmarks/bench_oracle.py [--worlds 6000] [--depth 2] [--repeat 3] [--plain-worlds]
"""

from __future__ import annotations

import argparse
import statistics
import time

from cogrsi_lib.oracle.sampler import SamplerConfig, question_table, sample_worlds


def run(n_worlds: int, depth: int, seed: int, cfg: SamplerConfig) -> tuple[float, int]:
    start = time.perf_counter()
    worlds = list(sample_worlds(n_worlds, seed, cfg))
    questions = question_table(worlds, depth)
    return time.perf_counter() - start, questions.height


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--worlds", type=int, default=6000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plain-worlds", action="store_true")
    args = ap.parse_args()
    cfg = (SamplerConfig(p_hidden_observer=0.0, p_missed=0.0, lie_conditions=())
           if args.plain_worlds else SamplerConfig())
    times = []
    for r in range(args.repeat):
        seconds, n_q = run(args.worlds, args.depth, seed=r, cfg=cfg)
        times.append(seconds)
        print(f"run {r}: {args.worlds} worlds, {n_q} questions, {seconds:.2f} s")
    print(f"median {statistics.median(times):.2f} s (target < 10 s)")


if __name__ == "__main__":
    main()
