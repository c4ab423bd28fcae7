"""Build notebooks/nested.ipynb (outputs empty; run it with `cogrsi stage nested`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval); `dvc repro` passes params.yaml[nested].
n_per_cell = 10
n_agents = 4
n_containers = 4
min_events = 8
max_events = 16
seed = 5
testimony = "latest"  # or "fresher_access" (oracle SEMANTICS.md, "Testimony")
opening = "common_ground"  # or "unknown" (SEMANTICS.md, "Opening")
out_dir = None
"""

CELLS = [
    ("markdown", "# Nested-belief benchmark (R0-R4)\n\n"
     "Location questions about belief chains of depth 0-4 from oracle worlds "
     "(recursive-reasoning plan §4 Suite A). For each depth R1-R4 an *adversarial* partition "
     "(the answer differs from reality **and** from every shallower prefix's answer, §5.6) and "
     "a *true-belief* partition (answer = reality), `n_per_cell` items each; R0 asks about "
     "reality. The shortcut heuristics of §1.4 / §7 are scored per depth (Gate A, §16), and "
     "the oracle itself must score 100%."),
    ("code", "from IPython.display import SVG\n\n"
     "from cogrsi_lib.nested import (\n"
     "    ADVERSARIAL, NestedConfig, baseline_curves, baseline_table, baseline_wide, depth_chart,\n"
     "    edit_table, generate, generation_table, integrity_table, item_table, oracle_replies,\n"
     "    require, score, strata_table, whisper_table, write_items_jsonl,\n"
     ")\n"
     "from cogrsi_lib.pipeline import resolve_out_dir\n"
     "from cogrsi_lib.reports import save_chart, write_json, write_table"),
    ("code", "out = resolve_out_dir(out_dir, 'nested')\n"
     "cfg = NestedConfig(n_per_cell=n_per_cell, n_agents=n_agents, n_containers=n_containers,\n"
     "                   min_events=min_events, max_events=max_events, seed=seed,\n"
     "                   testimony=testimony, opening=opening)\n"
     "gen = generate(cfg)\n"
     "items = gen.items\n"
     "print(f'{len(items)} items from {gen.worlds_sampled} sampled worlds '\n"
     "      f'({gen.worlds_used} gave items)')"),
    ("markdown", "## Items\n\n`items.jsonl`: one item JSON per line (story, question, options, "
     "gold, access facts, strata, structured world). `items.parquet`: the same, flat. "
     "A model replies `{\"answer\": ..., \"confidence\": ...}`."),
    ("code", "item_table(items).write_parquet(out / 'items.parquet')\n"
     "write_items_jsonl(items, out / 'items.jsonl')\n"
     "cells = generation_table(gen)\n"
     "write_table(cells, out / 'cells', title='Items per cell and worlds sampled to fill it')\n"
     "cells"),
    ("code", "strata = strata_table(items)\n"
     "write_table(strata, out / 'strata', title='Items by depth, partition and source of the "
     "answer, with the share of each phenomenon')\n"
     "strata"),
    ("markdown", "## Lie conditions and whispers (oracle semantics v2)\n\n"
     "Worlds with a lie are told as an unlabelled lie, a known liar or a revealed lie "
     "(plan §5.4), scored separately below. A whisper now reaches every chain over its two "
     "agents: the deep adversarial items whose answer a whisper fixed, and those a later "
     "whisper over the chain's agents should have overwritten (v1's incoherent items), "
     "beside v1's recorded counts (`cogrsi_lib/nested/whispers.py`)."),
    ("code", "lies = item_table(items).group_by('lie_condition', 'depth', 'partition').len()"
     ".sort('lie_condition', 'depth', 'partition')\n"
     "write_table(lies, out / 'lie_conditions', title='Items per lie condition, depth and "
     "partition')\n"
     "whispers = whisper_table(items)\n"
     "write_table(whispers, out / 'whisper_depth', title='Adversarial R3/R4 items decided by a "
     "whisper, and items a later whisper should have changed: semantics v1 (recorded) and v2')\n"
     "whispers"),
    ("markdown", "## Shortcut baselines\n\nAccuracy of each heuristic per depth. Empty cells: "
     "the heuristic is the task itself there (first-order at R1, reality at R0). "
     "`exclusion` (first option no shallower question gives) is reported but is not a "
     "non-recursive shortcut, so it is left out of recursive lift and of Gate A."),
    ("code", "baselines = baseline_table(items)\n"
     "write_table(baselines, out / 'heuristic_baselines', title='Shortcut heuristics: accuracy "
     "by subset and depth')\n"
     "adversarial = baseline_wide(baselines, ADVERSARIAL)\n"
     "write_table(adversarial, out / 'heuristic_baselines_adversarial', title='Shortcut "
     "heuristics on the adversarial partition (accuracy by depth)')\n"
     "adversarial"),
    ("code", "overall = baseline_wide(baselines, 'all')\n"
     "write_table(overall, out / 'heuristic_baselines_all', title='Shortcut heuristics on all "
     "items (accuracy by depth)')\n"
     "overall"),
    ("markdown", "## Depth curve\n\nAccuracy against depth for the oracle and every heuristic; "
     "dashed: chance (1 / containers)."),
    ("code", "curves = baseline_curves(items)\n"
     "write_table(curves, out / 'depth_curve', title='Accuracy by depth per predictor')\n"
     "svg, _ = save_chart(depth_chart(curves, chance=1 / n_containers), out / 'depth_curve')\n"
     "SVG(filename=svg)"),
    ("code", "oracle_score = score(items, oracle_replies(items), baselines=baselines)\n"
     "write_json(oracle_score.summary(), out / 'oracle_score.json')\n"
     "write_table(oracle_score.by_depth, out / 'oracle_by_depth', title='Oracle scorecard by "
     "depth')\n"
     "write_table(oracle_score.by_lie_condition, out / 'oracle_by_lie_condition', "
     "title='Oracle accuracy by lie condition')\n"
     "oracle_score.by_depth"),
    ("markdown", "## Gate A (plan §16) and the deepest-level edit (§5.7)\n\n"
     "Every adversarial item should admit an edit of the event behind its answer that "
     "changes R_k and leaves reality and every shallower answer as they were."),
    ("code", "edits = edit_table(items)\n"
     "write_table(edits, out / 'deepest_edits', title='Adversarial items with a "
     "deepest-level edit')\n"
     "edits"),
    ("code", "gate = integrity_table(gen, baselines, curves)\n"
     "write_table(gate, out / 'integrity', title='Gate A: benchmark integrity')\n"
     "require(gate)\n"
     "gate"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "nested.ipynb")
