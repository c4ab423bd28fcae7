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
# # Semantic audit of learned rules
#
# Two translators turn each rule text into `applies(world, q)` and `predict(world, q)` (they see only the rule and the API in `cogrsi_lib/audit/API.md`); each translation runs in a sandbox process over a fixed sample of oracle worlds. A *shared counterexample* is a question where both translations apply, agree, and the oracle answers otherwise. Verdicts: invalid (a shared counterexample), vacuous (almost never applies), valid (translations agree on at least 80% of the questions where they apply), ambiguous otherwise (CogRSI §4.3, §5.4, App. C "Semantic audit (J105)").
#
# The rules (`rules`): the hand-written ones, whose verdicts are known, and the loops stage's candidates (`reports/loops/audit_candidates.parquet`, so this stage runs after the loops), each under the arm that wrote it. This stage gives the shape of CogRSI's Table 1 invalid-rule column, the verdicts by arm and counterexample replay of §5.4, and Figure 7b (trial gain by verdict). On the CPU default a 135M-parameter model translates a few candidates of a short CPU loop: the tables show their rows and columns, not the paper's result.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/audit/params.py (AuditParams).
# `cogrsi stage audit` (what `dvc repro` runs) injects params.yaml[audit] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('audit', params)

# %%
from cogrsi_lib import audit
from cogrsi_lib.llm import start_tally
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.progress import phase
from cogrsi_lib.reports import note_chart, show_chart, write_json, write_replies, write_table

# %%
out = resolve_out_dir(out_dir, 'audit')
tally = start_tally()  # every model call of this stage, by prompt family
root = find_repo_root()
sample = audit.sample_audit_worlds(p.n_worlds, p.seed, p.max_depth)
{'worlds': len(sample.worlds), 'questions': sample.n_questions}

# %% [markdown]
# ## Translators
#
# Which backend plays each translator role. On the CPU the embedded model plays both, with two prompt wordings and seeds.

# %%
trs = audit.build_translators(p.translators, p.max_tokens, base_dir=root,
                              structured=p.structured)
roles = audit.translator_table(trs)
write_table(roles, out / 'translators', title='Translator roles')
roles

# %% [markdown]
# ## Verdicts
#
# Every rule of the source, translated twice, run on every question of the sample.

# %%
rule_table = audit.load_rules(p.rules, root)
config = p.config()
auditor = audit.Auditor(sample, trs, config)
results = auditor.audit_many(list(zip(rule_table['rule_id'], rule_table['text'], strict=True)))
label = audit.MODEL_LABEL if audit.uses_models(trs) else audit.REFERENCE_LABEL
verdicts = audit.verdict_table(results, rule_table, label)
verdicts.write_parquet(out / 'verdicts.parquet')
write_table(verdicts.select('rule_id', 'arm', 'verdict', 'reason', 'n_applies_a',
                            'n_applies_b', 'n_both', 'agreement',
                            'n_shared_counterexamples', 'translation_a',
                            'translation_b', 'outcome_a', 'outcome_b',
                            'verdict_before_recompile'),
            out / 'verdicts', title=f'Verdict of every audited rule ({label})')
verdicts.select('rule_id', 'verdict', 'reason')

# %% [markdown]
# ## Reference translations
#
# When models translate the hand-written rules, the rules are also audited with their own reference code (two fixed translations per rule, written by hand) through the same sample, sandbox and verdict rule. Their verdicts are known, so this table shows the audit deciding whatever the translating model can do; the table above is the models'. On the CPU default a 135M-parameter model translates: expect few decided verdicts there.

# %%
reference = None
handwritten = audit.handwritten_part(rule_table)
if p.reference_translations and handwritten.height and audit.uses_models(trs):
    ref_auditor, ref_results = audit.reference_audit(sample, config, handwritten)
    reference = audit.verdict_table(ref_results, handwritten, audit.REFERENCE_LABEL)
    reference.write_parquet(out / 'verdicts_reference.parquet')
    write_table(reference.select('rule_id', 'verdict', 'reason', 'expected',
                                 'n_applies_a', 'n_applies_b', 'agreement',
                                 'n_shared_counterexamples'),
                out / 'verdicts_reference', title=f'Verdicts ({audit.REFERENCE_LABEL})')
reference.select('rule_id', 'verdict', 'expected') if reference is not None else None

# %%
translations = audit.translation_table(results)
audit.RECORDS.write(audit.translation_records(results, trs, rule_table), out)
write_table(translations.select('rule_id', 'translator', 'status', 'finish_reason',
                                'capped', 'completion_tokens', 'run_outcome',
                                'run_message', 'run_n_applies', 'run_n_errors'),
            out / 'translations', title='Translations and their sandbox runs')
