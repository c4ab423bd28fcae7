"""Build notebooks/harness.ipynb (outputs empty; run it with `cogrsi stage harness`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): a fake backend whose replies take each request's declared form
# with fixed values (answer A, variable desire, skill and category choices that are not in
# every list, so some routes do not parse and the fallbacks run); `dvc repro` passes
# params.yaml[harness] (the embedded CPU model, or vLLM on a GPU).
llm = {"backend": "fake", "reply": {"answer": "A", "variable": "desire",
                                    "skill": "desire.preference", "dimension": "Belief",
                                    "categories": ["faux_pas"], "labels": {}}}
ablations = ["base", "skills", "memory", "retrieval", "full"]
harness_config = {"answer_max_tokens": 32, "route_max_tokens": 32, "max_reroutes": 1}
benchmarks = ["tombench", "hi-tom"]
n_per_benchmark = 3
n_oracle = 3
oracle_seed = 41
dev = {"n_tombench": 3, "n_oracle": 2, "oracle_seed": 43, "rounds": 1, "budget": 32,
       "max_tokens": 64}
agreement = {"n_worlds": 50, "seed": 0, "max_depth": 4}
batch_size = 64
structured = True  # enforce each reply's declared format while decoding
out_dir = None
"""

CELLS = [
    ("markdown", "# Actio-style harness: module ablations\n\n"
     "A frozen model wrapped by a harness (zing-social-mind-report §5): PRISM skills with "
     "asked-variable routing and self-exit (§5.3), Starling attribution-first state (§5.4), "
     "SAGE experience memory with its fallback cascade (§5.5) and gated retrieval of "
     "normative notes (§5.6), each gated per item and recorded in the trace. Configurations "
     "as Table 10: Base, +skills, +memory (Starling + SAGE), +retrieval, Full, on the same "
     "items; one greedy direct answer per item. Logic: `cogrsi_lib/harness/`."),
    ("code", "import time\n\n"
     "from cogrsi_lib.harness import stage as hs\n"
     "from cogrsi_lib.harness.embedding import MiniLMEmbedder\n"
     "from cogrsi_lib.harness.runtime import HarnessConfig, HarnessSystem, build_ablations\n"
     "from cogrsi_lib.llm import start_tally\n"
     "from cogrsi_lib.llm.config import build_backend\n"
     "from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir\n"
     "from cogrsi_lib.reports import write_json, write_replies, write_table\n"
     "from cogrsi_lib.stats import chance_table"),
    ("code", "out = resolve_out_dir(out_dir, 'harness')\n"
     "tally = start_tally()  # every model call of this stage, by prompt family\n"
     "harness_config = {**harness_config, 'structured': structured}\n"
     "backend = build_backend(llm, base_dir=find_repo_root())\n"
     "embedder = MiniLMEmbedder()\n"
     "items, skipped = hs.evaluation_items(benchmarks, n_per_benchmark, n_oracle, oracle_seed)\n"
     "{'items': {k: len(v) for k, v in items.items()}, 'skipped': skipped}"),
    ("markdown", "## SAGE distillation (development items only)\n\n"
     "The Generator is the base system; the Reflector's replies are checked strictly and "
     "rejections logged. Development items are disjoint from the evaluated ones."),
    ("code", "t0 = time.perf_counter()\n"
     "test_ids = [it.item_id for its in items.values() for it in its]\n"
     "dev_items = hs.development_items(dev['n_tombench'], dev['n_oracle'], dev['oracle_seed'],\n"
     "                                 skip_tombench=n_per_benchmark)\n"
     "base = HarnessSystem(backend, HarnessConfig(**harness_config), name='harness:base')\n"
     "store, distil_log = hs.distil_store(base, dev_items, embedder, test_ids=test_ids,\n"
     "                                    budget=dev['budget'], rounds=dev['rounds'],\n"
     "                                    max_tokens=dev['max_tokens'])\n"
     "store.to_json(out / 'experience_store.json')\n"
     "write_json(distil_log, out / 'distil_log.json')\n"
     "{'dev_items': len(dev_items), 'entries': len(store),\n"
     " 'seconds': round(time.perf_counter() - t0, 1)}"),
    ("markdown", "## Ablations\n\nAccuracy by configuration and source (unparsed answers "
     "count as wrong), with calls and tokens per question, and each configuration's change "
     "against Base in points."),
    ("code", "t0 = time.perf_counter()\n"
     "systems = build_ablations(backend, ablations, config=harness_config, store=store,\n"
     "                          embedder=embedder)\n"
     "frame = hs.run(systems, items, batch_size=batch_size)\n"
     "wall_s = time.perf_counter() - t0\n"
     "frame.write_parquet(out / 'items.parquet')\n"
     "accuracy = hs.accuracy_table(frame)\n"
     "write_table(accuracy, out / 'ablations', title='Accuracy by harness configuration')\n"
     "accuracy"),
    ("markdown", "## Against chance\n\nEach configuration's accuracy on the "
     "multiple-choice items against guessing (mean of 1/options), with a 95% interval over "
     "stories; `best_constant` is what always giving the commonest gold label scores. The embedded"
     " CPU model is expected near chance: differences between "
     "configurations then say nothing about the modules."),
    ("code", "chance = chance_table(frame, ['system'])\n"
     "write_table(chance, out / 'chance', title='Accuracy against chance')\n"
     "chance"),
    ("code", "deltas = hs.delta_table(accuracy)\n"
     "write_table(deltas, out / 'ablation_deltas', title='Change against Base (points)')\n"
     "deltas.filter(deltas['source'] == 'all')"),
    ("markdown", "## PRISM routing (§5.3.3.3)\n\nFamily-hit and strict-hit against the "
     "items' own labels (ToMBench ability, Hi-ToM order, oracle depth); repair and damage "
     "against Base's answers on the same items. Unrouted items count as misses."),
    ("code", "import polars as pl\n\n"
     "routed = [s.name for s in systems if s.router is not None]\n"
     "routing = pl.concat([hs.routing_table(frame, n) for n in routed]) if routed else None\n"
     "if routing is not None:\n"
     "    write_table(routing, out / 'routing', title='Routing diagnostics')\n"
     "routing"),
    ("markdown", "## Module gates\n\nWhat each gate decided, per configuration: Starling "
     "(inject, or why not), SAGE's cascade level, retrieval's decision, the route's status."),
    ("code", "decisions = hs.module_decisions(frame)\n"
     "write_table(decisions, out / 'module_decisions', title='Module gate decisions')\n"
     "coverage = [hs.experience_coverage(frame, s.name) for s in systems\n"
     "            if s.selector is not None]\n"
     "write_json(coverage, out / 'experience_coverage.json')\n"
     "decisions"),
    ("markdown", "## Starling against the oracle and Hi-ToM (§5.8.4)\n\nAgreement of the "
     "state memory's answer with the oracle's on every question of sampled worlds, with the "
     "oracle's own perceivers (gold) and with perceivers derived from presence; and with "
     "Hi-ToM's gold labels, under Hi-ToM's stated rule and its generator's rule."),
    ("code", "state = hs.state_agreement(agreement['n_worlds'], agreement['seed'],\n"
     "                           agreement['max_depth'])\n"
     "write_table(state, out / 'state_agreement_oracle', title='Starling vs the oracle')\n"
     "hitom = hs.hitom_agreement()\n"
     "if hitom is not None:\n"
     "    write_table(hitom, out / 'state_agreement_hitom', title='Starling vs Hi-ToM gold')\n"
     "state"),
    ("markdown", "## Replies\n\nEvery model call of the stage by prompt family: calls, "
     "parse rate against the family's declared format, share that hit the token cap and "
     "mean reply tokens."),
    ("code", "replies = write_replies(tally, out / 'replies_by_family')\n"
     "write_json({'backend': llm.get('backend'), 'model': backend.model,\n"
     "            'embedder': embedder.name, 'ablations': ablations, 'wall_s': round(wall_s, 1),\n"
     "            'skipped_benchmarks': skipped, 'structured': structured,\n"
     "            'chance': chance.to_dicts(), 'replies': tally.to_dict()},\n"
     "           out / 'summary.json')\n"
     "replies"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "harness.ipynb")
