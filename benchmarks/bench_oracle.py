"""Speed of the access oracle: sample N worlds and answer all their questions.

Target (issue: oracle sampler): 6,000 worlds with all their questions in under 10 s on 2 cores.
``--plain-worlds`` samples without secret observers, unnoticed misses or lie conditions: a
probability of 0 draws no random number, so these are the very worlds the sampler drew before
those conditions existed (the same seeds give the same question counts), for a like-for-like
timing across oracle versions.
``--exploretom DIR`` times the oracle beside ExploreToM's belief tracker (Sclar et al., ICLR
2025; ``belief_tracker.py`` of github.com/facebookresearch/ExploreToM, CC BY-NC 4.0, read
from DIR as released, not copied here): random worlds of ExploreToM's action set (enter,
leave, move, truthful private telling), every first- and second-order belief of every
agent, answered by each from the same world dicts, one after the other in this process, and
the answers compared. The worlds keep to what both models share: everyone starts in the
room and sees the object placed (ExploreToM's story opens with a character putting it
there); a whisper's listener is in the room and its speaker tells what is true and believes
it (ExploreToM also lets a character text someone absent, and makes the speaker believe what
they said); a telling that would change no belief is left out (ExploreToM refuses those).
Target (issue: throughput): the oracle at least 3x the tracker's speed end to end.

Run: python benchmarks/bench_oracle.py [--worlds 6000] [--depth 2] [--repeat 5] [--plain-worlds]
     python benchmarks/bench_oracle.py --exploretom DIR [--worlds 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import sys
import time

from cogrsi_lib.oracle import Question, World, answer_all
from cogrsi_lib.oracle.sampler import SamplerConfig, question_table, sample_worlds

NAMES = ("Anne", "Bob", "Carla", "Dan")
BOXES = ("basket", "box", "drawer", "crate")
OBJECT, ROOM = "apple", "kitchen"


def run(n_worlds: int, depth: int, seed: int, cfg: SamplerConfig) -> tuple[float, int]:
    start = time.perf_counter()
    worlds = list(sample_worlds(n_worlds, seed, cfg))
    questions = question_table(worlds, depth)
    return time.perf_counter() - start, questions.height


def exploretom_worlds(tracker_cls, n: int, seed: int) -> list[dict]:
    """``n`` random world dicts in the action set both models share (module docstring),
    each action kept only if ExploreToM's tracker accepts it and it is legal for the oracle."""
    rng = random.Random(seed)
    C = tracker_cls.CONTAINER_LOCATION
    out = []
    while len(out) < n:
        agents = NAMES[: rng.randint(2, 4)]
        containers = BOXES[: rng.randint(2, 4)]
        start = rng.choice(containers)
        bt = tracker_cls()
        for a in agents:
            bt.enter_room(a, ROOM)
        bt.move_object_container(agents[0], OBJECT, start)
        present, where, events = set(agents), start, []
        while len(events) < rng.randint(4, 10):
            kind = rng.choice(("enter", "leave", "move", "move", "whisper"))
            if kind == "enter":
                who = rng.choice(agents)
                if who in present or not bt.enter_room(who, ROOM):
                    continue
                present.add(who)
                events.append({"type": "enter", "agent": who})
            elif kind == "leave":
                who = rng.choice(agents)
                if who not in present or not bt.leave_room(who, ROOM):
                    continue
                present.discard(who)
                events.append({"type": "leave", "agent": who})
            elif kind == "move":
                if not present:
                    continue
                who, to = rng.choice(sorted(present)), rng.choice(containers)
                if to == where or not bt.move_object_container(who, OBJECT, to):
                    continue
                where = to
                events.append({"type": "move", "agent": who, "to": to})
            else:
                if len(present) < 2:
                    continue
                speaker, listener = rng.sample(sorted(present), 2)
                if bt.first_order_beliefs[speaker].get(OBJECT, C) != where:
                    continue  # the speaker tells what is true and believes it
                if not bt.private_communication(speaker, listener,
                                                topic=(OBJECT, C, where, True)):
                    continue
                events.append({"type": "whisper", "speaker": speaker, "listener": listener,
                               "location": where})
        out.append({"agents": list(agents), "containers": list(containers), "object": OBJECT,
                    "room": ROOM, "initial": {"location": start, "present": list(agents)},
                    "events": events})
    return out