translations.select('rule_id', 'translator', 'status', 'run_outcome', 'run_message')

# %% [markdown]
# ## Invalid rules by arm
#
# Table 1's invalid-rule column: the share of each arm's rules with a shared counterexample, among all of them and among those the audit could decide, and among the admitted ones. `verdict_before_recompile` gives the same table before replies cut by the output cap were recompiled.

# %%
by_arm = audit.verdicts_by_arm(verdicts)
write_table(by_arm, out / 'verdicts_by_arm', title='Verdicts by arm')
before = audit.verdicts_by_arm(verdicts, column='verdict_before_recompile')
write_table(before, out / 'verdicts_by_arm_before_recompile',
            title='Verdicts by arm, before recompiling capped replies')
by_arm

# %% [markdown]
# ## Rules with a known verdict
#
# The hand-written rules fix what the audit must say of their reference translations; with `check_expected` a different verdict stops the stage.

# %%
expected = audit.expected_check(reference if reference is not None else verdicts)
write_table(expected, out / 'expected_verdicts', title='Known verdicts')
if p.check_expected:
    audit.check_expected(expected)
expected

# %% [markdown]
# ## Testimony policies
#
# The oracle's `testimony` policy decides whether a listener takes a whisper against their own sight: `latest` (the default) or `fresher_access` (only from a speaker who saw the object later; Hi-ToM's released rule). The same worlds under each policy: how many gold answers differ, and the hand-written rules' verdicts (their fixed translations; the audit's and the loops' bank) under each (`cogrsi_lib/audit/policies.py`).

# %%
from cogrsi_lib.loops.symbolic import BANK_RULES

policy_samples = audit.policy_samples(sample)
gold_diff = audit.gold_difference_table(policy_samples)
write_table(gold_diff, out / 'policy_gold_differences',
            title='Audit questions whose gold answer differs between testimony policies')
policy_verdicts = audit.policy_verdict_table(policy_samples, config,
                                             audit.RULES + BANK_RULES)
write_table(policy_verdicts, out / 'policy_verdicts',
            title='Hand-written rules: verdicts under each testimony policy')
policy_verdicts

# %% [markdown]
# ## Shared counterexamples
#
# Every shared counterexample with its world's event types; `outside_exploretom` marks worlds with sleeping, whispering or peeking, which ExploreToM never contains (§5.4).

# %%
cx = auditor.counterexample_table(results)
cx.write_parquet(out / 'counterexamples.parquet')
cx_summary = audit.counterexample_summary(cx)
no_cx = audit.why_no_counterexamples(verdicts)
write_table(cx_summary, out / 'counterexamples', title='Shared counterexamples by rule',
            why_empty=no_cx)
cx_summary

# %%
cx_examples = audit.counterexample_examples(cx, sample)
write_table(cx_examples, out / 'counterexample_examples',
            title='One shared counterexample per rule', why_empty=no_cx)
for row in cx_examples.iter_rows(named=True):
    print(f"[{row['rule_id']}] {row['question']} rule: {row['answer']}, "
          f"oracle: {row['gold']}\n{row['story']}\n")

# %% [markdown]
# ## Trial gain of valid and invalid rules
#
# Figure 7b: the trial gain each rule had at registration, by verdict, when the rules source records it (loop candidates do; the hand-written rules have none).

# %%
gains = audit.trial_gain_table(verdicts)
no_gain = audit.why_no_trial_gain(verdicts)
write_table(gains if no_gain is None else gains.clear(), out / 'trial_gain',
            title='Trial gain of valid and invalid rules', why_empty=no_gain)
show_chart(audit.trial_gain_chart(verdicts) if no_gain is None
           else note_chart('Trial gain of valid and invalid rules', no_gain), out / 'trial_gain')

# %% [markdown]
# ## Figure 7 and Table 1 from the loops' audited candidates
#
# CogRSI Figure 7a-c from the model loops' own candidates (`loops_run`): each candidate the loops stage replayed under every registration rule (1-point margin, 3-point margin with the cohort rule, and the counterfactual gate on top), joined with the verdict this stage gave its text. 7a: the invalid share among the decided candidates each rule keeps; 7b: trial gain of valid against invalid candidates; 7c: the kept libraries' entries by verdict after each round. The loops stage draws the same figure from its symbolic study (hand-written rules executed as code, no model): a simulation, kept beside this. Last, the loops' Table 1 with its invalid-rules column filled from this audit (`paper_table1`). On the CPU default the loops propose a few candidates and the small model's translations rarely agree, so few or none are decided: the shares are then empty or zero, which says so.

