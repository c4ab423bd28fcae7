# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Recursive-reasoning scorecard
#
# The recursive-reasoning plan's four suites on one set of frozen items: A, nested belief R0-R4 (`cogrsi_lib.nested`); B, applied ToM (a belief and a behaviour question on the same oracle state); C, strategic (games with known answers and bounded level-k opponents); D, self and cross-agent prediction (a prediction ledger, predictions written before the target is queried). Each reader variant answers the same items: the bare model, the recursive-perspective prompt (§10) and the explicit epistemic store (§11), each with its ablation. The §17 profile is reported as a full vector; the RR scalar only beside it. Gates A-E (§16) decide keep or toss, with every outcome recorded.
#
# **With the default `model: scripted` the answers come from a scripted model whose behaviour is fixed in advance** (`cogrsi_lib/scorecard/scripted.py`: depth collapse past two agents, leakage and a knowing-doing gap under the bare prompt, rationality projection in games); the numbers below show the machinery, not a real model. `params.yaml` (`dvc repro`) runs the embedded CPU model at a tiny size, and a real model's settings (e.g. `backend: vllm`) measure a real model at full size.
#
# This stage gives the recursive-reasoning plan's Suite B table, §8.1 curve, §17 profile and §20 example (`cogrsi papers`). `models: [...]` runs each model on the same frozen items: every table has a `model` column, the figures show the first model. On the CPU default the 135M model is near chance: they show the tables' shape, not a finding.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/scorecard/params.py (ScorecardParams).
# `cogrsi stage scorecard` (what `dvc repro` runs) injects params.yaml[scorecard] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('scorecard', params)

# %%

import polars as pl

from cogrsi_lib import matrix
from cogrsi_lib.llm import start_tally
from cogrsi_lib.nested import require
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.reader import records_to_frame
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table
from cogrsi_lib.scorecard import (
    build_profile,
    decision_checks,
    decision_table,
    depth_curves,
    depth_figure,
    interval_table,
    scorecard_table,
    stage,
)
from cogrsi_lib.scorecard.runs import RECORDS, stack, stage_records
from cogrsi_lib.scorecard.selfpred import curve_chart
from cogrsi_lib.stats import chance_table

# %%
out = resolve_out_dir(out_dir, 'scorecard')
tally = start_tally()  # every model call of this stage, by prompt family
variants = stage.variants_for(p)
variants

# %% [markdown]
# ## Frozen items and Gate A
#
# Suite A items come from the nested-belief generator; Suite B pairs each R1-R3 item with a behaviour question; Suite C draws games and opponents; Suite D draws tasks. A second Suite A/B set on `replication_seed` is for Gate D. Gate A (benchmark integrity) must pass before any run counts.

# %%
frozen = stage.freeze(p)
s = frozen.suites
print(f'Suite A {len(s.nested)} items, Suite B {len(s.applied)} pairs, '
      f'Suite C {len(s.strategic)} questions, Suite D {len(s.selfpred.tasks())} tasks; '
      f'replication: {len(frozen.replication.nested)} + {len(frozen.replication.applied)}')
write_table(frozen.integrity, out / 'gate_a_integrity', title='Gate A: benchmark integrity of the Suite A items')
require(frozen.integrity)
frozen.integrity

# %% [markdown]
# ## Runs
#
# For each model of `models` (or the one `model`), every variant answers every suite, then the Gate D replications: the variants on the replication items (new procedural seed) and on the alternate model (`alt_model`, the same for every model), and Gates A-E decide each intervention (`cogrsi_lib/scorecard/stage.py` `score_model`). Per-item records (answer, confidence, calls, tokens, model) go to `records.parquet`. Suite D's cross-agent target is `cross_model`: a second scripted model, or a real one (the predictor's own weights only when sampled at `cross_temperature > 0`), whose policy change is a frozen system message.

# %%
root = find_repo_root()
base_dir = str(root) if root else None
alt = stage.alternate(p, frozen, base_dir)
cards = [stage.score_model(p, frozen, spec, alt, base_dir) for spec in p.model_list()]
matrix.check_labels([c.model for c in cards])
RECORDS.write(pl.concat([stage_records(c.runs) for c in cards]), out)
for c in cards:
    print(c.backend.identity, {v: len(run.task_records()) for v, run in c.runs.items()})
    print('  Suite D cross-agent target:', c.frozen.suites.cross_targets[0].description)
card = cards[0]  # the figures' model
runs = card.runs

# %% [markdown]
# ## The profile (§17)
#
# Rows in the plan's order; RR is the last row and is never reported without the vector above it. Recursive lift is accuracy minus the best shallow heuristic at each depth (plan §7); lift vs bare is Suite A accuracy minus the bare model's.

# %%
profiles = {c.model: [build_profile(c.runs[v], c.runs['bare']) for v in variants]
            for c in cards}
table = stage.over_models(cards, lambda c: scorecard_table(profiles[c.model]))
write_table(table, out / 'scorecard', title='Recursive Reasoning Profile (plan §17); RR only beside the full vector')
(out / 'profiles.txt').write_text('\n\n'.join(f'model: {m}\n\n' + '\n\n'.join(
    x.render() for x in ps) for m, ps in profiles.items()) + '\n')
