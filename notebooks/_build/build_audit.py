"""Build notebooks/audit.ipynb (outputs empty; run it with `cogrsi stage audit`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): 300 worlds, the hand-written rules, scripted translators that
# return each rule's fixed code, and the grounded reader on a constant fake backend.
# `dvc repro` passes params.yaml[audit] (6,000 worlds; the translator and reader backends there).
n_worlds = 300
seed = 7
max_depth = 2
rules = "handwritten"
translators = [
    {"name": "A", "llm": {"backend": "scripted"}, "prompt": "literal", "seed": 0},
    {"name": "B", "llm": {"backend": "scripted"}, "prompt": "plain", "seed": 1},
]
max_tokens = 8192
recompile_max_tokens = None
vacuous_threshold = 0.001
agreement_threshold = 0.8
agreement_over = "either"
limits = {"wall_s": 120, "cpu_s": 60, "memory_mb": 1024, "require_seccomp": True}
workers = None
replay = {
    "reader": {"backend": "fake", "reply": {"reasoning": "scripted", "answer": "A"}},
    "reader_config": {},
    "max_per_rule": 5,
    "n_controls": 5,
    "seed": 0,
}
check_expected = True
structured = True  # enforce each reply's declared format while decoding
reference_translations = True  # model translators: also audit the rules' reference code
# Audit in registration, measured symbolically (CogRSI §6): the loop engine with the scripted
# builder's rule bank, a reader that executes each rule's hand-written translation, and the
# audit gate on this sample with the same translations. CI size: one seed, two rounds.
registration = {
    "arms": ["accuracy_library", "gated_library", "audit_library"],
    "seeds": [0],
    "rounds": 2,
    "dev_stories": 120,
    "final_size": 80,
    "pairs": {"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8, "n_gate_dialogue": 8,
              "n_eval_narrative": 16, "n_eval_dialogue": 16},
}
out_dir = None
"""