# %%
if p.loops_run:
    from IPython.display import display

    from cogrsi_lib.loops.shadow import audited_figure7

    fig7 = audited_figure7(root / p.loops_run, verdicts)
    titles = {'figure7a': 'Figure 7a (loops\' candidates, audited): invalid share of the '
                          'candidates each registration rule keeps',
              'figure7b': 'Figure 7b (loops\' candidates, audited): trial gain of valid and '
                          'invalid candidates',
              'figure7c': 'Figure 7c (loops\' candidates, audited): the kept libraries\' '
                          'entries by verdict after each round'}
    for name, table in fig7.items():
        write_table(table, out / f'{name}_loops', title=titles[name])
    # Table 1 whole: the loops' table with this audit's invalid share of each arm's rules
    table1 = audit.table1_with_invalid_share(root / p.loops_run, by_arm)
    write_table(table1, out / 'paper_table1',
                title='CogRSI Table 1: who writes the principle, with the invalid share of '
                      'each arm\'s rules (points)')
    display(fig7['figure7a'], fig7['figure7b'], table1)

# %% [markdown]
# ## Counterexample replay
#
# Each shared counterexample of an invalid rule is rendered as a story; the reader answers it without a principle and with the rule as its principle, and so do random control questions (§5.4: 8.6% of 1,139 turned wrong vs 2.8% of 176 controls).

# %%
reader_config = p.replay.reader_config.model_copy(update={'structured': p.structured})
answerer, reader_backend = audit.replay_answerer(p.replay.model, reader_config, root)
replayed = audit.replay_counterexamples(results, sample, answerer, p.replay.max_per_rule,
                                        p.replay.n_controls, p.replay.seed)
replayed.write_parquet(out / 'replay.parquet')
replay_table = audit.replay_summary(replayed)
write_table(replay_table, out / 'replay',
            title=f'Counterexample replay (reader backend: {reader_backend})',
            why_empty=f'nothing to replay: {no_cx}')
replay_table

# %% [markdown]
# ## Audit in registration (symbolic)
#
# The closing remark of the paper proposes the audit as a registration check (§6). Here the margin-only arm (`accuracy_library`), the gated arm (`gated_library`) and the arm whose registration also requires the rule not to be invalid (`audit_library`) run the same loop engine on the same seeds and development data. *Symbolic: hand-written candidate rules executed as code; no language model.* The builder proposes rules of the scripted bank (`cogrsi_lib/loops/scripted.py`); the reader executes each library entry's hand-written translation against the oracle world (first applicable entry, else the true current value); the audit gate audits each rule on this stage's sample with two scripted translators serving the same translations. Every accuracy below is a property of the rules against the oracle. Dev accuracy: each seed's final cohort, unseen by registration; pairs: the evaluation split.

# %%
from cogrsi_lib.loops import registration_study as rs

study = rs.run_study(p.registration, sample, config)
comparison = rs.write_comparison(study, out)
assert comparison['counts_add_up'].drop_nulls().all()
assert study.kept.filter((study.kept['arm'] == 'audit_library')
                         & (study.kept['verdict'] == 'invalid')).height == 0
comparison.filter(comparison['seed'].is_null()).select(
    'arm', 'proposals', 'admissions', 'rejected_margin', 'rejected_cohort_rule',
    'rejected_counterfactual_gate', 'rejected_audit_gate', 'rejected_outranked',
    'kept_rules', 'kept_valid', 'kept_invalid', 'dev_accuracy', 'pair_accuracy',
    'pair_validity')

# %%
study.bank.select('rule_id', 'verdict', 'dev_accuracy_alone', 'dev_accuracy_default')

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's declared format, share that hit the token cap and mean reply tokens.

# %%
write_replies(tally, out / 'replies_by_family', p.max_failed_share)

# %%
run_summary = audit.summary(auditor, results, reader_backend=reader_backend,
                            rules_source=p.rules, structured=p.structured,
                            replies=tally.to_dict())
if reference is not None:
    run_summary['reference_verdicts'] = dict(zip(reference['rule_id'],
                                                 reference['verdict'], strict=True))
write_json(run_summary, out / 'summary.json')
phase('audit timings: %s', audit.timings(auditor, results))
{k: run_summary[k] for k in ('n_questions', 'n_rules', 'one_model_both_roles')}