print(profiles[card.model][0].render())
table

# %%
intervals = stage.over_models(cards, lambda c: pl.concat(
    [interval_table(c.runs[v], n_resamples=p.bootstrap_resamples) for v in variants]))
write_table(intervals, out / 'intervals', title='Suite A metrics with 95% cluster-bootstrap intervals over stories')
intervals.filter(intervals['metric'].str.starts_with('R'))

# %% [markdown]
# ## Against chance
#
# Suite A accuracy of each variant against guessing (mean of 1/options), with a 95% interval over stories; `best_constant` is what always giving the commonest gold label scores (a model stuck on one position reaches it without reading). The embedded CPU model is expected near chance: read no gate outcome below as a property of the interventions then.

# %%
chance = stage.over_models(cards, lambda c: chance_table(
    stack(c.runs, lambda r: records_to_frame(r.nested.records)), ['system']))
write_table(chance, out / 'chance', title='Suite A accuracy against chance')
chance

# %% [markdown]
# ## Depth curve
#
# Accuracy by depth of every variant and of the best shallow heuristic; dashed: chance (1 / containers).

# %%
curves = {c.model: depth_curves(list(c.runs.values()), frozen.suites.heuristic_baselines())
          for c in cards}
write_table(stage.over_models(cards, lambda c: curves[c.model]), out / 'depth_curve',
            title='Accuracy by depth per variant and the best shallow heuristic')
show_chart(depth_figure(curves[card.model], chance=1 / p.n_containers), out / 'depth_curve')

# %% [markdown]
# ## Suite A by lie condition
#
# Plan §5.4 scores lies separately: stories without a lie, an unlabelled lie, a known liar (everyone knows the speaker lies, so nobody takes their word) and a lie revealed to the reader only.

# %%
by_lie = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.nested.score.by_lie_condition))
write_table(by_lie, out / 'by_lie_condition', title='Suite A accuracy by lie condition')
by_lie

# %% [markdown]
# ## Suite B: applied ToM
#
# The four cells (belief right/wrong x behaviour right/wrong) and the conversion P(behaviour right | belief right).

# %%
cells = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.applied.score.cells))
write_table(cells, out / 'applied_cells', title='Suite B: four cells and conversion')
cells.filter(cells['subset'] == 'all')

# %% [markdown]
# ## Suite C: strategic
#
# Accuracy by game and question, and the predictive lift over the equilibrium answer, the population prior and the opponent's modal action (`oracle`: the mode of the opponent's true policy, the ceiling).

# %%
by_kind = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.strategic.score.by_kind))
lifts = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.strategic.score.lifts))
write_table(by_kind, out / 'strategic_accuracy', title='Suite C: accuracy by game and question')
write_table(lifts, out / 'strategic_lift', title='Suite C: target-prediction lift over answers that need no model of the target')
lifts.filter(lifts['system'] == 'bare')

# %% [markdown]
# ## Suite D: self and cross-agent prediction
#
# The ledger (one row per prediction, written before the target was queried), lifts over the base-rate and same-as-predictor answers, and the learning curve before and after the target's policy changes. An entry whose target gave no parseable answer stays on the ledger but is not scored (`no_target_answer`), so a silent target leaves accuracy undefined, not zero.

# %%
ledger = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.selfpred.ledger))
ledger.write_parquet(out / 'prediction_ledger.parquet')
summary = stage.over_models(cards, lambda c: stack(c.runs, lambda r: r.selfpred.summary))
write_table(summary, out / 'prediction_summary', title='Suite D: accuracy, Brier and lifts by target')
curve = stage.over_models(cards, lambda c: c.runs['bare'].selfpred.curve)
write_table(curve, out / 'learning_curve', title='Suite D: learning curve of the bare variant')
show_chart(curve_chart(runs['bare'].selfpred.curve), out / 'learning_curve')

# %% [markdown]
# ## Interventions and Gates B-E
#
# Gate D re-ran each model's variants on the replication items (new procedural seed) and on the alternate model; Gate E compares each intervention with its own ablation. Each model's decisions are its own.

# %%
gate_checks = stage.over_models(cards, lambda c: decision_checks(c.decisions))
write_table(gate_checks, out / 'gates', title='Gates A-E: every check of every intervention')
decided = stage.over_models(cards, lambda c: decision_table(c.decisions))
write_table(decided, out / 'decisions', title='Keep or toss per intervention')
decided

# %%
gate_checks.filter(gate_checks['gate'] != 'A').select(
    'model', 'intervention', 'gate', 'check', 'status', 'estimate', 'low', 'high', 'threshold')

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's declared format, share that hit the token cap and mean reply tokens.

# %%
replies = write_replies(tally, out / 'replies_by_family', p.max_failed_share)
summary_json = stage.summary_json(profiles[card.model], card.decisions) | {
    'model': card.backend.identity, 'structured': p.structured,
    'models': {c.model: stage.summary_json(profiles[c.model], c.decisions)
               | {'identity': c.backend.identity} for c in cards},
    'chance': chance.to_dicts(), 'replies': tally.to_dict()}
write_json(summary_json, out / 'summary.json')
replies

# %%
sorted(f.name for f in out.iterdir())
