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
# # Training the embedded model on oracle items
#
# A LoRA adapter for SmolLM2-135M-Instruct, trained on oracle items written in the reader's own prompts and reply formats (direct answers to R0-R4 location questions on plain and perception-marked stories, by option label or, as open questions, by naming the place; optionally, open answers after a reasoning step that is the oracle's trace of what the agent perceived; perception labels, arbitration, counterfactual pairs): supervised fine-tuning, then GRPO whose reward is the oracle's answer (the Zing report's staged training). Every training story comes from the `train` lexicon (`cogrsi_lib/pairs/lexicon.py`), which shares no name, place, object, container or sentence template with the gate and eval pairs, the nested benchmark, the audit sample or the golden worlds. Then base and trained answer the same held-out items: the nested benchmark by depth, the eval pairs, and samples of ToMi, Hi-ToM, BigToM and ToMBench.
#
# Training resumes from its last checkpoint when interrupted, and a finished run is reused (`work_dir`, one folder per fingerprint of settings and data). Any stage uses the trained model by adding `adapter: reports/train/adapter` to its model's settings (`backend: embedded` or `vllm`).
#
# This stage gives the shape of the Zing report's Tables 6 and 7 at one 135M LoRA scale instead of the report's 8-32B models (`cogrsi papers`); on 2 CPU cores the trained model stays near chance (the comparison below says whether it moved).

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/train/params.py (TrainParams).
# `cogrsi stage train` (what `dvc repro` runs) injects params.yaml[train] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('train', params)

# %%
import polars as pl

from cogrsi_lib.llm import start_tally
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table
from cogrsi_lib.train import compare, report
from cogrsi_lib.train.stage import save_adapter, train, training_set

out = resolve_out_dir(out_dir, 'train')
root = find_repo_root() or '.'

# %% [markdown]
# ## Training data
#
# Examples per family and depth (R0 is "where is it at the end"; Rk a belief chain of k characters), the held-out items scored during training and the GRPO prompts.

# %%
data = training_set(p)
examples = data.table()
examples.write_parquet(out / 'examples.parquet')
mix = report.mix_table(examples)
write_table(mix, out / 'mix', title='Training examples by set, family and depth')
mix

# %% [markdown]
# ## Training
#
# SFT, then GRPO. The log has the loss per step and, every `heldout_every` steps, the held-out accuracy asked two ways: by option label (the label a greedy constrained decoder picks, scored from one forward pass) and open (the option whose whole reply the model finds most likely); the open accuracy is also given on the false-belief items alone, where naming the object's place now is wrong. When the mix has traced examples, the traceable held-out items (R0, R1) are also asked to think first, scored from the greedy reply's answer (`heldout_traced_*`; empty otherwise).

# %%
result = train(p, data, root)  # times and peak memory go to the stage's log, not reports/
adapter = save_adapter(result, out / 'adapter')
history = result.history()
write_table(history, out / 'history', title='Loss, held-out accuracy and reward per step')
show_chart(report.loss_chart(history), out / 'loss_curve')

# %%
show_chart(report.heldout_chart(history), out / 'heldout_accuracy')

# %% [markdown]
# ## Base vs trained
#
# The same greedy direct-answer requests (the reader's `answer.direct` prompt with its reply format enforced) to the base and the trained model. `diff` is trained - base in accuracy, with a 95% interval from a paired bootstrap over stories. The benchmarks are asked in the reader's prompt, not their official ones, and scored by the option label: this measures how far the trained behaviour transfers, not the benchmarks' official scores. The sets marked `(open)` ask the same items without options: the reply names the place, and it is right when the gold is the only one of the lettered version's options it names ("the key is in the box" counts as "box"; naming two counts as wrong). This is more lenient than ToMi's exact one-word match. Their chance is a uniform pick among those options. The sets marked `(traced)` ask the strata of `eval_traced` open after thinking first (the reader's grounded instruction, reasoning then answer, as the `answer.traced` training examples), scored as the open sets. The nested items are split by depth and partition: `R<k>:adversarial` (a false belief that also differs from the answer of every shallower prefix of the chain) and `R<k>:true_belief`, pooled per depth (`R<k> (pooled)`) and per partition over R1-R4; a model that only names where the object is now gains on true beliefs and not on adversarial items.

# %%
tally = start_tally()
items = compare.nested_items(p.eval_n_per_depth, p.eval_nested.model_dump())
items += compare.pair_items(p.eval_n_pairs, p.eval_pairs.model_dump())
bench_items, missing = compare.bench_items(p.eval_benchmarks, p.eval_seed)
items += bench_items
items += compare.open_items(items, p.eval_open)
items += compare.traced_items(items, p.eval_traced)
base = p.model.build(root)
trained = p.model.model_copy(update={'adapter': str(adapter)}).build(root)
records = pl.concat([compare.ask(base, items, 'base'), compare.ask(trained, items, 'trained')])
compare.RECORDS.write(records, out)
table = compare.compare(records, n_resamples=p.bootstrap_resamples, seed=p.eval_seed)
write_table(table, out / 'base_vs_trained', title='Base vs trained: accuracy and paired difference')
table

# %%
show_chart(report.comparison_chart(table), out / 'base_vs_trained')

# %%
rates = compare.parse_rates(records)
write_table(rates, out / 'parse_rates', title='Replies that parsed, per model and set')
rates

# %% [markdown]
# ## In distribution and transfer
#
# Where the trained model beats the base with an interval that excludes zero, and where it does not.

# %%
verdict = report.transfer_summary(table)
write_table(verdict, out / 'transfer',
            title='Where training helps (Benjamini-Hochberg over all rows; underpowered rows never count)')
verdict

# %%
replies = write_replies(tally, out / 'replies_by_family', p.max_failed_share)
write_json({'model': base.model, 'trained_model': trained.model, 'adapter': 'adapter',
            'fingerprint': result.fingerprint, 'examples': examples.height,
            'missing_benchmarks': missing, 'comparison': table.to_dicts(),
            'replies': tally.to_dict()}, out / 'summary.json')
