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
# # Grounded reader and baselines
#
# The grounded reader (CogRSI §4.1, App. G.6) and its baselines (zero-shot, CoT, self-consistency, SimToM, PercepToM and their +SC forms, §5.1) on one shared backend, on (a) counterfactual pairs of the oracle's evaluation split (a pair counts only if both versions are right, §3) and (b) the first items of each benchmark whose files are present, under the benchmark's uniform protocol (this package's prompt; a closed answer set asked as options; the benchmark's scorer). An unparsed answer is wrong. Calls and tokens are counted per question (G.7: the paper's reader makes 7.3 calls and 1.51x the tokens of SC k=6). Logic: `cogrsi_lib/reader/evaluate.py`.
#
# Every model of `models` (or the one `model`) runs `runs` times (`cogrsi_lib/matrix.py`): run *r* seeds every sampled call anew and shares the greedy ones, as the paper reports each system as the mean of three runs. Scores are given per run and over the runs (mean, run-to-run SD, range), the models side by side; intervals and paired differences pool each model's runs, resampling stories.
#
# This stage gives the shape of CogRSI's Tables 2, 3, 4/26, 7, 8, 9, 12, 17, 19, 20, 25 and 27 and Figures 8, 9, 13a-c and 14 (systems × benchmarks × runs; `cogrsi papers --paper CogRSI` says what each lacks). On the CPU default (SmolLM2-135M, a few items per benchmark) the scores are near chance and the intervals wide: they show the tables' rows, columns and statistics, not the paper's result.

# %% tags=["parameters"]
# Small CI defaults live in the schema: cogrsi_lib/baselines/params.py (ReaderEvalParams).
# `cogrsi stage reader_eval` (what `dvc repro` runs) injects params.yaml[reader_eval] here.
params = {}
out_dir = None


# %%
from cogrsi_lib import stage_params

p = stage_params.load('reader_eval', params)

# %%
import polars as pl

from cogrsi_lib import matrix
from cogrsi_lib import pairs as pairs_lib
from cogrsi_lib.baselines.ablations import ablation_table
from cogrsi_lib.baselines.learned import LEARNED, cell_learned, cell_systems
from cogrsi_lib.baselines.main_table import main_table
from cogrsi_lib.bench.report import deviations_table
from cogrsi_lib.bench.runner import ask_official_all
from cogrsi_lib.llm import start_tally
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.progress import phase, timed
from cogrsi_lib.reader import evaluate as ev
from cogrsi_lib.reports import show_chart, write_json, write_replies, write_table

# %%
out = resolve_out_dir(out_dir, 'reader_eval')
tally = start_tally()  # every model call of this stage, by prompt family
backends = [spec.build(find_repo_root()) for spec in p.model_list()]
models = matrix.check_labels([b.model for b in backends])
split = pairs_lib.to_frame(pairs_lib.generate_split(
    'eval', p.pairs.eval_seed, p.pairs.n_eval_narrative, p.pairs.n_eval_dialogue))
pair_records = ev.select_pairs(split, p.n_pairs)
bench_items, confirm_items, skipped = p.bench_samples(find_repo_root())
{'models': models, 'runs': p.runs, 'pair_versions': pair_records.height,
 'benchmarks': {k: len(v) for k, v in bench_items.items()},
 'confirmatory': {k: len(v) for k, v in confirm_items.items()}, 'skipped': skipped}

# %% [markdown]
# With `learned.principles_file` (the loops stage's final principles), the reader also runs as CogRSI-L: loop arm `learned.arm`'s principle in place of the expert one, the k-th loop seed's in run k, as the paper reports one CogRSI-L run per loop seed (`cogrsi_lib/baselines/learned.py`). It then has as many runs as the arm has seeds, the other systems `runs`; a loop that admitted nothing leaves its principle empty (the records' `principle` reads `none`). Each of `learned.compare_arms` is read alike as its own system, `cogrsi_l_<arm>` (Figure 6 and Table 9 set the accuracy-only loop's principle beside the gated one's).

