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
# # Strategy-evolution loops
#
# Each arm evolves the reader's principle P from nothing over a number of rounds (CogRSI §4.2, App. C.2): a discovery cohort of new development questions, the builder's proposals from the reader's failures (up to four, JSON, rejected when malformed, over the word limit or naming the stories' characters or places), three trial cohorts, and registration: a mean gain of at least delta points, a gain of at least zero on two of the three cohorts, and the arm's gates. Then every learned principle, no principle and the expert principle answer a final cohort of unseen questions. With `model: scripted` no model runs: `cogrsi_lib/loops/scripted.py` stands in for it, so the numbers below only show that the pipeline works.
#
# This stage gives the shape of CogRSI's Tables 1, 5 and 14 and Figures 4, 7a-c and 12 (`cogrsi papers` lists what each still lacks). On the CPU default the reader is SmolLM2-135M on a few short rounds, near chance: admissions are rare or absent and the tables show their rows, columns and statistics, not the paper's result. Figures 7a-c here come from the symbolic rule bank, a simulation with hand-set effects.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/loops/params.py (LoopsParams).
# `cogrsi stage loops` (what `dvc repro` runs) injects params.yaml[loops] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('loops', params)

# %%
import polars as pl
from IPython.display import display

from cogrsi_lib import loops
from cogrsi_lib.llm import start_tally
from cogrsi_lib.loops import report
from cogrsi_lib.loops.stage import write_logs
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table
from cogrsi_lib.stats import chance_table

# %%
out = resolve_out_dir(out_dir, 'loops')
tally = start_tally()  # every model call of this stage, by prompt family
cfg = p  # the stage's settings are its schema (cogrsi_lib/loops/params.py)
data = loops.stage_data(cfg)
{'dev_questions': len(data.pool), 'dev_stories': len({it.story for it in data.pool}),
 'gate_pairs': data.gate['pair_id'].n_unique(),
 'eval_pairs': data.eval['pair_id'].n_unique()}

# %% [markdown]
# ## Run every arm and seed
#
# Each loop writes its rounds under `runs/<arm>/seed<k>` and resumes from its last finished round when the stage runs again.

# %%
run = loops.run_stage(cfg, data, out)
paths = write_logs(run, out)
run.rounds.select('arm', 'seed', 'round', 'discovery_accuracy', 'trial_accuracy',
                  'n_candidates', 'n_rejected', 'admitted', 'new_size')

# %% [markdown]
# ## Round by round (Figure 4 style)
#
# The incumbent's accuracy on each round's new discovery cohort; filled marks are rounds that admitted an update. Below: what each loop kept.

# %%
show_chart(report.round_chart(run.rounds), out / 'rounds')

# %%
kept = report.kept_rules(run.rounds, run.candidates)
write_table(kept, out / 'kept_rules', title='Admitted updates, round by round',
            why_empty='no candidate passed the admission margin in any round '
                      '(candidates.parquet holds each round\'s candidates and gains)')
kept

# %% [markdown]
# ## Builder replies
#
# Accepted replies and rejections by reason (App. C.2).

# %%
replies = report.replies_table(run.replies)
write_table(replies, out / 'replies', title='Builder replies by outcome')
replies

# %% [markdown]
# ## Table 1: who writes the principle
#
# Dev.: accuracy on the final cohort of unseen development questions (mean over seeds; GEPA selects on its own validation split, so its Dev. is left out). Gate pairs: pair validity on the gate split; own pairs: on the held-out evaluation split. Test Main: each final principle on the first `test_main` questions of each of `test_benchmarks`' main test sample (S3), each benchmark by its own rule, the mean over the benchmarks (`test_main.parquet` per benchmark). BigToM-U: pair validity on the first `bigtom_u_pairs` of BigToM-U's 800 pairs (`bigtom_u.parquet`, flip and same pairs apart). No loop sees either. The audit's invalid share is computed by the `audit` stage, which runs after this one. On the CPU default these are a few questions and pairs, near chance: the table's shape, not the paper's result.

# %%
dev_arms = [a for a in run.arms if a != 'gepa']
t1 = report.table1(run.final_scores, run.gate_pairs, run.eval_pairs, run.arms,
                   candidates=run.candidates, dev_comparable=dev_arms,
                   test_main=run.test_main, bigtom_u=run.bigtom_u)