CELLS = [
    ("markdown", "# Semantic audit of learned rules\n\n"
     "Two translators turn each rule text into `applies(world, q)` and `predict(world, q)` "
     "(they see only the rule and the API in `cogrsi_lib/audit/API.md`); each translation runs "
     "in a sandbox process over a fixed sample of oracle worlds. A *shared counterexample* is "
     "a question where both translations apply, agree, and the oracle answers otherwise. "
     "Verdicts: invalid (a shared counterexample), vacuous (almost never applies), valid "
     "(translations agree on at least 80% of the questions where they apply), ambiguous "
     "otherwise (CogRSI §4.3, §5.4, App. C \"Semantic audit (J105)\")."),
    ("code", "from cogrsi_lib import audit\n"
     "from cogrsi_lib.llm import start_tally\n"
     "from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir\n"
     "from cogrsi_lib.reports import save_chart, write_json, write_replies, write_table"),
    ("code", "out = resolve_out_dir(out_dir, 'audit')\n"
     "tally = start_tally()  # every model call of this stage, by prompt family\n"
     "root = find_repo_root()\n"
     "sample = audit.sample_audit_worlds(n_worlds, seed, max_depth)\n"
     "{'worlds': len(sample.worlds), 'questions': sample.n_questions}"),
    ("markdown", "## Translators\n\nWhich backend plays each translator role. On the CPU the "
     "embedded model plays both, with two prompt wordings and seeds."),
    ("code", "trs = audit.build_translators(translators, max_tokens, base_dir=root,\n"
     "                              structured=structured)\n"
     "roles = audit.translator_table(trs)\n"
     "write_table(roles, out / 'translators', title='Translator roles')\n"
     "roles"),
    ("markdown", "## Verdicts\n\nEvery rule of the source, translated twice, run on every "
     "question of the sample."),
    ("code", "rule_table = audit.load_rules(rules, root)\n"
     "config = audit.audit_config(vacuous_threshold, agreement_threshold, agreement_over,\n"
     "                            limits, recompile_max_tokens, workers)\n"
     "auditor = audit.Auditor(sample, trs, config)\n"
     "results = auditor.audit_many(list(zip(rule_table['rule_id'], rule_table['text'])))\n"
     "label = audit.MODEL_LABEL if audit.uses_models(trs) else audit.REFERENCE_LABEL\n"
     "verdicts = audit.verdict_table(results, rule_table, label)\n"
     "verdicts.write_parquet(out / 'verdicts.parquet')\n"
     "write_table(verdicts.select('rule_id', 'arm', 'verdict', 'reason', 'n_applies_a',\n"
     "                            'n_applies_b', 'n_both', 'agreement',\n"
     "                            'n_shared_counterexamples', 'translation_a',\n"
     "                            'translation_b', 'outcome_a', 'outcome_b',\n"
     "                            'verdict_before_recompile'),\n"
     "            out / 'verdicts', title=f'Verdict of every audited rule ({label})')\n"
     "verdicts.select('rule_id', 'verdict', 'reason')"),
    ("markdown", "## Reference translations\n\nWhen models translate the hand-written rules, "
     "the rules are also audited with their own reference code (two fixed translations per "
     "rule, written by hand) through the same sample, sandbox and verdict rule. Their verdicts "
     "are known, so this table shows the audit deciding whatever the translating model can "
     "do; the table above is the models'. On the CPU default a 135M-parameter model "
     "translates: expect few decided verdicts there."),
    ("code", "reference = None\n"
     "if reference_translations and rules == 'handwritten' and audit.uses_models(trs):\n"
     "    ref_auditor, ref_results = audit.reference_audit(sample, config, rule_table)\n"
     "    reference = audit.verdict_table(ref_results, rule_table, audit.REFERENCE_LABEL)\n"
     "    reference.write_parquet(out / 'verdicts_reference.parquet')\n"
     "    write_table(reference.select('rule_id', 'verdict', 'reason', 'expected',\n"
     "                                 'n_applies_a', 'n_applies_b', 'agreement',\n"
     "                                 'n_shared_counterexamples'),\n"
     "                out / 'verdicts_reference', title=f'Verdicts ({audit.REFERENCE_LABEL})')\n"
     "reference.select('rule_id', 'verdict', 'expected') if reference is not None else None"),
    ("code", "translations = audit.translation_table(results)\n"
     "translations.write_parquet(out / 'translations.parquet')\n"
     "write_table(translations.select('rule_id', 'translator', 'status', 'finish_reason',\n"
     "                                'capped', 'completion_tokens', 'run_outcome',\n"
     "                                'run_message', 'run_n_applies', 'run_n_errors'),\n"
     "            out / 'translations', title='Translations and their sandbox runs')\n"
     "translations.select('rule_id', 'translator', 'status', 'run_outcome', 'run_message')"),
    ("markdown", "## Invalid rules by arm\n\nTable 1's invalid-rule column: the share of each "
     "arm's rules with a shared counterexample, among all of them and among those the audit "
     "could decide, and among the admitted ones. `verdict_before_recompile` gives the same "
     "table before replies cut by the output cap were recompiled."),
    ("code", "by_arm = audit.verdicts_by_arm(verdicts)\n"
     "write_table(by_arm, out / 'verdicts_by_arm', title='Verdicts by arm')\n"
     "before = audit.verdicts_by_arm(verdicts, column='verdict_before_recompile')\n"
     "write_table(before, out / 'verdicts_by_arm_before_recompile',\n"
     "            title='Verdicts by arm, before recompiling capped replies')\n"
     "by_arm"),
    ("markdown", "## Rules with a known verdict\n\nThe hand-written rules fix what the audit "
     "must say of their reference translations; with `check_expected` a different verdict "
     "stops the stage."),
    ("code", "expected = audit.expected_check(reference if reference is not None else verdicts)\n"
     "write_table(expected, out / 'expected_verdicts', title='Known verdicts')\n"
     "if check_expected:\n"
     "    audit.check_expected(expected)\n"
     "expected"),
    ("markdown", "## Testimony policies\n\nThe oracle's `testimony` policy decides whether a "
     "listener takes a whisper against their own sight: `latest` (the default) or "
     "`fresher_access` (only from a speaker who saw the object later; Hi-ToM's released rule). "
     "The same worlds under each policy: how many gold answers differ, and the hand-written "
     "rules' verdicts (their fixed translations; the audit's and the loops' bank) under each "
     "(`cogrsi_lib/audit/policies.py`)."),
    ("code", "from cogrsi_lib.loops.symbolic import BANK_RULES\n"
     "policy_samples = audit.policy_samples(sample)\n"
     "gold_diff = audit.gold_difference_table(policy_samples)\n"
     "write_table(gold_diff, out / 'policy_gold_differences',\n"
     "            title='Audit questions whose gold answer differs between testimony policies')\n"
     "policy_verdicts = audit.policy_verdict_table(policy_samples, config,\n"
     "                                             audit.RULES + BANK_RULES)\n"
     "write_table(policy_verdicts, out / 'policy_verdicts',\n"
     "            title='Hand-written rules: verdicts under each testimony policy')\n"
     "policy_verdicts"),
    ("markdown", "## Shared counterexamples\n\nEvery shared counterexample with its world's event "
     "types; `outside_exploretom` marks worlds with sleeping, whispering or peeking, which "
     "ExploreToM never contains (§5.4)."),
    ("code", "cx = auditor.counterexample_table(results)\n"
     "cx.write_parquet(out / 'counterexamples.parquet')\n"
     "cx_summary = audit.counterexample_summary(cx)\n"
     "write_table(cx_summary, out / 'counterexamples',\n"
     "            title='Shared counterexamples by rule')\n"
     "cx_summary"),
    ("code", "cx_examples = audit.counterexample_examples(cx, sample)\n"
     "write_table(cx_examples, out / 'counterexample_examples',\n"
     "            title='One shared counterexample per rule')\n"
     "for row in cx_examples.iter_rows(named=True):\n"
     "    print(f\"[{row['rule_id']}] {row['question']} rule: {row['answer']}, \"\n"
     "          f\"oracle: {row['gold']}\\n{row['story']}\\n\")"),
]