# %%
learned_systems = p.learned.systems(find_repo_root())
learned = learned_systems.get(LEARNED, [])
learned_by_run = {r.run: r for r in learned}
n_learned = max(map(len, learned_systems.values()), default=0)
print({name: [{'run': r.run, 'seed': r.seed, 'words': len(r.principle.split())} for r in runs]
       for name, runs in learned_systems.items()})

# %%
cells, confirm_cells = [], []  # the confirmatory sample (Table 3B) is evaluated alike
for cell in p.cells(n_learned):
    chosen = cell_systems(p.systems if cell.run < p.runs else [], backends[cell.index],
                          p.reader(cell.run), p.principle,
                          cell_learned(learned_systems, cell.run))
    with timed(f"reader and baselines: {models[cell.index]}, run {cell.run}"):
        cells.append((models[cell.index], ev.evaluate(
            chosen, pair_records, bench_items, batch_size=p.batch_size, run=cell.run)))
    if confirm_items:
        with timed(f"confirmatory sample: {models[cell.index]}, run {cell.run}"):
            confirm_cells.append((models[cell.index], ev.evaluate(
                chosen, None, confirm_items, batch_size=p.batch_size, run=cell.run)))
result = ev.ReaderRuns(cells)
ev.RECORDS.write(result.items, out)
result.items.height

# %% [markdown]
# ## Accuracy
#
# Per model, system and source: `accuracy` is the share whose final answer equals the gold (unparsed answers count as wrong); `score` is the per-item score by the source's own rule (pairs: the oracle's gold). Each is the mean over the runs, with its run-to-run SD (`_sd`, empty for one run) and range; every run's own row is in `accuracy_runs`, and `score_by_model` puts the models side by side.

# %%
accuracy_runs = result.per_run(ev.ReaderEval.accuracy_table)
write_table(accuracy_runs, out / 'accuracy_runs', title='Accuracy by system and source, per run')
accuracy = result.accuracy_table()
write_table(accuracy, out / 'accuracy',
            title=f'Accuracy by system and source: mean of {p.runs} run(s), run-to-run SD, range')
by_model = matrix.side_by_side(accuracy, ['source', 'system'], 'score')
write_table(by_model, out / 'score_by_model',
            title=f'Score by system and source, one column per model (mean of {p.runs} run(s))')
accuracy

# %% [markdown]
# ## Against chance and against a reference
#
# Per model, its runs pooled. `chance` is the mean of 1/(number of options) over the multiple-choice items; the interval bootstraps accuracy over stories (a story's items of every run together); `best_constant` is what always giving the commonest gold label scores (a model stuck on one position reaches it without reading). `top_answer` is the answer a system gives most and `top_answer_share` its share of the questions: near 1, the system gives one answer throughout, and its accuracy is only that answer's share of the golds. A system whose interval contains chance is *near chance*: on the CPU default (SmolLM2-135M) expect that, and read no difference between systems into it. Then each system's score minus the reference's on the same items of the same run, with the paired bootstrap over stories (CogRSI §3) and Holm's correction over the systems.

# %%
chance = result.chance_table()
write_table(chance, out / 'chance', title='Accuracy against chance (95% interval over stories; '
            f'each model\'s {p.runs} run(s) pooled: `items` counts every run\'s)')
paired = result.paired_table(p.reference) if p.reference in p.systems else None
if paired is not None:
    write_table(paired, out / 'paired',
                title=f'Score difference against {p.reference} (paired bootstrap over stories; '
                      f'each model\'s {p.runs} run(s) pooled: `items` counts every run\'s)')
chance

# %%
paired

# %% [markdown]
# ## Per benchmark, Holm over the benchmarks (Tables 4 and 26)
#
# CogRSI Table 4 sets the reader against SC (k=9), its equal-token baseline, on each main benchmark, and Table 26 against each benchmark's strongest baseline (the one with the best mean score there, per model): the paired bootstrap over stories on the same items of the same runs, Holm's correction over the benchmarks, and the count of wins, ties and losses before and after it (`cogrsi_lib/baselines/benchmark_paired.py`). Differences are in points of item score (FANToM's All* is a set-level score, so its row pairs item scores, not All*). On the CPU default each benchmark has a few questions: every row is underpowered and shows the table's shape, not the paper's result.

