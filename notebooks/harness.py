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
# # Actio-style harness: module ablations
#
# A frozen model wrapped by a harness (zing-social-mind-report §5): PRISM skills with asked-variable routing and self-exit (§5.3), Starling attribution-first state (§5.4), SAGE experience memory with its fallback cascade (§5.5) and gated retrieval of normative notes (§5.6), each gated per item and recorded in the trace. Configurations as Table 10: Base, +skills, +memory (Starling + SAGE), +retrieval, Full, and Starling alone (Figure 25), on the same items; one greedy direct answer per item. Logic: `cogrsi_lib/harness/`.
#
# This stage gives the shape of the Zing report's Table 10, Figures 23-26 and Table 11 (`cogrsi papers`), one row per model of `models` (`cogrsi_lib/matrix.py`; the harness answers greedily, so one run each). On the CPU default one 135M model stands in for the report's five, near chance: the tables show their rows and columns, not the report's result.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/harness/params.py (HarnessParams).
# `cogrsi stage harness` (what `dvc repro` runs) injects params.yaml[harness] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('harness', params)

# %%
import polars as pl

from cogrsi_lib import matrix
from cogrsi_lib.embedding import MiniLMEmbedder
from cogrsi_lib.harness import stage as hs
from cogrsi_lib.llm import start_tally
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table
from cogrsi_lib.stats import chance_table

# %%
out = resolve_out_dir(out_dir, 'harness')
tally = start_tally()  # every model call of this stage, by prompt family
backends = [spec.build(find_repo_root()) for spec in p.model_list()]
models = matrix.check_labels([b.model for b in backends])
embedder = MiniLMEmbedder()
items, skipped = hs.evaluation_items(p.benchmarks, p.n_per_benchmark, p.n_oracle, p.oracle_seed,
                                     sample_seed=p.sample_seed)
test_ids = [it.item_id for its in items.values() for it in its]
dev_items = hs.development_items(p.dev.n_tombench, p.dev.n_oracle, p.dev.oracle_seed,
                                 exclude=test_ids)
{'models': models, 'items': {k: len(v) for k, v in items.items()}, 'dev_items': len(dev_items),
 'skipped': skipped}

# %% [markdown]
# ## Each model's study
#
# For every model of `models` (or the one `model`), on the same items (`cogrsi_lib/harness/stage.py` `study`):
#
# - **SAGE distillation** on development items only, disjoint from the evaluated ones: the Generator is the base system; the Reflector's replies are checked strictly and rejections logged.
# - **Calibration on validation items (eqs. 9 and 10)**, the development items again, never evaluated: each retrieval note injected for an item is credited with its repair or damage against Base and the retriever refined (eq. 9); then the controlled full harness runs with it and the offline optimizer updates the gate policy from its traces (eq. 10): gates and paths that went with more wrong answers or validator flags than average are demoted.
# - **Ablations**: every configuration of `ablations` on the evaluation items; `full` runs the control layer (per-item gate over paths with the calibrated policy, validator, one repair) with the refined retriever; `full_ungated` puts every module's evidence on every item, so the difference between the two is the control layer's own.
# - **SAGE's own ablation** (Figure 26).
#
# Every table below has a `model` column; each model's store, distillation log and calibration log are kept under its name.

# %%
studies = [hs.study(b, p, items, dev_items, embedder, test_ids=test_ids) for b in backends]
write_json({s.model: s.store.to_dict() for s in studies}, out / 'experience_store.json')
write_json({s.model: s.distil_log for s in studies}, out / 'distil_log.json')
write_json({s.model: s.calibration.log for s in studies}, out / 'calibration.json')
write_table(matrix.by_model([(s.model, s.calibration.note_credit) for s in studies]),
            out / 'retrieval_credit', title='Retrieval notes credited on validation items (eq. 9)')
policy_credit = matrix.by_model([(s.model, s.calibration.policy_credit) for s in studies])
write_table(policy_credit, out / 'policy_credit',
            title='Gate policy update on validation traces (eq. 10)')
frame = pl.concat([s.frame for s in studies])
hs.RECORDS.write(frame, out)
{s.model: {'entries': len(s.store), 'records': s.frame.height} for s in studies}

# %% [markdown]
# ## Ablations
#
# Accuracy by model, configuration and source (unparsed answers count as wrong), with calls and tokens per question, and each configuration's change against Base in points.

# %%
accuracy_of = {s.model: hs.accuracy_table(s.frame) for s in studies}
deltas_of = {m: hs.delta_table(a) for m, a in accuracy_of.items()}
accuracy = matrix.by_model(list(accuracy_of.items()))
write_table(accuracy, out / 'ablations', title='Accuracy by harness configuration')
write_table(matrix.side_by_side(accuracy, ['source', 'system'], 'accuracy'),
            out / 'ablations_by_model',
            title='Accuracy by harness configuration, one column per model')
accuracy

# %% [markdown]
# ## Against chance
#
# Each configuration's accuracy on the multiple-choice items against guessing (mean of 1/options), with a 95% interval over stories; `best_constant` is what always giving the commonest gold label scores. `top_answer` is the answer a configuration gives most and `top_answer_share` its share of the questions: near 1, the model gives one answer throughout, so every configuration scores that answer's share of the golds and the differences between them are zero by construction, not a finding about the modules. The embedded CPU model is expected near chance: differences between configurations then say nothing about the modules.

# %%
chance = matrix.by_model([(s.model, chance_table(s.frame, ['system'])) for s in studies])
write_table(chance, out / 'chance', title='Accuracy against chance')
chance