CELLS_TAIL = [
    ("markdown", "## Trial gain of valid and invalid rules\n\nFigure 7b: the trial gain each "
     "rule had at registration, by verdict, when the rules source records it (loop "
     "candidates do; the hand-written rules have none)."),
    ("code", "gains = audit.trial_gain_table(verdicts)\n"
     "write_table(gains, out / 'trial_gain', title='Trial gain of valid and invalid rules')\n"
     "if gains['n_valid'][0] or gains['n_invalid'][0]:\n"
     "    save_chart(audit.trial_gain_chart(verdicts), out / 'trial_gain')\n"
     "gains"),
    ("markdown", "## Counterexample replay\n\nEach shared counterexample of an invalid rule is "
     "rendered as a story; the reader answers it without a principle and with the rule as its "
     "principle, and so do random control questions (§5.4: 8.6% of 1,139 turned wrong vs "
     "2.8% of 176 controls)."),
    ("code", "reader_config = {**(replay.get('reader_config') or {}), 'structured': structured}\n"
     "answerer, reader_backend = audit.replay_answerer(replay['reader'], reader_config, root)\n"
     "replayed = audit.replay_counterexamples(results, sample, answerer,\n"
     "                                        replay['max_per_rule'], replay['n_controls'],\n"
     "                                        replay['seed'])\n"
     "replayed.write_parquet(out / 'replay.parquet')\n"
     "replay_table = audit.replay_summary(replayed)\n"
     "write_table(replay_table, out / 'replay',\n"
     "            title=f'Counterexample replay (reader backend: {reader_backend})')\n"
     "replay_table"),
    ("markdown", "## Audit in registration (symbolic)\n\n"
     "The closing remark of the paper proposes the audit as a registration check (§6). Here "
     "the margin-only arm (`accuracy_library`), the gated arm (`gated_library`) and the arm "
     "whose registration also requires the rule not to be invalid (`audit_library`) run the "
     "same loop engine on the same seeds and development data. *Symbolic: hand-written "
     "candidate rules executed as code; no language model.* The builder proposes rules of "
     "the scripted bank (`cogrsi_lib/loops/scripted.py`); the reader executes each library "
     "entry's hand-written translation against the oracle world (first applicable entry, "
     "else the true current value); the audit gate audits each rule on this stage's sample "
     "with two scripted translators serving the same translations. Every accuracy below is "
     "a property of the rules against the oracle. Dev accuracy: each seed's final cohort, "
     "unseen by registration; pairs: the evaluation split."),
    ("code", "from cogrsi_lib.audit import registration_study as rs\n"
     "study_cfg = rs.StudyConfig.from_params(registration)\n"
     "study = rs.run_study(study_cfg, sample, config)\n"
     "comparison = rs.write_comparison(study, out)\n"
     "assert comparison['counts_add_up'].drop_nulls().all()\n"
     "assert study.kept.filter((study.kept['arm'] == 'audit_library')\n"
     "                         & (study.kept['verdict'] == 'invalid')).height == 0\n"
     "comparison.filter(comparison['seed'].is_null()).select(\n"
     "    'arm', 'proposals', 'admissions', 'rejected_margin', 'rejected_cohort_rule',\n"
     "    'rejected_counterfactual_gate', 'rejected_audit_gate', 'rejected_outranked',\n"
     "    'kept_rules', 'kept_valid', 'kept_invalid', 'dev_accuracy', 'pair_accuracy',\n"
     "    'pair_validity')"),
    ("code", "study.bank.select('rule_id', 'verdict', 'dev_accuracy_alone', "
     "'dev_accuracy_default')"),
    ("markdown", "## Replies\n\nEvery model call of the stage by prompt family: calls, "
     "parse rate against the family's declared format, share that hit the token cap and "
     "mean reply tokens."),
    ("code", "write_replies(tally, out / 'replies_by_family')"),
    ("code", "run_summary = audit.summary(auditor, results, reader_backend=reader_backend,\n"
     "                            rules_source=rules, structured=structured,\n"
     "                            replies=tally.to_dict())\n"
     "if reference is not None:\n"
     "    run_summary['reference_verdicts'] = dict(zip(reference['rule_id'],\n"
     "                                                 reference['verdict']))\n"
     "write_json(run_summary, out / 'summary.json')\n"
     "{k: run_summary[k] for k in ('n_questions', 'sandbox_s', 'max_rule_pair_s',\n"
     "                             'one_model_both_roles')}"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:], *CELLS_TAIL])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "audit.ipynb")