# %%
from cogrsi_lib.baselines.benchmark_paired import STRONGEST, paired_by_benchmark, verdict_counts
from cogrsi_lib.bench import MAIN_BENCHMARKS

main_run = [b for b in MAIN_BENCHMARKS if b in p.benchmarks]
table4 = (paired_by_benchmark(result.items, 'cogrsi', 'sc9', main_run)
          if {'cogrsi', 'sc9'} <= set(p.systems) else pl.DataFrame())
write_table(table4, out / 'paper_table4',
            title='CogRSI Table 4: CogRSI minus SC (k=9) per main benchmark (points; paired '
                  'bootstrap over stories, runs pooled; Holm over the benchmarks)',
            why_empty='`cogrsi` and `sc9` are not both among `systems`, or no main benchmark ran')
strongest = (paired_by_benchmark(result.items, 'cogrsi', STRONGEST, main_run)
             if 'cogrsi' in p.systems else pl.DataFrame())
table26 = pl.concat([f for f in (strongest, table4) if f.height], how='diagonal_relaxed') \
    if strongest.height or table4.height else pl.DataFrame()
write_table(table26, out / 'paper_table26',
            title="CogRSI Table 26: CogRSI minus each main benchmark's strongest baseline and "
                  'minus SC (k=9) (points; paired bootstrap over stories; Holm over the '
                  'benchmarks of each comparison)',
            why_empty='`cogrsi` is not among `systems`, or no main benchmark ran')
write_table(verdict_counts(strongest), out / 'paper_table26_counts',
            title="Table 26's tally against each benchmark's strongest baseline: wins, ties and "
                  'losses before and after Holm', why_empty='Table 26 has no row')
table26

# %% [markdown]
# ## The reader's components (Table 2)
#
# CogRSI Table 2 compares whole systems: inside the same reader, the principle (Stage 2), each reading and arbitration (Stage 3) taken away in turn (`cogrsi_lib/baselines/ablations.py`), each scored on every question and set against the full reader on the same questions (paired bootstrap over stories, each model's runs pooled). Its Stage-1 row (Lib-A, a tool library without the reader) and the loop's principle are not run here. On the CPU default (SmolLM2-135M) the differences are near zero and underpowered: they show the table's shape, not the paper's result.

# %%
table2 = ablation_table(result)
write_table(table2, out / 'paper_table2', title='CogRSI Table 2: the reader with one part '
            'taken away, against the full reader (paired bootstrap over stories)',
            why_empty='the full reader (cogrsi) or its ablations are not among `systems`')
table2

# %% [markdown]
# ## Perception or reasoning? (Table 27)
#
# CogRSI Table 27 gives each system its perceivers from a gold annotation instead of its own perception call, nothing else changed (`cogrsi_lib/baselines/gold_perceivers.py`). Here the gold perceivers are the oracle's own: every first- and second-order belief about the narrative worlds of the oracle's evaluation split, whose stories the oracle renders with who perceived each line (`cogrsi_lib/reader/gold.py`), taken in turn over the table's four columns (FB/TB: false/true belief; 1/2: first/second order). Percept-ToMi, the paper's source, has no licence and is not shipped: `gold_perceivers.percept_tomi` reads its first questions where its files are. Self-consistency never calls perception, so its gold row asks the same requests and is a control. Each model's runs are pooled; every record is in `gold_perceivers/records.parquet`. On the CPU default the rows are a handful of questions near chance: they show the table's shape, not the paper's result.

# %%
from cogrsi_lib.baselines.gold_perceivers import gold_perceivers_table, with_and_without_gold
from cogrsi_lib.reader.gold import gold_items

g = p.gold_perceivers
perceiver_questions = gold_items(split, g.n_questions, g.percept_tomi)  # the whole eval split
gold_cells = []
for cell in p.cells(len(learned)):
    paired_systems = with_and_without_gold(
        g.systems if cell.run < p.runs else [], backends[cell.index], p.reader(cell.run),
        p.principle, learned_by_run[cell.run].principle if cell.run in learned_by_run else None)
    with timed(f"gold perceivers: {models[cell.index]}, run {cell.run}"):
        gold_cells.append((models[cell.index], ev.evaluate_items(
            paired_systems, perceiver_questions, p.batch_size, cell.run)))
