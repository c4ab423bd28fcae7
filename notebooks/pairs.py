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
# # Counterfactual pairs
#
# Flip and same pairs, narrative and dialogue, in a gate split and an evaluation split drawn with different seeds from disjoint lexicons (CogRSI §3, App. C "Counterfactual pairs"). Each pair is two oracle worlds that differ in one access fact of the target; gold answers come from the oracle. A pair counts only if both versions are right. Variants: `cogrsi_lib/pairs/variants.py`.
#
# The pairs are the items of CogRSI's Figure 6 and Table 9 (pair validity), which `reader_eval` and the loops score (`cogrsi papers`).

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/pairs/params.py (PairsParams).
# `cogrsi stage pairs` (what `dvc repro` runs) injects params.yaml[pairs] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('pairs', params)

# %%
from cogrsi_lib import pairs
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_table

# %%
out = resolve_out_dir(out_dir, 'pairs')
splits = pairs.build_splits(
    gate_seed=p.gate_seed, eval_seed=p.eval_seed,
    n_gate_narrative=p.n_gate_narrative, n_gate_dialogue=p.n_gate_dialogue,
    n_eval_narrative=p.n_eval_narrative, n_eval_dialogue=p.n_eval_dialogue,
)
paths = pairs.write_splits(splits, out)
{split: df.height for split, df in splits.items()}

# %% [markdown]
# ## Counts
#
# Pairs by split, form, variant and kind.

# %%
counts = pairs.counts_table(splits)
write_table(counts, out / 'counts', title='Pairs by split, form, variant and kind')
counts

# %% [markdown]
# ## Oracle sanity
#
# Pair validity of the oracle replayed from the stored worlds (must be 1.0) and of answerers that ignore access: `reality` (where the object is), `initial` (where it started) and `in_room` ("a character in the room knows what happens", CogRSI §1). Both versions of a pair share reality and the start, so these shortcuts give one answer to both and never make a flip pair valid; `in_room` also fails `watch/asleep` (§5.4).

# %%
sanity = pairs.sanity_table(splits)
pairs.check_oracle(sanity)
write_table(sanity, out / 'oracle_sanity',
            title='Pair validity of the oracle and of shortcut answerers')
sanity

# %%
long = pairs.sanity_long(splits)
write_table(long, out / 'oracle_sanity_long')
show_chart(pairs.sanity_chart(long, split='eval'), out / 'oracle_sanity')

# %% [markdown]
# ## Examples
#
# The first pair of each variant in each split, both versions.

# %%
examples = pairs.examples(splits)
write_table(examples, out / 'examples', title='One pair per variant and split')
examples.head(4)

# %% [markdown]
# ## Summary
#
# The stage's headline numbers, `summary.json` (`dvc metrics show`).

# %%
summary = {"pairs": {split: df["pair_id"].n_unique() for split, df in splits.items()},
           "versions": {split: df.height for split, df in splits.items()}}
write_json(summary, out / "summary.json")
summary
