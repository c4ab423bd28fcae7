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
# # Nested-belief benchmark (R0-R4)
#
# Location questions about belief chains of depth 0-4 from oracle worlds (recursive-reasoning plan §4 Suite A). For each depth R1-R4 an *adversarial* partition (the answer differs from reality **and** from every shallower prefix's answer, §5.6) and a *true-belief* partition (answer = reality), `n_per_cell` items each; R0 asks about reality. The shortcut heuristics of §1.4 / §7 are scored per depth (Gate A, §16), and the oracle itself must score 100%.
#
# This stage gives the items of the recursive-reasoning plan's §8.1 curve (accuracy by depth R0-R4, `cogrsi papers`); the scorecard stage asks them of a model.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/nested/params.py (NestedParams).
# `cogrsi stage nested` (what `dvc repro` runs) injects params.yaml[nested] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('nested', params)

# %%

from cogrsi_lib.nested import (
    ADVERSARIAL,
    NestedConfig,
    baseline_curves,
    baseline_table,
    baseline_wide,
    depth_chart,
    edit_table,
    generate,
    generation_table,
    integrity_table,
    item_table,
    oracle_replies,
    require,
    score,
    strata_table,
    whisper_table,
    write_items_jsonl,
)
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_table

# %%
out = resolve_out_dir(out_dir, 'nested')
cfg = NestedConfig(n_per_cell=p.n_per_cell, n_agents=p.n_agents, n_containers=p.n_containers,
                   min_events=p.min_events, max_events=p.max_events, seed=p.seed,
                   testimony=p.testimony, opening=p.opening)
gen = generate(cfg)
items = gen.items
print(f'{len(items)} items from {gen.worlds_sampled} sampled worlds '
      f'({gen.worlds_used} gave items)')

# %% [markdown]
# ## Items
#
# `items.jsonl`: one item JSON per line (story, question, options, gold, access facts, strata, structured world). `items.parquet`: the same, flat. A model replies `{"answer": ..., "confidence": ...}`.

# %%
item_table(items).write_parquet(out / 'items.parquet')
write_items_jsonl(items, out / 'items.jsonl')
cells = generation_table(gen)
write_table(cells, out / 'cells', title='Items per cell and worlds sampled to fill it')
cells

# %%
strata = strata_table(items)
write_table(strata, out / 'strata', title='Items by depth, partition and source of the answer, with the share of each phenomenon')
strata

# %% [markdown]
# ## Lie conditions and whispers (oracle semantics v2)
#
# Worlds with a lie are told as an unlabelled lie, a known liar or a revealed lie (plan §5.4), scored separately below. A whisper now reaches every chain over its two agents: the deep adversarial items whose answer a whisper fixed, and those a later whisper over the chain's agents should have overwritten (v1's incoherent items), beside v1's recorded counts (`cogrsi_lib/nested/whispers.py`).

# %%
lies = (item_table(items).group_by('lie_condition', 'depth', 'partition', maintain_order=True)
        .len().sort('lie_condition', 'depth', 'partition'))
write_table(lies, out / 'lie_conditions', title='Items per lie condition, depth and partition')
whispers = whisper_table(items)
write_table(whispers, out / 'whisper_depth', title='Adversarial R3/R4 items decided by a whisper, and items a later whisper should have changed: semantics v1 (recorded) and v2')
whispers

# %% [markdown]
# ## Shortcut baselines
#
# Accuracy of each heuristic per depth. Empty cells: the heuristic is the task itself there (first-order at R1, reality at R0). `exclusion` (first option no shallower question gives) is reported but is not a non-recursive shortcut, so it is left out of recursive lift and of Gate A.

# %%
baselines = baseline_table(items)
write_table(baselines, out / 'heuristic_baselines', title='Shortcut heuristics: accuracy by subset and depth')
adversarial = baseline_wide(baselines, ADVERSARIAL)
write_table(adversarial, out / 'heuristic_baselines_adversarial', title='Shortcut heuristics on the adversarial partition (accuracy by depth)')
adversarial

# %%
overall = baseline_wide(baselines, 'all')
write_table(overall, out / 'heuristic_baselines_all', title='Shortcut heuristics on all items (accuracy by depth)')
overall

# %% [markdown]
# ## Depth curve
#
# Accuracy against depth for the oracle and every heuristic; dashed: chance (1 / containers).

# %%
curves = baseline_curves(items)
write_table(curves, out / 'depth_curve', title='Accuracy by depth per predictor')
show_chart(depth_chart(curves, chance=1 / p.n_containers), out / 'depth_curve')

# %%
oracle_score = score(items, oracle_replies(items), baselines=baselines)
write_json(oracle_score.summary(), out / 'oracle_score.json')
write_table(oracle_score.by_depth, out / 'oracle_by_depth', title='Oracle scorecard by depth')
write_table(oracle_score.by_lie_condition, out / 'oracle_by_lie_condition', title='Oracle accuracy by lie condition')
oracle_score.by_depth

# %% [markdown]
# ## Gate A (plan §16) and the deepest-level edit (§5.7)
#
# Every adversarial item should admit an edit of the event behind its answer that changes R_k and leaves reality and every shallower answer as they were.

# %%
edits = edit_table(items)
write_table(edits, out / 'deepest_edits', title='Adversarial items with a deepest-level edit')
edits

# %%
gate = integrity_table(gen, baselines, curves)
write_table(gate, out / 'integrity', title='Gate A: benchmark integrity')
require(gate)
gate

# %% [markdown]
# ## Summary
#
# The stage's headline numbers, `summary.json` (`dvc metrics show`).

# %%
summary = {"n_items": len(items), "worlds_sampled": gen.worlds_sampled,
           "oracle_accuracy": oracle_score.accuracy, "gate_a": gate.to_dicts()}
write_json(summary, out / "summary.json")
summary