gold_runs = ev.ReaderRuns(gold_cells)
(out / 'gold_perceivers').mkdir(exist_ok=True)
ev.RECORDS.write(gold_runs.items, out / 'gold_perceivers')
table27 = gold_perceivers_table(gold_runs)
write_table(table27, out / 'paper_table27',
            title="CogRSI Table 27: each system with its own perception call (model) and with "
                  "gold perceivers (gold); accuracy by column, each model's runs pooled",
            why_empty='`gold_perceivers.n_questions` and `percept_tomi` are 0')
table27

# %% [markdown]
# ## By ATOMS construct, and what each reading adds (Table 25, Figures 8, 13a-c, 14)
#
# Each benchmark question gets the ATOMS construct its benchmark's question type names, by a fixed table (`cogrsi_lib/bench/constructs.py`; no annotation of single questions checks it). Table 25 sets CogRSI against SC (k=6) per construct on the same questions of the same runs, pooled over benchmarks and within benchmarks (each question's difference centred on its benchmark's mean), resampling stories (`cogrsi_lib/baselines/by_construct.py`); the paper omits constructs with fewer than 50 questions, which `reported` marks. The reader's own records then replay each step on the same samples, with no new call (`cogrsi_lib/reader/readings.py`): each reading's vote alone, the vote over both, the evidential rule on reading conflicts, and close-split arbitration (Figures 8 and 13b); who is right on conflicts, and what close-split arbitration fixes and breaks (Figure 13c); and Figure 14's offline checks, the vote-only design's samples re-voted over every mix of the first *a* annotated and *p* plain samples, and stricter arbitration thresholds (looser ones would need new arbiter calls). On the CPU default every construct has a handful of questions near chance: the tables show the paper's shape, not its result.

# %%
from cogrsi_lib.baselines.by_construct import construct_accuracy, construct_chart, construct_table
from cogrsi_lib.reader import readings

table25 = (construct_table(result.items, 'cogrsi', 'sc6')
           if {'cogrsi', 'sc6'} <= set(p.systems) else pl.DataFrame())
write_table(table25, out / 'paper_table25',
            title='CogRSI Table 25: CogRSI minus SC (k=6) by ATOMS construct (points; pooled '
                  'and within benchmark, stories resampled; runs pooled)',
            why_empty='`cogrsi` and `sc6` are not both among `systems`, or no benchmark ran')
by_construct = construct_accuracy(result.items)
write_table(by_construct, out / 'construct_accuracy',
            title='Score by ATOMS construct and system (points; runs pooled)',
            why_empty='no benchmark ran')
if by_construct.height:
    show_chart(construct_chart(by_construct), out / 'figure13a')
table25

# %%
decomposed = readings.steps(result.items) if 'cogrsi' in p.systems else pl.DataFrame()
reading_steps = readings.step_accuracy(decomposed)
write_table(reading_steps, out / 'reading_steps',
            title="Accuracy at each step of the reader, replayed on CogRSI's own samples, by "
                  'ATOMS construct (points; runs pooled)',
            why_empty='`cogrsi` is not among `systems`, or no multiple-choice benchmark ran')
conflicts = readings.conflict_table(decomposed)
write_table(conflicts, out / 'reading_conflicts',
            title='Reading conflicts (who is right) and close splits (what arbitration fixes '
                  'and breaks), by ATOMS construct',
            why_empty='`cogrsi` is not among `systems`, or no multiple-choice benchmark ran')