write_table(t1, out / 'table1', title='Who writes the principle (development data)')
t1

# %% [markdown]
# Table 14 gives every loop seed's row before the mean over seeds: the texts each arm proposed and admitted, its final principle's Dev., Test Main and BigToM-U.

# %%
t14 = report.per_seed(run.final_scores, run.candidates, run.test_main, run.bigtom_u)
write_table(t14, out / 'table14', title='Every loop seed: texts proposed and admitted, Dev. '
            '(%), Test Main and BigToM-U', why_empty='no loop arm ran')
t14

# %%
pairs_ab = [(a, b) for a in dev_arms for b in ('expert', 'none')]
cmp = report.comparisons(run.final_scores, pairs_ab)
write_table(cmp, out / 'comparisons',
            title='Final-cohort differences (points), bootstrap over seeds and stories')
cmp

# %% [markdown]
# ## Against chance
#
# Each principle's accuracy on the final cohort against guessing (mean of 1/options), with a 95% interval over stories; `best_constant` is what always giving the commonest gold label scores (a model stuck on one position reaches it without reading). On the CPU default the embedded model is expected near chance: no difference between arms then means anything.

# %%
chance = chance_table(run.final_scores, ['label'])
write_table(chance, out / 'chance', title='Final-cohort accuracy against chance')
chance

# %% [markdown]
# ## Table 5: selection quality
#
# Every candidate that reached registration and its incumbent, scored on the first held-out questions of the final cohort (App. C.2 "Selection quality").

# %%
t5 = loops.selection_quality(run.heldout, run.rounds)
write_table(t5, out / 'table5', title='Selection quality (%, development data)')
t5

# %% [markdown]
# ## Registration noise
#
# Null candidates (no real gain), `max_candidates` per round, `n_trials` cohorts, under two models of the same accuracy SD (App. C.2: "a fixed principle's accuracy varies by 2.7 points across trial cohorts"; about 70% of rounds admit one at a 1-point margin, about 10% at 3 points). `paper` is the paper's assumption: each candidate's gain independent with that SD. `engine` is what the engine does: one incumbent score per cohort shared by the round's candidates, accuracies in whole questions of the paper's 80-question cohorts, and gain SD = sqrt(2) x accuracy SD (independent accuracies; `loops.gain_sd`). The second table uses the accuracy SD measured from this run's trial cohorts (the engine row with this run's `trial_size`).

# %%
calib = loops.noise_models(p.noise_sd, n_rounds=p.noise_rounds, n_candidates=p.max_candidates,
                           n_cohorts=p.n_trials, cohort_size=80)
write_table(calib, out / 'noise', title='Admission share of null candidates at the paper SD')
calib.select('model', 'gain_sd', 'delta', 'min_nonneg', 'share', 'se')

# %%
measured = loops.measured_cohort_sd(run.cohorts)
calib_measured = (loops.noise_models(measured, n_rounds=p.noise_rounds,
                                     n_candidates=p.max_candidates, n_cohorts=p.n_trials,
                                     cohort_size=p.trial_size)
                  if measured else None)
if calib_measured is not None:
    write_table(calib_measured, out / 'noise_measured',
                title='Admission share of null candidates at the measured accuracy SD')
measured

# %% [markdown]
# ## Shadow registration (Figure 7)
#
# Every candidate is replayed under each registration rule from its logged trial gains against its own incumbent and, with `shadow`, the counterfactual gate's result, which every candidate of every arm meets (CogRSI §5.4, App. D; `cogrsi_lib/loops/shadow.py`). First the check: each arm's own rule, replayed from the log, picks the winner the loop admitted. Then what each rule would keep of this stage's candidates. The model's texts are not audited here (the audit stage audits `audit_candidates.parquet` with `audit.rules` pointing at it), so their validity is not in these two tables.

# %%
from cogrsi_lib.loops import shadow

