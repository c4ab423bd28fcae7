"""Build notebooks/pddl_mind.ipynb (outputs empty; run it with `cogrsi stage pddl_mind`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

INTRO = """\
# PDDL-Mind: verified state tracking and the diagnostic ladder

A predefined PDDL domain (`cogrsi_lib/pddl/domain.pddl`), three LLM calls per example
(problem file, candidate actions, answer) and a deterministic executor that checks every
candidate action's preconditions in between (PDDL-Mind §3). The ladder runs the full method
and two ablations, *no verification* (the answer sees parsed actions, no executed states) and
*no domain* (the model writes its own domain first), on oracle stories with gold traces and
on the benchmark samples that are present (FANToM, MMToM-QA and MuMA-ToM text; §4). Wrong
answers are classified as parsing/state errors or reasoning errors given a correct trace.

With the default `backend = "scripted"` no model runs: a scripted stand-in
(`cogrsi_lib/pddl/scripted.py`) writes gold or deliberately damaged PDDL and answers by a
sight-only rule, so the numbers below only exercise the pipeline. `params.yaml[pddl_mind]`
selects a real model (`backend: embedded`)."""

PARAMS = """\
# Small defaults for CI (nbval): the scripted backend, a few oracle stories;
# `dvc repro` passes params.yaml[pddl_mind].
backend = "scripted"  # scripted (no model) | embedded | vllm | openai
llm = {}  # cogrsi_lib.llm.build_backend settings for a real backend (cache_dir, model, ...)
script = {}  # knobs of the scripted backend: p_malformed, p_drop, p_bad_domain, seed
n_stories = 6
questions_per_story = 2
max_depth = 2
min_agents = 2
max_agents = 3
min_events = 3
max_events = 8
seed = 0
n_cross_check = 40
benchmarks = ["fantom", "mmtom-qa", "muma-tom"]
n_per_benchmark = 4
variants = ["no_verification", "no_domain", "full"]
parse_max_tokens = 768
domain_max_tokens = 1536
answer_max_tokens = 256
structured = True  # enforce each reply's declared format while decoding
out_dir = None"""

CELLS = [
    ("markdown", INTRO),
    ("parameters", PARAMS),
    ("code", """\
from cogrsi_lib import pddl
from cogrsi_lib.llm import start_tally
from cogrsi_lib.oracle.sampler import SamplerConfig, sample_worlds
from cogrsi_lib.pddl import report
from cogrsi_lib.pipeline import find_repo_root, resolve_out_dir
from cogrsi_lib.reports import save_chart, write_json, write_replies, write_table
from cogrsi_lib.stats import chance_table

out = resolve_out_dir(out_dir, "pddl_mind")
tally = start_tally()  # every model call of this stage, by prompt family
# no secret observers or unnoticed misses: the predefined domain has no action for them
cfg = SamplerConfig(min_agents=min_agents, max_agents=max_agents, min_events=min_events,
                    max_events=max_events, p_hidden_observer=0.0, p_missed=0.0)"""),
    ("markdown", """\
## Cross-check with the oracle

The gold actions of oracle worlds, executed in the predefined domain, must reproduce the
oracle's state after every event: world state, each agent's latest sight and noticed values,
and who heard which whisper (PDDL-Mind §5.1; `cogrsi_lib/pddl/oracle_map.py`)."""),
    ("code", """\
check = report.cross_check_table(list(sample_worlds(n_cross_check, seed + 1, cfg)))
write_table(check, out / 'cross_check',
            title='Oracle worlds: mismatches of the executed gold actions')
assert check['mismatches'].sum() == 0, check.filter(check['mismatches'] > 0)
{'worlds': check.height, 'events': int(check['events'].sum()),
 'mismatches': int(check['mismatches'].sum())}"""),
    ("markdown", "## Examples\n\nOracle stories (gold answers and traces from the oracle) "
     "and the benchmark samples that are present."),
    ("code", """\
examples = pddl.oracle_examples(n_stories, seed, questions_per_story, max_depth, cfg)
samples = pddl.benchmark_examples(benchmarks, n_per_benchmark)
examples += [e for s in samples for e in s.examples]
availability = report.availability_table(samples)
write_table(availability, out / 'benchmarks', title='Benchmark samples')
availability"""),
    ("code", """\
print(examples[0].story)
print(examples[0].question, examples[0].options, '->', examples[0].gold)
gold = examples[0].gold_pddl
trace = pddl.execute(gold.task(), gold.actions)
(out / 'example_gold_trace.txt').write_text(pddl.trace_text(trace) + '\\n')
print(pddl.trace_text(trace))"""),
    ("markdown", "## The ladder\n\nThree calls per example and variant; every record keeps "
     "the replies, parse outcomes, rejected actions, trace comparison, calls and tokens."),
    ("code", """\
backend = pddl.make_backend(backend, examples, llm=llm, script=script, base_dir=find_repo_root())
ladder = pddl.LadderConfig(variants=tuple(variants), parse_max_tokens=parse_max_tokens,
                           domain_max_tokens=domain_max_tokens,
                           answer_max_tokens=answer_max_tokens, seed=seed,
                           structured=structured)
records = pddl.run_ladder(backend, examples, ladder)
records.write_parquet(out / 'records.parquet')
records.height"""),
    ("code", """\
table = report.ladder_table(records)
write_table(table, out / 'ladder', title='PDDL-Mind ladder (Table 1): accuracy, parsing, '
            'verification, calls and tokens per example')
# saved, not displayed: an inline chart embeds a random element id in the notebook
[p.name for p in save_chart(report.ladder_chart(table), out / 'ladder')]"""),
    ("code", "table.select('source', 'variant', 'n', 'accuracy', 'trace_correct',\n"
     "             'calls_per_example', 'prompt_tokens', 'completion_tokens')"),
    ("markdown", "## Per question category (Table 2)"),
    ("code", """\
categories = report.category_table(records)
write_table(categories, out / 'categories', title='Accuracy per question category and variant')
categories"""),
    ("markdown", """\
## Failure classification

Wrong answers: `parsing/state` (a reply did not parse, or the executed trace differs from
the gold trace), `reasoning` (correct trace, wrong answer), `answer format` (no parsable
answer), `unverified` (benchmark items: no gold trace and nothing flagged)."""),
    ("code", """\
failures = report.failure_table(records)
write_table(failures, out / 'failures', title='Wrong answers by failure class')
failures"""),
    ("markdown", """\
## Against chance

Accuracy on the multiple-choice questions of each source and variant against guessing (mean
of 1/options), with a 95% interval over stories; `best_constant` is what always giving the
commonest gold label scores (a model stuck on one position reaches it without reading). The
embedded CPU model is expected near chance.
"""),
    ("code", """\
chance = chance_table(records, ['source', 'variant'])
write_table(chance, out / 'chance', title='Accuracy against chance')
chance"""),
    ("markdown", """\
## Replies

Every model call of the stage by prompt family: calls, parse rate against the family's
declared format (`cogrsi_lib/pddl/prompts.py`), share that hit the token cap and mean reply
tokens."""),
    ("code", """\
replies = write_replies(tally, out / 'replies_by_family')
write_json({'model': backend.identity, 'examples': len(examples), 'records': records.height,
            'variants': list(variants), 'structured': structured,
            'chance': chance.to_dicts(), 'replies': tally.to_dict()}, out / 'summary.json')
replies"""),
]


def build(path: Path) -> None:
    write_notebook(path, CELLS)


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "pddl_mind.ipynb")
