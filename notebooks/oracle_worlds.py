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
# # Oracle worlds
#
# Sample legal worlds from the access oracle (CogRSI §4.3, App. C J105) and answer every
# question about them up to `max_depth`. Rules: `cogrsi_lib/oracle/SEMANTICS.md`.
#
# No table of the papers comes from this stage alone: it checks the oracle every other stage draws from, at the audit's sample size.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/oracle/params.py (OracleWorldsParams).
# `cogrsi stage oracle_worlds` (what `dvc repro` runs) injects params.yaml[oracle_worlds] here.
params = {}
out_dir = None

# %%
from cogrsi_lib import stage_params

p = stage_params.load('oracle_worlds', params)

# %%
from cogrsi_lib.oracle.sampler import SamplerConfig, question_table, sample_worlds, world_table
from cogrsi_lib.oracle.summary import event_summary, question_summary
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.progress import progress, timed
from cogrsi_lib.reports import write_json, write_table

# %%
out = resolve_out_dir(out_dir, "oracle_worlds")
cfg = SamplerConfig(min_agents=p.min_agents, max_agents=p.max_agents, n_containers=p.n_containers,
                    min_events=p.min_events, max_events=p.max_events,
                    p_hidden_observer=p.p_hidden_observer, p_missed=p.p_missed,
                    testimony=p.testimony, opening=p.opening)
with timed("sampling worlds and their questions"):
    worlds = list(progress(sample_worlds(p.n_worlds, p.seed, cfg), desc="worlds",
                           total=p.n_worlds))
    questions = question_table(worlds, p.max_depth)
{"worlds": len(worlds), "questions": questions.height}

# %%
worlds_df = world_table(worlds)
worlds_df.write_parquet(out / "worlds.parquet")
questions.write_parquet(out / "questions.parquet")
summary = question_summary(questions)
write_table(summary, out / "question_summary", title="Questions by kind and depth")
summary

# %%
events = event_summary(worlds_df)
write_table(events, out / "event_summary", title="Events in the sampled worlds")
events

# %%
conditions = worlds_df.group_by("lie_condition", maintain_order=True).len().sort("lie_condition")
write_table(conditions, out / "lie_conditions", title="Worlds per lie condition (plan §5.4)")
conditions

# %% [markdown]
# ## Summary
#
# The stage's headline numbers, `summary.json` (`dvc metrics show`).

# %%
summary = {"n_worlds": len(worlds), "n_questions": questions.height,
           "testimony": p.testimony, "opening": p.opening,
           "worlds_by_lie_condition": dict(conditions.iter_rows())}
write_json(summary, out / "summary.json")
summary
