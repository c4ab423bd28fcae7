"""Build notebooks/scorecard.ipynb (outputs empty; run it with `cogrsi stage scorecard`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): the scripted model; `dvc repro` passes params.yaml[scorecard].
model = "scripted"  # "embedded" (the CPU model) or a mapping of llm backend settings
alt_model = "scripted-alt"  # Gate D's alternate model (another real one for a real model);
# None leaves that replication not run
llm_cache_dir = ".cache/llm"
n_per_cell = 4
n_agents = 4
n_containers = 4
min_events = 8
max_events = 16
seed = 5
replication_seed = 17
applied_depths = [1, 2, 3]
n_per_game = 2
strategic_seed = 3
history_length = 10
opponent_noise = 0.15
selfpred_classes = ["colour"]
selfpred_test = 4
observation_counts = [0, 5, 10, 20]
selfpred_seed = 7
interventions = ["perspective", "store"]
bootstrap_resamples = 300
gates = {}
reply_caps = {}  # reply caps in tokens per prompt family (defaults: bare 64, perspective 160,
# store 320)
cross_model = "scripted-other"  # Suite D's cross-agent target: a second scripted model,
# "embedded" or llm backend settings
cross_temperature = 0.0  # its sampling temperature (> 0 when it is the predictor's own model)
structured = True  # enforce each reply's declared format while decoding
out_dir = None
"""

