"""Speed of the paired bootstrap on a main-test-sized sample (CogRSI §3: 3,349 questions).

Run:  python benchmarks/bench_bootstrap.py [--questions 3349] [--resamples 2000] [--repeat 7]

Builds a paired sample shaped like the main test sample: eight benchmarks of ~419 questions,
1-6 questions per story, two cells in two benchmarks (SimpleToM-, ExploreToM-like headlines),
and times, with 2,000 resamples each:

* ``pooled``: one paired bootstrap over all questions, resampling stories;
* ``main``: the Main difference, stories resampled within each benchmark and each
  benchmark's headline (mean of its cell means) averaged over the eight;
* ``seeds``: a loop comparison, 3 seeds per arm, resampling seeds and stories.

Prints the best and median wall time of ``--repeat`` runs.  Not a unit test: timing depends on
the machine (the target is under 2 s on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from cogrsi_lib import stats


def sample(n_questions: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A paired sample: per question, benchmark, story, cell and two systems' 0/1 scores."""
    bench = np.repeat(np.arange(8), int(np.ceil(n_questions / 8)))[:n_questions]
    story = np.empty(n_questions, dtype=np.int64)
    next_id, k = 0, 0
    while k < n_questions:
        size = int(rng.integers(1, 7))
        story[k:k + size] = next_id
        next_id, k = next_id + 1, k + size
    cell = np.where(np.isin(bench, [1, 2]), rng.integers(0, 2, n_questions), 0)
    a = (rng.random(n_questions) < 0.73).astype(float)
    b = (rng.random(n_questions) < 0.69).astype(float)
    return {"bench": bench, "story": story, "cell": cell, "a": a, "b": b}


def timed(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3349)
    parser.add_argument("--resamples", type=int, default=stats.DEFAULT_RESAMPLES)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    s = sample(args.questions, rng)
    seeds_a = (rng.random((3, args.questions)) < 0.73).astype(float)
    seeds_b = (rng.random((3, args.questions)) < 0.69).astype(float)
    b = args.resamples
    cases = {
        "pooled": lambda: stats.paired_bootstrap(s["a"], s["b"], s["story"], n_resamples=b),
        "main": lambda: stats.paired_bootstrap(s["a"], s["b"], s["story"], s["cell"],
                                               s["bench"], n_resamples=b),
        "seeds": lambda: stats.seed_scenario_bootstrap(seeds_a, seeds_b, s["story"],
                                                       n_resamples=b),
    }
    print(f"{args.questions} paired questions, {len(np.unique(s['story']))} stories, "
          f"{b} resamples, {os.cpu_count()} CPU(s), numpy {np.__version__}")
    for name, fn in cases.items():
        result = fn()
        best, median = timed(fn, args.repeat)
        print(f"{name:7s} best {best:.3f} s  median {median:.3f} s  "
              f"(estimate {result.estimate:+.4f}, 95% CI [{result.low:+.4f}, {result.high:+.4f}])")


if __name__ == "__main__":
    main()