def oracle_answers(worlds: list[dict]) -> list[list[str | None]]:
    """Every first- and second-order belief of every world, by the oracle, from the dicts."""
    out = []
    for d in worlds:
        w = World.from_dict(d)
        qs = [Question("location", c) for c in belief_chains(w.agents)]
        out.append([a.value for a in answer_all(w, qs)])
    return out


def tracker_answers(tracker_cls, worlds: list[dict]) -> list[list[str | None]]:
    """The same beliefs by ExploreToM's tracker, replaying each world dict's actions."""
    C = tracker_cls.CONTAINER_LOCATION
    out = []
    for d in worlds:
        bt = tracker_cls()
        obj, room = d["object"], d["room"]
        for a in d["initial"]["present"]:
            bt.enter_room(a, room)
        bt.move_object_container(d["initial"]["present"][0], obj, d["initial"]["location"])
        for e in d["events"]:
            t = e["type"]
            if t == "enter":
                bt.enter_room(e["agent"], room)
            elif t == "leave":
                bt.leave_room(e["agent"], room)
            elif t == "move":
                bt.move_object_container(e["agent"], obj, e["to"])
            else:
                bt.private_communication(e["speaker"], e["listener"],
                                         topic=(obj, C, e["location"], True))
        row = []
        for chain in belief_chains(d["agents"]):
            beliefs = (bt.first_order_beliefs[chain[0]] if len(chain) == 1
                       else bt.second_order_beliefs[chain[0]][chain[1]])
            row.append(beliefs.get(obj, C))
        out.append(row)
    return out


def belief_chains(agents) -> list[tuple[str, ...]]:
    """Every first-order chain, then every second-order chain of two different agents."""
    return [(a,) for a in agents] + [(a, b) for a in agents for b in agents if a != b]


def versus_exploretom(folder: str, n_worlds: int, repeat: int) -> None:
    sys.path.insert(0, folder)
    tracker_cls = importlib.import_module("belief_tracker").FullBeliefTracker
    worlds = exploretom_worlds(tracker_cls, n_worlds, seed=0)
    n_q = sum(len(belief_chains(d["agents"])) for d in worlds)
    events = sum(len(d["events"]) for d in worlds)
    print(f"{n_worlds} worlds, {events} events, {n_q} first- and second-order questions")
    ours, theirs = [], []
    for r in range(repeat):
        t = time.perf_counter()
        a = oracle_answers(worlds)
        ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        b = tracker_answers(tracker_cls, worlds)
        theirs.append(time.perf_counter() - t)
        print(f"run {r}: oracle {ours[-1]:.3f} s, ExploreToM tracker {theirs[-1]:.3f} s")
    same = sum(x == y for ra, rb in zip(a, b, strict=True) for x, y in zip(ra, rb, strict=True))
    o, e = statistics.median(ours), statistics.median(theirs)
    print(f"answers agree: {same} of {n_q}")
    print(f"median: oracle {o:.3f} s, tracker {e:.3f} s; oracle speed {e / o:.2f}x the "
          "tracker's (target >= 3x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--worlds", type=int, default=6000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--plain-worlds", action="store_true")
    ap.add_argument("--exploretom", metavar="DIR", default=None,
                    help="a folder with ExploreToM's belief_tracker.py: time the oracle "
                         "beside it (--worlds defaults to 2000 there)")
    args = ap.parse_args()
    if args.exploretom:
        worlds = args.worlds if "--worlds" in sys.argv else 2000
        versus_exploretom(args.exploretom, worlds, args.repeat)
        return
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