if reading_steps.height:
    belief_steps = readings.step_accuracy(
        decomposed.filter(pl.col('construct') == 'belief'), by='benchmark')
    write_table(belief_steps, out / 'belief_steps',
                title='Belief questions: accuracy at each step of the reader by benchmark '
                      '(points; runs pooled)', why_empty='no belief question among the items')
    if belief_steps.height:
        show_chart(readings.steps_chart(belief_steps, 'Belief accuracy at each step (CogRSI '
                                        'Figure 8)', by='benchmark'), out / 'figure8')
    show_chart(readings.steps_chart(
        reading_steps.filter(pl.col('step').is_in(['annotated', 'plain', 'vote', 'final'])),
        'Each reading alone, the vote over both, the reader (CogRSI Figure 13b)'),
        out / 'figure13b')
if conflicts.height:
    show_chart(readings.conflict_chart(conflicts), out / 'figure13c')
conflicts

# %%
mix = readings.sample_mix(result.items) if 'cogrsi_noarb' in p.systems else pl.DataFrame()
write_table(mix, out / 'sample_mix',
            title='Figure 14: the vote-only design re-voted over its first a annotated and p '
                  'plain samples (points; runs pooled)',
            why_empty='`cogrsi_noarb` (the vote-only design) is not among `systems`')
if mix.height:
    show_chart(readings.mix_chart(mix), out / 'figure14')
thresholds = (readings.stricter_thresholds(result.items) if 'cogrsi' in p.systems
              else pl.DataFrame())
write_table(thresholds, out / 'stricter_thresholds',
            title='Figure 14: the reader with stricter arbitration thresholds (an arbitration '
                  'stands only where the stricter rule calls it too; points)',
            why_empty='`cogrsi` is not among `systems`')
thresholds

# %%
bench_scores = result.bench_table()
write_table(bench_scores, out / 'bench_scores',
            title="Benchmark headline scores under the uniform protocol (the package's prompt, "
                  f"each benchmark's scorer): mean of {p.runs} run(s), run-to-run SD, range")
write_table(result.per_run(ev.ReaderEval.bench_table), out / 'bench_scores_runs',
            title='Benchmark headline scores under the uniform protocol, per run')
bench_scores

# %% [markdown]
# ## Main results (Table 3)
#
# CogRSI Table 3 (`cogrsi_lib/baselines/main_table.py`): per model and system, the score on each of the eight main benchmarks and Main, their mean, over the runs (CogRSI-L: over the loop seeds). Block A is the main test sample (held-out sample 2, S3) and block B the confirmatory sample (held-out sample 3, S4), both as the benchmarks stage drew them (`manifest_dir`; without it, block A is the first items of each benchmark and there is no block B). A main benchmark whose data is not here stays empty, and `benchmarks` says how many Main averages: Main over fewer than eight is not the paper's Main. Test-only benchmarks are in `bench_scores` (Table 17). Every record of block B is in `confirmatory/records.parquet`. On the CPU default a few questions per benchmark near chance show the table's shape, not the paper's result.

# %%
confirmatory = ev.ReaderRuns(confirm_cells) if confirm_cells else None
if confirmatory is not None:
    (out / 'confirmatory').mkdir(exist_ok=True)
    ev.RECORDS.write(confirmatory.items, out / 'confirmatory')
    write_table(confirmatory.bench_table(), out / 'confirmatory' / 'bench_scores',
                title='Confirmatory sample (S4): benchmark headline scores under the uniform '
                      f'protocol, mean of {p.runs} run(s)')
table3 = main_table({'A': bench_scores,
                     'B': confirmatory.bench_table() if confirmatory else pl.DataFrame()})
write_table(table3, out / 'paper_table3',
            title="CogRSI Table 3: score on each main benchmark and Main (their mean over "
                  "the `benchmarks` that ran), per model and system, mean over runs; A: main "
                  "test sample, B: confirmatory sample",
            why_empty='no main benchmark among `benchmarks`')
table3

# %% [markdown]
# Table 8 sets CogRSI's design variants side by side on the test samples, here replayed on the final design's own samples (each variant would draw the same samples): the vote alone, arbitration on reading conflicts only (the design frozen before close-split arbitration), and the final design; block A is the main test sample, block B the confirmatory one. The rejected candidates of App. C.3 (access gate, construct router, last-witnessed trace, extra voters, conflict-only gate) are not run.

