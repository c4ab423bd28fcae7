"""Build notebooks/loops.ipynb (outputs empty; run it with `cogrsi stage loops`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): the scripted backend (no model), one seed, 2 rounds, cohorts
# of 8. `dvc repro` passes params.yaml[loops] (8 rounds, cohorts of 80, final 300, 6 seeds).
# The tiny setting on the CPU model is these values with backend = "embedded".
arms = ["accuracy_loop", "accuracy_library", "gated_library", "pairs_as_data",
        "single_principle", "gepa"]
seeds = [0]
rounds = 2
discovery_size = 8
trial_size = 8
n_trials = 3
final_size = 24
heldout_size = 12
max_candidates = 4
failures_per_group = 4
pair_groups = 2
delta = 3.0
min_nonneg = 2
loose_delta = 1.0
gate_tolerance = 2
gate_all = False
backend = "scripted"
llm = {}
reader = {}
builder_temperature = 0.7
builder_max_tokens = 512
dev_stories = 60
dev_seed = 101
dev_max_depth = 2
dev_benchmarks = []
manifest_dir = "data/manifests"
pairs = {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8, "n_gate_dialogue": 4,
         "n_eval_narrative": 8, "n_eval_dialogue": 4}
eval_pairs = True
gepa_seeds = [0]
gepa_budget = 60
gepa_val_size = 8
gepa_minibatch = 3
log_items = False
batch_size = 64
audit = {}
noise_sd = 2.7
noise_rounds = 100000
structured = True  # enforce each reply's declared format while decoding
out_dir = None
"""