# %%
deltas = matrix.by_model(list(deltas_of.items()))
write_table(deltas, out / 'ablation_deltas', title='Change against Base (points)')
deltas.filter(deltas['source'] == 'all')

# %% [markdown]
# ### Against the report (Table 10)
#
# One row per model and source: its Base -> Full change beside the report's Table 10 changes on ToMBench and Hi-ToM (five frontier models, whole benchmarks). Comparable only in direction and only with a model of that class: the CPU default's SmolLM2-135M is near chance and these are a few items per source.

# %%
versus = pl.concat([hs.paper_comparison(d, m) for m, d in deltas_of.items()])
write_table(versus, out / 'paper_table10', title='Base -> Full change beside the report\'s Table 10 (points)')
versus

# %% [markdown]
# ### By question type (Figures 23 and 25)
#
# Accuracy by question type and configuration, with each configuration's change against Base on the same questions: per ToMBench task, the change PRISM (`harness:skills`) makes (Figure 23); per Hi-ToM order, Base against Starling alone (`harness:state`, Figure 25); the oracle's question kinds and depths beside them. The evaluated items are a random sample of each benchmark (`sample_seed`), so a type holds as many questions as the sample drew: on the CPU default one or two, near chance and underpowered, the figures' rows and columns, not the report's result.

# %%
by_type = matrix.by_model([(s.model, hs.question_type_table(s.frame)) for s in studies])
write_table(by_type, out / 'by_question_type',
            title='Accuracy by question type and change against Base (points)')
by_type.filter(by_type['system'].is_in(['harness:skills', 'harness:state']))

# %% [markdown]
# ## SAGE ablation (Figure 26)
#
# SAGE alone under each Selector mode against Base, on ToMBench items (the figure's split) and Hi-ToM items (held out, Table 11) when present, else the oracle items. The figure puts each model's accuracy on ToMBench and 95% interval over stories beside the report's (DeepSeek-V4-Flash on ToMBench's test split), with the chance level; on the CPU default a few items per configuration give intervals that span most of the axis: the figure's shape, not its result.

# %%
sage = matrix.by_model([(s.model, hs.accuracy_table(s.sage_frame)) for s in studies])
write_table(sage, out / 'sage_ablation', title='SAGE ablation (Figure 26)')
show_chart(hs.sage_chart(matrix.by_model([
    (s.model, chance_table(hs.figure26_frame(s.sage_frame), ['system'])) for s in studies])),
    out / 'sage_ablation')

# %% [markdown]
# ### The frozen store in domain and held out (Table 11)
#
# Base against SAGE's full cascade with the store frozen after distillation: ToMBench in domain (the store is distilled on its development items, and on oracle questions), Hi-ToM held out, with the report's row beside (its store curated on ToMBench's Chinese training split; TactfulToM has no data here). On the CPU default a few questions per benchmark: near chance, the table's shape only.

# %%
transfer = matrix.by_model([(s.model, hs.sage_transfer(s.sage_frame)) for s in studies])
write_table(transfer, out / 'sage_transfer', title='Frozen SAGE store: in domain and held out (Table 11)')
transfer

# %% [markdown]
# ## PRISM routing (§5.3.3.3)
#
# Family-hit and strict-hit against the items' own labels (ToMBench ability, Hi-ToM order, oracle depth); repair and damage against Base's answers on the same items. Unrouted items count as misses.

# %%
routing = matrix.by_model([(s.model, hs.routing_table(s.frame, system.name))
                           for s in studies for system in s.systems
                           if system.router is not None])
if routing.height:
    write_table(routing, out / 'routing', title='Routing diagnostics')
routing

# %% [markdown]
# ## Module gates
#
# What each gate decided, per configuration: Starling (inject, or why not), SAGE's cascade level, retrieval's decision, the route's status.

# %%
decisions = matrix.by_model([(s.model, hs.module_decisions(s.frame)) for s in studies])
write_table(decisions, out / 'module_decisions', title='Module gate decisions')
coverage = {s.model: [hs.experience_coverage(s.frame, system.name) for system in s.systems
                      if system.selector is not None] for s in studies}
write_json(coverage, out / 'experience_coverage.json')
decisions

# %% [markdown]
# ## Starling against the oracle and Hi-ToM (§5.8.4)
#
# Agreement of the state memory's answer with the oracle's on every question of sampled worlds, with the oracle's own perceivers (gold) and with perceivers derived from presence; and with Hi-ToM's gold labels under three rule sets: the oracle's, Hi-ToM's stated rule (trust by exit order) and its generator's rule; `runtime` marks the one the harness reads Hi-ToM stories with (`cogrsi_lib.harness.runtime.STARLING_RULES`; every other source gets the oracle's).

# %%
state = hs.state_agreement(p.agreement.n_worlds, p.agreement.seed, p.agreement.max_depth)
write_table(state, out / 'state_agreement_oracle', title='Starling vs the oracle')
hitom = hs.hitom_agreement()
if hitom is not None:
    write_table(hitom, out / 'state_agreement_hitom', title='Starling vs Hi-ToM gold')
state

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's declared format, share that hit the token cap and mean reply tokens.

# %%
replies = write_replies(tally, out / 'replies_by_family', p.max_failed_share)
write_json({'backends': [spec.backend for spec in p.model_list()], 'models': models,
            'embedder': embedder.name, 'ablations': p.ablations,
            'skipped_benchmarks': skipped, 'structured': p.structured,
            'chance': chance.to_dicts(), 'replies': tally.to_dict()},
           out / 'summary.json')
replies
