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
# # Benchmarks
#
# Load every available benchmark in its release format (CogRSI §3, App. E), count its questions
# by benchmark and question type, draw the disjoint sample manifests S0-S4 by story with fixed
# seeds (App. E.1-E.2), report the best constant reply beside each benchmark on the main test
# sample under both protocols (`official`: as the release runs it; `uniform`: the package's
# prompt; Table 22 note), list how each protocol deviates from each release, and render the
# per-benchmark results table that later stages fill (Main = mean over the eight main
# benchmarks). Logic lives in `cogrsi_lib.bench`.
#
# This stage gives the shape of CogRSI's Table 10 (sample sizes) and the template of Table 3, and the Zing report's Table 5 (`cogrsi papers`). It calls no model: its counts are exact for the benchmark files present.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/bench/params.py (BenchmarksParams).
# `cogrsi stage benchmarks` (what `dvc repro` runs) injects params.yaml[benchmarks] here.
params = {}
out_dir = None

# %%
from cogrsi_lib import stage_params

p = stage_params.load('benchmarks', params)

# %%
import altair as alt
import polars as pl

from cogrsi_lib import bench
from cogrsi_lib.bench.manifest import SPLIT_NAMES, draw_manifests, select, write_manifest
from cogrsi_lib.bench.protocol import PROTOCOLS
from cogrsi_lib.bench.report import (
    benchmark_table,
    constant_baselines,
    counts_by_benchmark,
    counts_by_type,
    deviations_table,
    load_available,
    results_table,
    results_template,
)
from cogrsi_lib.pipeline import resolve_out_dir
from cogrsi_lib.reports import show_chart, write_json, write_table

# %%
out = resolve_out_dir(out_dir, "benchmarks")
loaded = load_available(p.benchmarks)
registry = benchmark_table(loaded)
write_table(registry, out / "registry", title="Registered benchmarks")
registry

# %% [markdown]
# ## Questions by benchmark and by question type

# %%
counts = counts_by_benchmark(loaded)
write_table(counts, out / "counts_by_benchmark", title="Questions and units per benchmark")
print(f"{counts['n_questions'].sum()} questions in {counts.height} benchmarks")
counts

# %%
by_type = counts_by_type(loaded)
write_table(by_type, out / "counts_by_type", title="Questions per benchmark and question type")
with pl.Config(tbl_rows=-1):
    print(by_type)

# %%
chart = alt.Chart(counts.to_pandas()).mark_bar().encode(
    x=alt.X("n_questions:Q", title="questions"),
    y=alt.Y("benchmark:N", sort="-x", title=None),
    color=alt.Color("sample:N", title="sample"),
).properties(width=360, title="Questions per available benchmark")
show_chart(chart, out / "questions_by_benchmark")

# %% [markdown]
# ## Sample manifests (S0-S4)
#
# Drawn by unit (story, conversation or structural group), disjoint by construction; seeds
# as in App. E.2 (smoke and held-out 1: 0, held-out 2: 1, confirmatory: 3).

# %%
manifests = draw_manifests(loaded, p.sample_sizes.model_dump(), p.sample_sizes_by_benchmark,
                           p.seeds.model_dump())
for m in manifests:
    write_manifest(m, out / "manifests" / f"{m.benchmark}.json")
summary = pl.DataFrame([
    {"benchmark": bench.get(m.benchmark).title, "split": split, "sample": SPLIT_NAMES[split],
     "seed": m.seeds[split], "n_units": len(m.units[split]), "n_questions": len(m.items[split])}
    for m in manifests for split in m.members
])
write_table(summary, out / "manifest_summary", title="Sample manifests")
summary.filter(pl.col("n_questions") > 0)

# %% [markdown]
# ## How each protocol deviates from each release
#
# From the registry (each benchmark module declares its rows); the same table is in
# `cogrsi_lib/bench/README.md`. A result is comparable with a paper's only as far as this allows.

# %%
deviations = deviations_table(list(loaded))
write_table(deviations, out / "deviations", title="Protocol deviations from each release")
with pl.Config(tbl_rows=-1, fmt_str_lengths=200, tbl_width_chars=200):
    print(deviations.select("benchmark", "protocol", "aspect", "here", "broken"))

# %% [markdown]
# ## Constant-answer sanity check on the main test sample (S3), under both protocols
#
# A constant reply is given to every presentation a protocol asks (ToMBench's official
# protocol shuffles the options five times, so a constant letter names different options).

# %%
main_sample = {m.benchmark: select(loaded[m.benchmark], m, "S3") for m in manifests
               if m.items.get("S3")}
constants_all = pl.concat([constant_baselines(name, items, p.constant_top, protocol)
                           for name, items in main_sample.items() for protocol in PROTOCOLS])
write_table(constants_all, out / "constant_baselines",
            title="Best constant reply per metric and protocol (S3)")
headline = constants_all.filter(pl.col("metric") == "score").pivot(
    on="protocol", index="benchmark", values="score")
write_table(headline, out / "constant_baselines_headline",
            title="Best constant reply's headline score under each protocol (S3)")
headline

# %% [markdown]
# ## Per-benchmark results table (filled by later stages)

# %%
constants = constants_all.filter(pl.col("protocol") == "uniform")
best_constant = constants.filter(pl.col("metric") == "score").join(
    registry.select("benchmark", "name"), on="benchmark", maintain_order="left")
constant_row = pl.DataFrame({"system": "best constant reply", "benchmark": best_constant["name"],
                             "score": best_constant["score"]})
template = pl.concat([results_template(p.systems), results_table(constant_row)])
write_table(template, out / "main_table_template", title="Main results (template)")
template

# %% [markdown]
# ## Summary
#
# The stage's headline numbers, `summary.json` (`dvc metrics show`).

# %%
official_constant = constants_all.filter((pl.col("protocol") == "official")
                                         & (pl.col("metric") == "score"))
summary = {"benchmarks": registry.height, "questions": int(counts["n_questions"].sum()),
           "best_constant_score_s3": dict(best_constant.select("benchmark", "score").iter_rows()),
           "best_constant_score_s3_official": dict(
               official_constant.select("benchmark", "score").iter_rows()),
           "deviations": deviations.height}
write_json(summary, out / "summary.json")
summary