# %%
table8 = readings.design_table({'A': result.items,
                                'B': confirmatory.items if confirmatory is not None else None})
write_table(table8, out / 'paper_table8',
            title="CogRSI Table 8: the reader's design variants replayed on the same samples "
                  'per benchmark (points; runs pooled): the vote alone, conflict arbitration '
                  'only, the final design; A: main test sample, B: confirmatory sample',
            why_empty='`cogrsi` is not among `systems`, or no multiple-choice benchmark ran')
table8

# %% [markdown]
# ## Development sample (Tables 7, 12 and 19)
#
# CogRSI's design was developed on held-out sample 1 (S2), never on the test samples. With `development`, each of `development_systems` answers the first `development` questions of each benchmark's S2 as the benchmarks stage drew it, every record in `development/records.parquet`. Table 19 gives their benchmark scores (mean over runs); Table 7 the reader without and with close-split arbitration on the same six samples per question, replayed from its records as above (`without`: the vote with the rule on reading conflicts; `with`: the reader's answer). Table 12 sets the evidential rule against each reading's majority and a neutral arbiter (`cogrsi_neutralarb`: the same samples, whose requests are the reader's, and an arbiter without the principle) on the reader's reading conflicts. PercepToM's filtered reading with the same arbitration, Table 12's other comparison, is not run. On the CPU default a few questions per benchmark near chance show the tables' shape, not the paper's result.

# %%
dev_sample = p.development_samples(find_repo_root())
dev_items = {k: v for k, v in dev_sample.items() if v}
print('development questions per benchmark (none: the benchmark has no held-out sample 1):',
      {k: len(v) for k, v in dev_sample.items()})
dev_cells = []
for cell in p.cells() if dev_items else []:
    chosen = cell_systems(p.development_systems, backends[cell.index], p.reader(cell.run),
                          p.principle)
    with timed(f"development sample: {models[cell.index]}, run {cell.run}"):
        dev_cells.append((models[cell.index], ev.evaluate(
            chosen, None, dev_items, batch_size=p.batch_size, run=cell.run)))
development = ev.ReaderRuns(dev_cells) if dev_cells else None
if development is not None:
    (out / 'development').mkdir(exist_ok=True)
    ev.RECORDS.write(development.items, out / 'development')
table19 = development.bench_table() if development is not None else pl.DataFrame()
write_table(table19, out / 'paper_table19',
            title='CogRSI Table 19: held-out sample 1 (S2, the development set), benchmark '
                  f'headline scores under the uniform protocol, mean of {p.runs} run(s)',
            why_empty='`development` is 0: no development sample was read')
table7 = (readings.close_split_table(readings.steps(development.items))
          if development is not None and 'cogrsi' in p.development_systems
          else pl.DataFrame())
write_table(table7, out / 'paper_table7',
            title='CogRSI Table 7: the reader without and with close-split arbitration on the '
                  'same six samples per question, held-out sample 1 (points; runs pooled)',
            why_empty='`development` is 0, or `cogrsi` is not among `development_systems`')
table12 = (readings.arbiter_table(development.items)
           if development is not None
           and {'cogrsi', 'cogrsi_neutralarb'} <= set(p.development_systems) else pl.DataFrame())
write_table(table12, out / 'paper_table12',
            title="CogRSI Table 12: on the reader's reading conflicts in held-out sample 1, how "
                  'many the evidential rule, each reading and a neutral arbiter get right',
            why_empty='`development` is 0, or `cogrsi` and `cogrsi_neutralarb` are not both '
                      'among `development_systems`')
table7

# %% [markdown]
# These scores follow the `uniform` protocol. How it deviates from each benchmark's release
# (prompt, option order, repetitions, aggregation) is listed below; they are comparable with
# published numbers only as far as this table allows.

# %%
deviations = deviations_table(list(bench_items)).filter(pl.col('protocol') == 'uniform')
write_table(deviations, out / 'bench_deviations',
            title='How the uniform protocol deviates from each release')
deviations.select('benchmark', 'aspect', 'here')