CELLS = [
    ("markdown", "# Strategy-evolution loops\n\n"
     "Each arm evolves the reader's principle P from nothing over a number of rounds "
     "(CogRSI §4.2, App. C.2): a discovery cohort of new development questions, the builder's "
     "proposals from the reader's failures (up to four, JSON, rejected when malformed, over "
     "the word limit or naming the stories' characters or places), three trial cohorts, and "
     "registration: a mean gain of at least delta points, a gain of at least zero on two of "
     "the three cohorts, and the arm's gates. Then every learned principle, no principle and "
     "the expert principle answer a final cohort of unseen questions. With `backend = "
     "'scripted'` no model runs: `cogrsi_lib/loops/scripted.py` stands in for it, so the "
     "numbers below only show that the pipeline works."),
    ("code", "from cogrsi_lib import loops\n"
     "from cogrsi_lib.loops import report\n"
     "from cogrsi_lib.loops.stage import write_logs\n"
     "from cogrsi_lib.llm import start_tally\n"
     "from cogrsi_lib.pipeline import resolve_out_dir\n"
     "from cogrsi_lib.reports import save_chart, write_json, write_replies, write_table\n"
     "from cogrsi_lib.stats import chance_table"),
    ("code", "out = resolve_out_dir(out_dir, 'loops')\n"
     "tally = start_tally()  # every model call of this stage, by prompt family\n"
     "cfg = loops.StageConfig.from_params(globals(), pick=True)\n"
     "data = loops.stage_data(cfg)\n"
     "{'dev_questions': len(data.pool), 'dev_stories': len({it.story for it in data.pool}),\n"
     " 'gate_pairs': data.gate['pair_id'].n_unique(),\n"
     " 'eval_pairs': data.eval['pair_id'].n_unique()}"),
    ("markdown", "## Run every arm and seed\n\n"
     "Each loop writes its rounds under `runs/<arm>/seed<k>` and resumes from its last "
     "finished round when the stage runs again."),
    ("code", "run = loops.run_stage(cfg, data, out)\n"
     "paths = write_logs(run, out)\n"
     "run.rounds.select('arm', 'seed', 'round', 'discovery_accuracy', 'trial_accuracy',\n"
     "                  'n_candidates', 'n_rejected', 'admitted', 'new_size')"),
    ("markdown", "## Round by round (Figure 4 style)\n\n"
     "The incumbent's accuracy on each round's new discovery cohort; filled marks are rounds "
     "that admitted an update. Below: what each loop kept."),
    ("code", "# saved, not displayed: an inline chart embeds a random element id in the notebook\n"
     "[p.name for p in save_chart(report.round_chart(run.rounds), out / 'rounds')]"),
    ("code", "kept = report.kept_rules(run.rounds, run.candidates)\n"
     "write_table(kept, out / 'kept_rules', title='Admitted updates, round by round')\n"
     "kept"),
    ("markdown", "## Builder replies\n\nAccepted replies and rejections by reason (App. C.2)."),
    ("code", "replies = report.replies_table(run.replies)\n"
     "write_table(replies, out / 'replies', title='Builder replies by outcome')\n"
     "replies"),
    ("markdown", "## Table 1: who writes the principle\n\n"
     "Dev.: accuracy on the final cohort of unseen development questions (mean over seeds; "
     "GEPA selects on its own validation split, so its Dev. is left out). Gate pairs: pair "
     "validity on the gate split; own pairs: on the held-out evaluation split. Test Main, "
     "BigToM-U and the audit's invalid share are not computed by this stage."),
    ("code", "dev_arms = [a for a in run.arms if a != 'gepa']\n"
     "t1 = report.table1(run.final_scores, run.gate_pairs, run.eval_pairs, run.arms,\n"
     "                   candidates=run.candidates, dev_comparable=dev_arms)\n"
     "write_table(t1, out / 'table1', title='Who writes the principle (development data)')\n"
     "t1"),
    ("code", "pairs_ab = [(a, b) for a in dev_arms for b in ('expert', 'none')]\n"
     "cmp = report.comparisons(run.final_scores, pairs_ab)\n"
     "write_table(cmp, out / 'comparisons',\n"
     "            title='Final-cohort differences (points), bootstrap over seeds and stories')\n"
     "cmp"),
    ("markdown", "## Against chance\n\nEach principle's accuracy on the final cohort against "
     "guessing (mean of 1/options), with a 95% interval over stories; `best_constant` is what "
     "always giving the commonest gold label scores (a model stuck on one position reaches it "
     "without reading). On the CPU default the "
     "embedded model is expected near chance: no difference between arms then means "
     "anything."),
    ("code", "chance = chance_table(run.final_scores, ['label'])\n"
     "write_table(chance, out / 'chance', title='Final-cohort accuracy against chance')\n"
     "chance"),
    ("markdown", "## Table 5: selection quality\n\n"
     "Every candidate that reached registration and its incumbent, scored on the first "
     "held-out questions of the final cohort (App. C.2 \"Selection quality\")."),
    ("code", "t5 = loops.selection_quality(run.heldout, run.rounds)\n"
     "write_table(t5, out / 'table5', title='Selection quality (%, development data)')\n"
     "t5"),
    ("markdown", "## Registration noise\n\n"
     "Null candidates (no real gain) under the registration rule, four per round, three "
     "cohorts, per-cohort SD `noise_sd` (the paper's 2.7 points; App. C.2 \"Registration "
     "noise\": about 70% of rounds admit one at a 1-point margin, about 10% at 3 points). "
     "The second table uses the SD measured from this run's trial cohorts."),
    ("code", "calib = loops.calibration_table(noise_sd, n_rounds=noise_rounds,\n"
     "                                 n_candidates=max_candidates, n_cohorts=n_trials)\n"
     "write_table(calib, out / 'noise', title='Admission share of null candidates')\n"
     "calib"),
    ("code", "measured = loops.measured_cohort_sd(run.cohorts)\n"
     "calib_measured = (loops.calibration_table(measured, n_rounds=noise_rounds,\n"
     "                                          n_candidates=max_candidates, n_cohorts=n_trials)\n"
     "                  if measured else None)\n"
     "if calib_measured is not None:\n"
     "    write_table(calib_measured, out / 'noise_measured',\n"
     "                title='Admission share of null candidates at the measured cohort SD')\n"
     "measured"),
    ("markdown", "## GEPA and the learned principles"),
    ("code", "if run.gepa.height:\n"
     "    write_table(run.gepa.drop('principle'), out / 'gepa_candidates',\n"
     "                title='GEPA candidates (validation score, %)')\n"
     "write_table(run.principles, out / 'principles', title='Learned principles by seed')\n"
     "run.principles"),
    ("markdown", "## For the semantic audit\n\n"
     "Every text a candidate wrote, in the audit's rules-file format "
     "(`cogrsi_lib/audit/rules.py`)."),
    ("code", "rules = report.audit_candidates(run.candidates)\n"
     "rules.write_parquet(out / 'audit_candidates.parquet')\n"
     "write_json({'arms': run.arms, 'seeds': list(cfg.seeds), 'rounds': cfg.rounds,\n"
     "            'backend': cfg.backend, 'measured_cohort_sd': measured,\n"
     "            'candidates': run.candidates.height,\n"
     "            'admitted': int(run.candidates['admitted'].sum()) if run.candidates.height\n"
     "            else 0, 'audit_texts': rules.height, 'structured': structured,\n"
     "            'chance': chance.to_dicts(), 'replies': tally.to_dict()},\n"
     "           out / 'summary.json')\n"
     "rules.height"),
    ("markdown", "## Replies\n\nEvery model call of the stage by prompt family: calls, "
     "parse rate against the family's declared format, share that hit the token cap and "
     "mean reply tokens."),
    ("code", "write_replies(tally, out / 'replies_by_family')"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "loops.ipynb")