rules7 = shadow.shadow_rules(p.delta, p.min_nonneg, p.loose_delta)
live = shadow.replay_live(run.candidates, {a.name: a for a in cfg.arm_configs()})
write_table(live, out / 'shadow_live', title='Shadow replay of each arm\'s own rule against the live decision')
model_shadow = shadow.replay(run.candidates, rules7)
model_shadow.write_parquet(out / shadow.REPLAY_FILE)  # the audit's Figure 7 reads it
model_kept = (model_shadow.group_by('arm', 'rule', maintain_order=True)
              .agg(candidates=pl.len(), kept=pl.col('kept').sum(), wins=pl.col('wins').sum(),
                   gate_logged=pl.col('gate_logged').sum()))
write_table(model_kept, out / 'shadow_model',
            title='What each registration rule would keep of the model loops\' candidates')
{'live_agrees': bool(live['agrees'].all()), 'rounds': live.height}

# %% [markdown]
# ### Figure 7a-b and the situations of invalid rules (symbolic)
#
# The paper audits the model's candidates; on the CPU the audited candidates come from the symbolic study (`shadow_study`): the loop engine with the scripted builder's rule bank and the rule-executing reader, on development stories from the same situation set as above (`dev_situations`), each text audited with its hand-written translations on `shadow_audit` worlds. No language model takes part, so these numbers are properties of the bank's rules and of registration, not of a model. Figure 7a: the verdicts of the candidates each rule keeps and the share of invalid ones among those the audit decides (valid or invalid; an ambiguous text, whose two translations disagree, is not decided, so a rule that keeps only such texts has no share). Figure 7b: trial gain of valid against invalid candidates; `min_error_sum` is 1 - TV, the least sum of the two mislabelling rates of any rule that keeps by trial gain. Figure 7c: the kept libraries' entries by verdict after each round. Last: each invalid text's shared counterexamples inside and outside ExploreToM's situations (§5.4: 116 of 286 invalid rules fail only outside).

# %%
study = loops.run_shadow_study(cfg)
fig7 = {}
if study is not None:
    fig7 = shadow.figure7(study.candidates, study.verdicts, rules7,
                          loops.builtin_arms(p.delta, p.min_nonneg, p.loose_delta),
                          rounds=study.rounds)
    titles = {'live': 'Symbolic study: shadow replay of each arm\'s own rule',
              'figure7a': 'Figure 7a (symbolic): invalid share of the candidates each rule keeps',
              'figure7b': 'Figure 7b (symbolic): trial gain of valid and invalid candidates',
              'figure7c': 'Figure 7c (symbolic): the kept libraries\' entries by verdict, '
                          'round by round (summed over seeds)',
              'invalid_situations': 'Invalid texts: shared counterexamples inside and outside '
                                    'ExploreToM\'s situations'}
    for name, table in fig7.items():
        write_table(table, out / f'shadow_study_{name}' if name == 'live' else out / name,
                    title=titles[name])
    study.candidates.write_parquet(out / 'shadow_study_candidates.parquet')
    display(fig7['figure7a'], fig7['figure7b'], fig7['invalid_situations'])

# %% [markdown]
# ## GEPA and the learned principles

# %%
if run.gepa.height:
    write_table(run.gepa.drop('principle'), out / 'gepa_candidates',
                title='GEPA candidates (validation score, %)')
write_table(run.principles, out / 'principles', title='Learned principles by seed')
run.principles

# %% [markdown]
# ## For the semantic audit
#
# Every text a candidate wrote, in the audit's rules-file format (`cogrsi_lib/audit/rules.py`).

# %%
rules = report.audit_candidates(run.candidates)
rules.write_parquet(out / 'audit_candidates.parquet')
write_json({'arms': run.arms, 'seeds': list(cfg.seeds), 'rounds': cfg.rounds,
            'backend': cfg.model.backend, 'measured_cohort_sd': measured,
            'candidates': run.candidates.height,
            'admitted': int(run.candidates['admitted'].sum()) if run.candidates.height
            else 0, 'audit_texts': rules.height, 'structured': p.structured,
            'chance': chance.to_dicts(), 'replies': tally.to_dict(),
            'dev_situations': p.dev_situations, 'shadow_live_agrees': bool(live['agrees'].all()),
            **{k: fig7[k].to_dicts() for k in ('figure7a', 'figure7b', 'figure7c',
                                               'invalid_situations')
               if k in fig7}},
           out / 'summary.json')
rules.height

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's declared format, share that hit the token cap and mean reply tokens.

# %%
write_replies(tally, out / 'replies_by_family', p.max_failed_share)
