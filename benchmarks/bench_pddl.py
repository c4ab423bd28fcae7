"""Speed of PDDL-Mind's symbolic executor (PDDL-Mind §3: verification costs nothing next to
an LLM call; issue target: a 50-action trace in under 5 ms).

The trace is the gold action sequence of a sampled oracle world (moves are grab + drop, with
whispers, peeks, sleeps and property changes), executed from its parsed problem, so every
action is checked and applied and the full state is kept after each one. Parsing the problem
file is timed separately: it happens once per story, not per action.

    python benchmarks/bench_pddl.py                # 50 actions, 200 repeats
    python benchmarks/bench_pddl.py --actions 100 --agents 5
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from cogrsi_lib.oracle.sampler import SamplerConfig, sample_world
from cogrsi_lib.pddl.executor import execute
from cogrsi_lib.pddl.oracle_map import gold_pddl


def gold_world(n_actions: int, n_agents: int, seed: int):
    """A world whose gold sequence has at least ``n_actions`` actions."""
    cfg = SamplerConfig(min_agents=n_agents, max_agents=n_agents, n_containers=4,
                        min_events=n_actions, max_events=n_actions, p_open_container=0.5)
    rng = random.Random(seed)
    while True:
        gold = gold_pddl(sample_world(rng, cfg))
        if len(gold.actions) >= n_actions:
            return gold


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--actions", type=int, default=50)
    ap.add_argument("--agents", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    gold = gold_world(args.actions, args.agents, args.seed)
    t0 = time.perf_counter()
    task = gold.task()
    first_parse_ms = (time.perf_counter() - t0) * 1e3  # includes compiling the grammar
    t0 = time.perf_counter()
    gold.task()
    parse_ms = (time.perf_counter() - t0) * 1e3
    actions = gold.actions[: args.actions]
    trace = execute(task, actions)
    assert not trace.rejected and len(trace.steps) == len(actions)
    runs = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        execute(task, actions)
        runs.append((time.perf_counter() - t) * 1e3)
    runs.sort()
    result = {
        "actions": len(actions),
        "agents": args.agents,
        "objects": len(task.objects),
        "facts_in_final_state": len(trace.final),
        "execute_ms_median": round(statistics.median(runs), 3),
        "execute_ms_p90": round(runs[int(0.9 * (len(runs) - 1))], 3),
        "execute_ms_min": round(runs[0], 3),
        "per_action_us_median": round(statistics.median(runs) / len(actions) * 1e3, 1),
        "problem_parse_ms_first": round(first_parse_ms, 2),
        "problem_parse_ms": round(parse_ms, 2),
        "target_ms": 5.0,
        "meets_target": statistics.median(runs) < 5.0,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
