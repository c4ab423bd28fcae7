"""Each model stage's records, written by the stage's own functions on scripted or fake
backends at a tiny size (no model runs): what ``records.parquet`` holds after the stage."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import polars as pl

from cogrsi_lib.records_schema import STAGES


def _reader_eval() -> pl.DataFrame:
    from cogrsi_lib import stage_params
    from cogrsi_lib.baselines import make_system
    from cogrsi_lib.pairs import generate_split, to_frame
    from cogrsi_lib.reader import ReaderConfig
    from cogrsi_lib.reader import evaluate as ev

    backend = stage_params.load("reader_eval", {}).model.build()  # the CI default: fake
    config = ReaderConfig(sample_max_tokens=32, perception_max_tokens=64)
    systems = [make_system(n, backend, config, "none") for n in ("zero_shot", "sc6", "cogrsi")]
    pairs = ev.select_pairs(to_frame(generate_split("eval", 23, 16, 12)), 2)
    return ev.evaluate(systems, pairs).items


def _harness() -> pl.DataFrame:
    from cogrsi_lib import stage_params
    from cogrsi_lib.harness import stage as hs
    from cogrsi_lib.harness.runtime import HarnessConfig, HarnessSystem

    backend = stage_params.load("harness", {}).model.build()
    items, _ = hs.evaluation_items([], 0, 3, 41)
    systems = [HarnessSystem(backend, HarnessConfig(), name="harness:base"),
               HarnessSystem(backend, HarnessConfig(modules=("skills",)), name="harness:skills")]
    return hs.run(systems, items)


def _pddl_mind() -> pl.DataFrame:
    from cogrsi_lib import pddl

    exs = pddl.oracle_examples(2, seed=5, questions_per_story=2)
    return pddl.run_ladder(pddl.make_backend("scripted", exs), exs)


def _scorecard() -> pl.DataFrame:
    from cogrsi_lib import stage_params
    from cogrsi_lib.scorecard import stage
    from cogrsi_lib.scorecard.runs import stage_records

    p = stage_params.load("scorecard", {"n_per_cell": 2, "n_per_game": 1, "selfpred_test": 2,
                            "observation_counts": [0, 5], "bootstrap_resamples": 50})
    frozen = stage.freeze(p)
    backend = stage.make_backend(p.model, frozen)
    frozen = stage.targets_for(p, frozen, backend)
    return stage_records(stage.run_variants(backend, frozen.suites, stage.variants_for(p)))


def _loops() -> pl.DataFrame:
    from cogrsi_lib import stage_params
    from cogrsi_lib.loops.stage import run_stage, stage_data, write_logs

    cfg = stage_params.load("loops", {
        "seeds": [0, 1], "rounds": 1, "discovery_size": 8, "trial_size": 8, "final_size": 8,
        "heldout_size": 4, "dev_stories": 30, "model": "scripted", "arms": ["gated_library"],
        "log_items": True,
        "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 4,
                  "n_gate_dialogue": 2, "n_eval_narrative": 2, "n_eval_dialogue": 2}})
    with tempfile.TemporaryDirectory() as out:
        run = run_stage(cfg, stage_data(cfg), out)
        write_logs(run, out)
        return pl.read_parquet(Path(out) / "records.parquet")


def _audit() -> pl.DataFrame:
    from cogrsi_lib.audit import (
        Auditor,
        build_translators,
        load_rules,
        sample_audit_worlds,
        translation_records,
    )

    translators = build_translators([
        {"name": "A", "model": "scripted", "prompt": "literal", "seed": 0},
        {"name": "B", "model": "scripted", "prompt": "plain", "seed": 1}])
    rules = load_rules("handwritten").head(2)
    audits = Auditor(sample_audit_worlds(20, 7), translators).audit_many(
        list(zip(rules["rule_id"], rules["text"], strict=True)))
    return translation_records(audits, translators, rules)


def _train() -> pl.DataFrame:
    from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
    from cogrsi_lib.reader.items import ReaderItem
    from cogrsi_lib.train import compare

    items = [ReaderItem(f"i{k}", "1 Ann put the key in the box.", "Where is the key?",
                        ("box", "tray"), "A").with_meta(eval_set="tomi", stratum=f"s{k % 2}")
             for k in range(4)]
    items += compare.open_items(items, ["tomi"])

    def answer(label: str):
        def reply(job) -> str:
            if "Options" not in prompt_text(job) and "A." not in prompt_text(job):
                return '{"answer":"the box"}'
            return f'{{"answer":"{label}"}}'
        return reply

    return pl.concat([compare.ask(ScriptedBackend(answer("A"), model="m-base"), items, "base"),
                      compare.ask(ScriptedBackend(answer("B"), model="m-trained"), items,
                                  "trained")])


_BUILDERS = {"reader_eval": _reader_eval, "harness": _harness, "pddl_mind": _pddl_mind,
             "scorecard": _scorecard, "loops": _loops, "audit": _audit, "train": _train}
assert tuple(_BUILDERS) == STAGES


@functools.cache
def stage_records(stage: str) -> pl.DataFrame:
    """``stage``'s records as its own functions build them (built once per session)."""
    return _BUILDERS[stage]()
