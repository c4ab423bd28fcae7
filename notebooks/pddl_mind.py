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
# # PDDL-Mind: verified state tracking and the diagnostic ladder
#
# A predefined PDDL domain (`cogrsi_lib/pddl/domain.pddl`), three LLM calls per example
# (problem file, candidate actions, answer) and a deterministic executor that checks every
# candidate action's preconditions in between (PDDL-Mind §3). The ladder runs the full method
# and two ablations, *no verification* (the answer sees parsed actions, no executed states) and
# *no domain* (the model writes its own domain first), on oracle stories with gold traces and
# on the benchmark samples that are present (FANToM, MMToM-QA and MuMA-ToM text; §4). Wrong
# answers are classified as parsing/state errors or reasoning errors given a correct trace.
#
# With the default `model: scripted` no model runs: a scripted stand-in
# (`cogrsi_lib/pddl/scripted.py`) writes gold or deliberately damaged PDDL and answers by a
# sight-only rule, so the numbers below only exercise the pipeline. `params.yaml[pddl_mind]`
# selects a real model (`model: {backend: embedded, ...}`).
#
# This stage gives the shape of PDDL-Mind's Tables 1 and 2 (`cogrsi papers` lists what each still lacks). On the CPU default the 135M model is near chance: the tables show their rows and columns, not the paper's result.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/pddl/params.py (PddlMindParams).
# `cogrsi stage pddl_mind` (what `dvc repro` runs) injects params.yaml[pddl_mind] here.
params = {}
out_dir = None

# %%
from cogrsi_lib import stage_params

p = stage_params.load('pddl_mind', params)

# %%
import polars as pl

from cogrsi_lib import matrix, pddl
from cogrsi_lib.bench.report import deviations_table
from cogrsi_lib.llm import start_tally
from cogrsi_lib.oracle.sampler import SamplerConfig, sample_worlds
from cogrsi_lib.pddl import report
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table
from cogrsi_lib.stats import chance_table

out = resolve_out_dir(out_dir, "pddl_mind")
tally = start_tally()  # every model call of this stage, by prompt family
# no secret observers or unnoticed misses: the predefined domain has no action for them
cfg = SamplerConfig(min_agents=p.min_agents, max_agents=p.max_agents, min_events=p.min_events,
                    max_events=p.max_events, p_hidden_observer=0.0, p_missed=0.0)

# %% [markdown]
# ## Cross-check with the oracle
#
# The gold actions of oracle worlds, executed in the predefined domain, must reproduce the
# oracle's state after every event: world state, each agent's latest sight and noticed values,
# and who heard which whisper (PDDL-Mind §5.1; `cogrsi_lib/pddl/oracle_map.py`).

# %%
check = report.cross_check_table(list(sample_worlds(p.n_cross_check, p.seed + 1, cfg)))
write_table(check, out / 'cross_check',
            title='Oracle worlds: mismatches of the executed gold actions')
assert check['mismatches'].sum() == 0, check.filter(check['mismatches'] > 0)
{'worlds': check.height, 'events': int(check['events'].sum()),
 'mismatches': int(check['mismatches'].sum())}

# %% [markdown]
# ## Examples
#
# Oracle stories (gold answers and traces from the oracle) and the benchmark samples that are present.

# %%
examples = pddl.oracle_examples(p.n_stories, p.seed, p.questions_per_story, p.max_depth, cfg)
samples = pddl.benchmark_examples(p.benchmarks, p.n_per_category, seed=p.sample_seed)
examples += [e for s in samples for e in s.examples]
availability = report.availability_table(samples)
write_table(availability, out / 'benchmarks', title='Benchmark samples')
availability

# %% [markdown]
# Benchmark answers are judged by each benchmark's `uniform` scorer; how that deviates from
# each release is listed here (the prompts are PDDL-Mind's own three calls).

# %%
deviations = deviations_table(p.benchmarks).filter(
    (pl.col('protocol') == 'uniform') & (pl.col('aspect') != 'prompt'))
write_table(deviations, out / 'bench_deviations',
            title="How each benchmark's scorer deviates from its release")
deviations.select('benchmark', 'aspect', 'here')

# %%
print(examples[0].story)
print(examples[0].question, examples[0].options, '->', examples[0].gold)
gold = examples[0].gold_pddl
trace = pddl.execute(gold.task(), gold.actions)
(out / 'example_gold_trace.txt').write_text(pddl.trace_text(trace) + '\n')
print(pddl.trace_text(trace))

# %% [markdown]
# ## The ladder
#
# Three calls per example, variant and model (`models`, or the one `model`: PDDL-Mind's Table 2 compares backbones; the calls are greedy, so one run each); every record keeps the replies, parse outcomes, rejected actions, trace comparison, calls and tokens. Every table below has a row per model.