CELLS = [
    ("markdown", "# Recursive-reasoning scorecard\n\n"
     "The recursive-reasoning plan's four suites on one set of frozen items: A, nested belief "
     "R0-R4 (`cogrsi_lib.nested`); B, applied ToM (a belief and a behaviour question on the "
     "same oracle state); C, strategic (games with known answers and bounded level-k "
     "opponents); D, self and cross-agent prediction (a prediction ledger, predictions "
     "written before the target is queried). Each reader variant answers the same items: the "
     "bare model, the recursive-perspective prompt (§10) and the explicit epistemic store "
     "(§11), each with its ablation. The §17 profile is reported as a full vector; the RR "
     "scalar only beside it. Gates A-E (§16) decide keep or toss, with every outcome "
     "recorded.\n\n"
     "**With the default `model = \"scripted\"` the answers come from a scripted model whose "
     "behaviour is fixed in advance** (`cogrsi_lib/scorecard/scripted.py`: depth collapse "
     "past two agents, leakage and a knowing-doing gap under the bare prompt, rationality "
     "projection in games); the numbers below show the machinery, not a real model. "
     "`params.yaml` (`dvc repro`) runs the embedded CPU model at a tiny size, and llm "
     "backend settings (e.g. vLLM) measure a real model at full size."),
    ("code", "from IPython.display import SVG\n\n"
     "from cogrsi_lib.llm import start_tally\n"
     "from cogrsi_lib.nested import require\n"
     "from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir\n"
     "from cogrsi_lib.reader import records_to_frame\n"
     "from cogrsi_lib.reports import save_chart, write_json, write_replies, write_table\n"
     "from cogrsi_lib.stats import chance_table\n"
     "from cogrsi_lib.scorecard import (\n"
     "    build_profile, decision_checks, decision_table, depth_curves, depth_figure,\n"
     "    interval_table, scorecard_table,\n"
     ")\n"
     "from cogrsi_lib.scorecard import stage\n"
     "from cogrsi_lib.scorecard.runs import stack\n"
     "from cogrsi_lib.scorecard.selfpred import curve_chart"),
    ("code", "params = stage.stage_params({name: globals()[name] for name in stage.DEFAULTS})\n"
     "out = resolve_out_dir(out_dir, 'scorecard')\n"
     "tally = start_tally()  # every model call of this stage, by prompt family\n"
     "gates_cfg = stage.gate_config(params)\n"
     "variants = stage.variants_for(params)\n"
     "variants"),
    ("markdown", "## Frozen items and Gate A\n\n"
     "Suite A items come from the nested-belief generator; Suite B pairs each R1-R3 item "
     "with a behaviour question; Suite C draws games and opponents; Suite D draws tasks. A "
     "second Suite A/B set on `replication_seed` is for Gate D. Gate A (benchmark integrity) "
     "must pass before any run counts."),
    ("code", "frozen = stage.freeze(params)\n"
     "s = frozen.suites\n"
     "print(f'Suite A {len(s.nested)} items, Suite B {len(s.applied)} pairs, '\n"
     "      f'Suite C {len(s.strategic)} questions, Suite D {len(s.selfpred.tasks())} tasks; '\n"
     "      f'replication: {len(frozen.replication.nested)} + {len(frozen.replication.applied)}')\n"
     "write_table(frozen.integrity, out / 'gate_a_integrity', title='Gate A: benchmark "
     "integrity of the Suite A items')\n"
     "require(frozen.integrity)\n"
     "frozen.integrity"),
    ("markdown", "## Runs\n\nEvery variant answers every suite. Per-item records (answer, "
     "confidence, calls, tokens) go to `records.parquet`. Suite D's cross-agent target is "
     "`cross_model`: a second scripted model, or a real one (the predictor's own weights "
     "only when sampled at `cross_temperature > 0`), whose policy change is a frozen system "
     "message."),
    ("code", "root = find_repo_root()\n"
     "backend = stage.make_backend(params['model'], frozen, params['llm_cache_dir'],\n"
     "                             str(root) if root else None)\n"
     "frozen = stage.targets_for(params, frozen, backend, str(root) if root else None)\n"
     "print('Suite D cross-agent target:', frozen.suites.cross_targets[0].description)\n"
     "runs = stage.run_variants(backend, frozen.suites, variants, params['reply_caps'],\n"
     "                          params['structured'])\n"
     "records = [r for run in runs.values() for r in run.task_records()]\n"
     "records_to_frame(records).write_parquet(out / 'records.parquet')\n"
     "print(backend.identity, {v: len(run.task_records()) for v, run in runs.items()})"),
    ("markdown", "## The profile (§17)\n\n"
     "Rows in the plan's order; RR is the last row and is never reported without the vector "
     "above it. Recursive lift is accuracy minus the best shallow heuristic at each depth "
     "(plan §7); lift vs bare is Suite A accuracy minus the bare model's."),
    ("code", "profiles = [build_profile(runs[v], runs['bare']) for v in variants]\n"
     "table = scorecard_table(profiles)\n"
     "write_table(table, out / 'scorecard', title='Recursive Reasoning Profile (plan §17); RR "
     "only beside the full vector')\n"
     "(out / 'profiles.txt').write_text('\\n\\n'.join(p.render() for p in profiles) + '\\n')\n"
     "print(profiles[0].render())\n"
     "table"),
    ("code", "intervals = interval_table(runs['bare'], n_resamples=params['bootstrap_resamples'])\n"
     "for v in variants[1:]:\n"
     "    intervals = intervals.vstack(interval_table(runs[v],\n"
     "                                 n_resamples=params['bootstrap_resamples']))\n"
     "write_table(intervals, out / 'intervals', title='Suite A metrics with 95% cluster-bootstrap "
     "intervals over stories')\n"
     "intervals.filter(intervals['metric'].str.starts_with('R'))"),
    ("markdown", "## Against chance\n\nSuite A accuracy of each variant against guessing "
     "(mean of 1/options), with a 95% interval over stories; `best_constant` is what always giving"
     " the commonest gold label scores (a model stuck on one position reaches it without reading)."
     " The embedded CPU model is "
     "expected near chance: read no gate outcome below as a property of the interventions "
     "then."),
    ("code", "chance = chance_table(stack(runs, lambda r: records_to_frame(r.nested.records)),\n"
     "                      ['system'])\n"
     "write_table(chance, out / 'chance', title='Suite A accuracy against chance')\n"
     "chance"),
    ("markdown", "## Depth curve\n\nAccuracy by depth of every variant and of the best "
     "shallow heuristic; dashed: chance (1 / containers)."),
    ("code", "curves = depth_curves(list(runs.values()), frozen.suites.heuristic_baselines())\n"
     "write_table(curves, out / 'depth_curve', title='Accuracy by depth per variant and the "
     "best shallow heuristic')\n"
     "svg, _ = save_chart(depth_figure(curves, chance=1 / n_containers), out / 'depth_curve')\n"
     "SVG(filename=svg)"),
    ("markdown", "## Suite A by lie condition\n\nPlan §5.4 scores lies separately: stories "
     "without a lie, an unlabelled lie, a known liar (everyone knows the speaker lies, so "
     "nobody takes their word) and a lie revealed to the reader only."),
    ("code", "by_lie = stack(runs, lambda r: r.nested.score.by_lie_condition)\n"
     "write_table(by_lie, out / 'by_lie_condition', title='Suite A accuracy by lie "
     "condition')\n"
     "by_lie"),
    ("markdown", "## Suite B: applied ToM\n\nThe four cells (belief right/wrong x behaviour "
     "right/wrong) and the conversion P(behaviour right | belief right)."),
    ("code", "cells = stack(runs, lambda r: r.applied.score.cells)\n"
     "write_table(cells, out / 'applied_cells', title='Suite B: four cells and conversion')\n"
     "cells.filter(cells['subset'] == 'all')"),
    ("markdown", "## Suite C: strategic\n\nAccuracy by game and question, and the predictive "
     "lift over the equilibrium answer, the population prior and the opponent's modal "
     "action (`oracle`: the mode of the opponent's true policy, the ceiling)."),
    ("code", "by_kind = stack(runs, lambda r: r.strategic.score.by_kind)\n"
     "lifts = stack(runs, lambda r: r.strategic.score.lifts)\n"
     "write_table(by_kind, out / 'strategic_accuracy', title='Suite C: accuracy by game and "
     "question')\n"
     "write_table(lifts, out / 'strategic_lift', title='Suite C: target-prediction lift over "
     "answers that need no model of the target')\n"
     "lifts.filter(lifts['system'] == 'bare')"),
    ("markdown", "## Suite D: self and cross-agent prediction\n\nThe ledger (one row per "
     "prediction, written before the target was queried), lifts over the base-rate and "
     "same-as-predictor answers, and the learning curve before and after the target's policy "
     "changes. An entry whose target gave no parseable answer stays on the ledger but is not "
     "scored (`no_target_answer`), so a silent target leaves accuracy undefined, not zero."),
    ("code", "ledger = stack(runs, lambda r: r.selfpred.ledger)\n"
     "ledger.write_parquet(out / 'prediction_ledger.parquet')\n"
     "summary = stack(runs, lambda r: r.selfpred.summary)\n"
     "write_table(summary, out / 'prediction_summary', title='Suite D: accuracy, Brier and lifts "
     "by target')\n"
     "curve = runs['bare'].selfpred.curve\n"
     "write_table(curve, out / 'learning_curve', title='Suite D: learning curve of the bare "
     "variant')\n"
     "svg, _ = save_chart(curve_chart(curve), out / 'learning_curve')\n"
     "SVG(filename=svg)"),
    ("markdown", "## Interventions and Gates B-E\n\n"
     "Gate D re-runs the variants on the replication items (new procedural seed) and on "
     "the alternate model; Gate E compares each intervention with its own ablation."),
    ("code", "seed_runs = stage.run_variants(backend, frozen.replication, variants,\n"
     "                               params['reply_caps'], params['structured'])\n"
     "alt = stage.make_backend(params['alt_model'], frozen, params['llm_cache_dir'],\n"
     "                         str(root) if root else None)\n"
     "model_runs = (stage.run_variants(alt, frozen.core(), variants, params['reply_caps'],\n"
     "                                 params['structured']) if alt else None)\n"
     "gate_a_outcome = stage.check_gate_a(frozen, list(runs.values()))\n"
     "decisions = [\n"
     "    stage.decide(name, runs,\n"
     "                 stage.replications_for(name, seed_runs, model_runs,\n"
     "                                        f'seed {replication_seed}',\n"
     "                                        alt.identity if alt else ''),\n"
     "                 gate_a_outcome, gates_cfg)\n"
     "    for name in params['interventions']\n"
     "]\n"
     "gate_checks = decision_checks(decisions)\n"
     "write_table(gate_checks, out / 'gates', title='Gates A-E: every check of every "
     "intervention')\n"
     "decided = decision_table(decisions)\n"
     "write_table(decided, out / 'decisions', title='Keep or toss per intervention')\n"
     "decided"),
    ("code", "gate_checks.filter(gate_checks['gate'] != 'A').select(\n"
     "    'intervention', 'gate', 'check', 'status', 'estimate', 'low', 'high', 'threshold')"),
    ("markdown", "## Replies\n\nEvery model call of the stage by prompt family: calls, "
     "parse rate against the family's declared format, share that hit the token cap and "
     "mean reply tokens."),
    ("code", "replies = write_replies(tally, out / 'replies_by_family')\n"
     "summary_json = stage.summary_json(profiles, decisions) | {\n"
     "    'model': backend.identity, 'structured': params['structured'],\n"
     "    'chance': chance.to_dicts(), 'replies': tally.to_dict()}\n"
     "write_json(summary_json, out / 'summary.json')\n"
     "replies"),
    ("code", "sorted(p.name for p in out.iterdir())"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "scorecard.ipynb")