# %% [markdown]
# ### The same items under each benchmark's official protocol
#
# Zero-shot, as each release asks them: its prompt, its option order and repetitions (ToMBench:
# five shuffled tries), its rule and aggregation; with `structured`, each reply is held to the
# answer form the released prompt asks for. Benchmarks whose released prompt is not reproduced
# are skipped and listed. Every reply is in `official_views.parquet`. `best_constant` is the
# best constant reply's score on the same items: a score it reaches shows nothing.

# %%
if p.official:  # greedy, so once per model: a run would repeat it
    asked = [ask_official_all(bench_items, b, p.official_max_tokens, p.batch_size, p.structured)
             for b in backends]
    official_scores = matrix.by_model([(m, a[0]) for m, a in zip(models, asked, strict=True)])
    official_views = matrix.by_model([(m, a[1]) for m, a in zip(models, asked, strict=True)])
    no_prompt = asked[0][2]
    write_table(official_scores, out / 'official_scores',
                title="Zero-shot under each benchmark's official protocol")
    if official_views.height:
        official_views.write_parquet(out / 'official_views.parquet')
    print('no released prompt here:', no_prompt)
    official_deviations = deviations_table(list(official_scores['benchmark'])).filter(
        pl.col('protocol') == 'official')
    write_table(official_deviations, out / 'official_deviations',
                title='How the official protocol deviates from each release')
    official_scores

# %% [markdown]
# ## Pair validity
#
# Item accuracy and pair validity per model and system, overall, by form and by variant: the mean over the runs, run-to-run SD and range (every run's rows in `pair_validity_runs`).

# %%
validity = result.pair_validity_table()
write_table(validity, out / 'pair_validity',
            title=f'Pair validity by system: mean of {p.runs} run(s), run-to-run SD, range')
write_table(result.per_run(ev.ReaderEval.pair_validity_table), out / 'pair_validity_runs',
            title='Pair validity by system, per run')
validity.filter(validity['variant'] == 'all') if validity.height else validity

# %% [markdown]
# ## Calls and tokens
#
# Per model (its runs pooled) and question, overall and per source, with the token ratio against SC k=6. Wall time and throughput go to the stage's log (`.cache/logs/reader_eval.log`), since they vary from run to run.

# %%
cost = result.cost_table()
write_table(cost, out / 'cost', title='Calls and tokens per question')
cost.filter(cost['source'] == 'all')

# %%
# wall time and speed vary from run to run: logged (reports' files stay identical on a rerun)
phase('throughput: %s', result.throughput_table().to_dicts())

# %% [markdown]
# ## Cost and accuracy
#
# Score against tokens per question, one point per model, system and source (runs pooled: the figure's n counts every run's items).

# %%
write_table(result.cost_accuracy(), out / 'cost_accuracy')
show_chart(result.cost_accuracy_chart(), out / 'cost_accuracy')

# %% [markdown]
# ## Replies
#
# Every model call of the stage by prompt family: calls, parse rate against the family's declared format, share that hit the token cap and mean reply tokens.

# %%
replies = write_replies(tally, out / 'replies_by_family', p.max_failed_share)
# several models: each chance row labelled with its model (metrics.json keys it so)
chance_rows = (chance.with_columns(label=pl.col('model')) if len(models) > 1 else chance)
write_json({'backends': [spec.backend for spec in p.model_list()], 'models': models,
            'runs': p.runs, 'systems': p.systems + list(learned_systems),
            'learned': {name: [{'run': r.run, 'seed': r.seed} for r in runs]
                        for name, runs in learned_systems.items()},
            'confirmatory': {k: len(v) for k, v in confirm_items.items()},
            'questions': result.items.select('source', 'item_id').unique().height,
            'skipped_benchmarks': skipped, 'structured': p.structured,
            'chance': chance_rows.to_dicts(), 'replies': tally.to_dict(),
            'official_scores': official_scores.to_dicts() if p.official else [],
            'gold_perceivers': table27.with_columns(
                label=pl.col('model') if len(models) > 1 else pl.lit(None)).select(
                'label', 'source', 'system', 'perceivers', 'questions', 'all', 'gain').to_dicts()},
           out / 'summary.json')
replies