# %%
backends = [pddl.make_backend(spec, examples, script=p.script, base_dir=find_repo_root())
            for spec in p.model_list()]
models = matrix.check_labels([b.model for b in backends])
ladder = pddl.LadderConfig(variants=tuple(p.variants), parse_max_tokens=p.parse_max_tokens,
                           domain_max_tokens=p.domain_max_tokens,
                           answer_max_tokens=p.answer_max_tokens,
                           state_max_tokens=p.state_max_tokens, seed=p.seed,
                           structured=p.structured)
records = pl.concat([pddl.run_ladder(b, examples, ladder) for b in backends])
pddl.RECORDS.write(records, out)
{'models': models, 'records': records.height}

# %%
table = report.ladder_table(records)
write_table(table, out / 'ladder', title='PDDL-Mind ladder (Table 1): accuracy, parsing, '
            'verification, calls and tokens per example')
show_chart(report.ladder_chart(table), out / 'ladder')

# %%
table.select('source', 'variant', 'n', 'accuracy', 'trace_correct',
             'calls_per_example', 'prompt_tokens', 'completion_tokens')

# %% [markdown]
# ### Against the paper
#
# Comparable with PDDL-Mind Table 1 (no verification and full rows, per benchmark; GPT-4o in
# the paper) only where a benchmark sample is present and a model of that class runs: the
# CPU default's SmolLM2-135M is not one, and oracle stories are this package's own (no paper
# figure). FANToM is restricted to its Accessibility and Answerability questions as in the
# paper, and its All metric (every question of a set right) is reported beside the
# per-question mean the paper's 80.0 is.

# %%
versus = report.paper_comparison(table)
write_table(versus, out / 'paper_table1', title='The ladder beside PDDL-Mind Table 1 (%)')
all_metric = report.all_table(records)
fantom_note = availability.filter(availability['benchmark'] == 'fantom')['note'].to_list()
write_table(all_metric, out / 'fantom_all', title="FANToM: per-question accuracy and All",
            why_empty=(fantom_note or ['FANToM is not among this run\'s benchmarks'])[0])
versus

# %% [markdown]
# ## Per question category (Table 2)
#
# PDDL-Mind Table 2 sets full PDDL-Mind beside two cost-efficient baselines, chain of thought
# (one call) and DWM (a state description after each of three parts of the story, then the
# answer: four calls), per question category and backbone (`cogrsi_lib/pddl/baselines.py`;
# DWM's state prompt is this package's wording). The paper's categories are MMToM-QA's,
# MuMA-ToM's and FANToM's; here they are the oracle stories' (and a benchmark's where its
# sample is present). On the CPU default's SmolLM2-135M these accuracies are near chance and
# show the table's shape, not the paper's result.

# %%
categories = report.category_table(records)
write_table(categories, out / 'categories', title='Accuracy per question category and system')
table2 = report.table2(records)
write_table(table2, out / 'paper_table2', title='PDDL-Mind Table 2: CoT, DWM and PDDL-Mind '
            'per category (accuracy; calls per example)')
table2

# %% [markdown]
# ## Failure classification
#
# Wrong answers: `parsing/state` (a reply did not parse, or the executed trace differs from
# the gold trace on the facts the question depends on: its object and the agents it asks
# about), `reasoning` (correct trace, wrong answer), `answer format` (no parsable answer),
# `unverified` (benchmark items: no gold trace, and no rejected action naming someone or
# something the question names).

# %%
failures = report.failure_table(records)
write_table(failures, out / 'failures', title='Wrong answers by failure class')
failures

# %% [markdown]
# ## Against chance
#
# Accuracy on the multiple-choice questions of each source and variant against guessing (mean
# of 1/options), with a 95% interval over stories; `best_constant` is what always giving the
# commonest gold label scores (a model stuck on one position reaches it without reading). The
# embedded CPU model is expected near chance.
#

# %%
chance = chance_table(records, ['model', 'source', 'system'])
write_table(chance, out / 'chance', title='Accuracy against chance')
chance

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's
# declared format (`cogrsi_lib/pddl/prompts.py`), share that hit the token cap and mean reply
# tokens.

# %%
replies = write_replies(tally, out / 'replies_by_family', p.max_failed_share)
# several models: each chance row labelled with its model (metrics.json keys it so)
chance_rows = chance.with_columns(label=pl.col('model')) if len(models) > 1 else chance
write_json({'models': [b.identity for b in backends], 'examples': len(examples),
            'records': records.height,
            'variants': list(p.variants), 'structured': p.structured,
            'chance': chance_rows.to_dicts(), 'replies': tally.to_dict()}, out / 'summary.json')
replies
