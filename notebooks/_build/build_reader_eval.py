"""Build notebooks/reader_eval.ipynb (outputs empty; run it with `cogrsi stage reader_eval`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): a fake backend whose replies take each request's declared form
# (always option A), 3 pairs and 2 items per benchmark; `dvc repro` passes
# params.yaml[reader_eval] (embedded CPU model, or vLLM on a GPU).
llm = {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}}
systems = ["zero_shot", "sc6", "perceptom", "cogrsi"]
principle = "expert"
reader_config = {"sample_max_tokens": 96, "perception_max_tokens": 160}
structured = True  # enforce each reply's declared format while decoding
reference = "sc6"  # the system every other one is compared with (paired bootstrap)
pairs = {"eval_seed": 23, "n_eval_narrative": 160, "n_eval_dialogue": 160}
n_pairs = 3
benchmarks = ["tombench", "tomi"]
n_per_benchmark = 2
batch_size = 64
out_dir = None
"""

CELLS = [
    ("markdown", "# Grounded reader and baselines\n\n"
     "The grounded reader (CogRSI §4.1, App. G.6) and its baselines (zero-shot, CoT, "
     "self-consistency, SimToM, PercepToM and their +SC forms, §5.1) on one shared backend, "
     "on (a) counterfactual pairs of the oracle's evaluation split (a pair counts only if "
     "both versions are right, §3) and (b) the first items of each benchmark whose files are "
     "present, scored by that benchmark's own rule. An unparsed answer is wrong. Calls and "
     "tokens are counted per question (G.7: the paper's reader makes 7.3 calls and 1.51x the "
     "tokens of SC k=6). Logic: `cogrsi_lib/reader/evaluate.py`."),
    ("code", "import time\n\n"
     "from cogrsi_lib import pairs as pairs_lib\n"
     "from cogrsi_lib.baselines import make_system\n"
     "from cogrsi_lib.llm import start_tally\n"
     "from cogrsi_lib.llm.config import build_backend\n"
     "from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir\n"
     "from cogrsi_lib.reader import ReaderConfig\n"
     "from cogrsi_lib.reader import evaluate as ev\n"
     "from cogrsi_lib.reports import save_chart, write_json, write_replies, write_table"),
    ("code", "out = resolve_out_dir(out_dir, 'reader_eval')\n"
     "tally = start_tally()  # every model call of this stage, by prompt family\n"
     "backend = build_backend(llm, base_dir=find_repo_root())\n"
     "config = ReaderConfig(**reader_config, structured=structured)\n"
     "chosen = [make_system(name, backend, config, principle) for name in systems]\n"
     "split = pairs_lib.to_frame(pairs_lib.generate_split(\n"
     "    'eval', pairs['eval_seed'], pairs['n_eval_narrative'], pairs['n_eval_dialogue']))\n"
     "pair_records = ev.select_pairs(split, n_pairs)\n"
     "bench_items, skipped = ev.load_bench_heads(benchmarks, n_per_benchmark)\n"
     "{'pair_versions': pair_records.height,\n"
     " 'benchmarks': {k: len(v) for k, v in bench_items.items()}, 'skipped': skipped}"),
    ("code", "t0 = time.perf_counter()\n"
     "result = ev.evaluate(chosen, pair_records, bench_items, batch_size=batch_size)\n"
     "wall_s = time.perf_counter() - t0\n"
     "result.items.write_parquet(out / 'items.parquet')\n"
     "result.items.height"),
    ("markdown", "## Accuracy\n\nPer system and source: `accuracy` is the share whose final "
     "answer equals the gold (unparsed answers count as wrong); `score` is the per-item "
     "score by the source's own rule (pairs: the oracle's gold)."),
    ("code", "accuracy = result.accuracy_table()\n"
     "write_table(accuracy, out / 'accuracy', title='Accuracy by system and source')\n"
     "accuracy"),
    ("markdown", "## Against chance and against a reference\n\n`chance` is the mean of "
     "1/(number of options) over the multiple-choice items; the interval bootstraps accuracy "
     "over stories; `best_constant` is what always giving the commonest gold label scores "
     "(a model stuck on one position reaches it without reading). A system whose interval contains"
     " chance is *near chance*: on the CPU "
     "default (SmolLM2-135M) expect that, and read no difference between systems into it. "
     "Then each system's score minus the reference's on the same items, with the paired "
     "bootstrap over stories (CogRSI §3) and Holm's correction over the systems."),
    ("code", "chance = result.chance_table()\n"
     "write_table(chance, out / 'chance', title='Accuracy against chance (95% interval over "
     "stories)')\n"
     "paired = result.paired_table(reference) if reference in systems else None\n"
     "if paired is not None:\n"
     "    write_table(paired, out / 'paired',\n"
     "                title=f'Score difference against {reference} (paired bootstrap over "
     "stories)')\n"
     "chance"),
    ("code", "paired"),
    ("code", "bench_scores = result.bench_table()\n"
     "write_table(bench_scores, out / 'bench_scores',\n"
     "            title=\"Benchmark headline scores by each benchmark's own rule\")\n"
     "bench_scores"),
    ("markdown", "## Pair validity\n\nItem accuracy and pair validity per system, overall, "
     "by form and by variant."),
    ("code", "validity = result.pair_validity_table()\n"
     "write_table(validity, out / 'pair_validity', title='Pair validity by system')\n"
     "validity.filter(validity['variant'] == 'all') if validity.height else validity"),
    ("markdown", "## Calls and tokens\n\nPer question, overall and per source, with the "
     "token ratio against SC k=6; then wall time and throughput of this run (calls served "
     "from the completion cache are free)."),
    ("code", "cost = result.cost_table()\n"
     "write_table(cost, out / 'cost', title='Calls and tokens per question')\n"
     "cost.filter(cost['source'] == 'all')"),
    ("code", "throughput = result.throughput_table()\n"
     "write_table(throughput, out / 'throughput', title=f'Throughput ({wall_s:.1f} s in all)')\n"
     "throughput.select('system', 'questions', 'calls', 'cached_calls')"),
    ("markdown", "## Cost and accuracy\n\nScore against tokens per question, one point per "
     "system and source."),
    ("code", "write_table(result.cost_accuracy(), out / 'cost_accuracy')\n"
     "# saved, not displayed: an inline chart embeds a random element id in the notebook\n"
     "[p.name for p in save_chart(result.cost_accuracy_chart(), out / 'cost_accuracy')]"),
    ("markdown", "## Replies\n\nEvery model call of the stage by prompt family: calls, "
     "parse rate against the family's declared format, share that hit the token cap and "
     "mean reply tokens."),
    ("code", "replies = write_replies(tally, out / 'replies_by_family')\n"
     "write_json({'backend': llm.get('backend'), 'model': backend.model, 'systems': systems,\n"
     "            'questions': result.items.height // max(1, len(systems)),\n"
     "            'skipped_benchmarks': skipped, 'structured': structured,\n"
     "            'chance': chance.to_dicts(), 'replies': tally.to_dict()},\n"
     "           out / 'summary.json')\n"
     "replies"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "reader_eval.ipynb")
