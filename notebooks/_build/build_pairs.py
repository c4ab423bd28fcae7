"""Build notebooks/pairs.ipynb (outputs empty; run it with `cogrsi stage pairs`)."""

from pathlib import Path

from cogrsi_lib.pipeline import write_notebook

PARAMS = """\
# Small defaults for CI (nbval): 2 pairs per variant; `dvc repro` passes params.yaml[pairs].
gate_seed = 11
eval_seed = 23
n_gate_narrative = 16
n_gate_dialogue = 12
n_eval_narrative = 16
n_eval_dialogue = 12
out_dir = None
"""

CELLS = [
    ("markdown", "# Counterfactual pairs\n\n"
     "Flip and same pairs, narrative and dialogue, in a gate split and an evaluation split "
     "drawn with different seeds from disjoint lexicons (CogRSI §3, App. C "
     "\"Counterfactual pairs\"). Each pair is two oracle worlds that differ in one access fact "
     "of the target; gold answers come from the oracle. A pair counts only if both versions "
     "are right. Variants: `cogrsi_lib/pairs/variants.py`."),
    ("code", "from cogrsi_lib import pairs\n"
     "from cogrsi_lib.pipeline import resolve_out_dir\n"
     "from cogrsi_lib.reports import save_chart, write_table"),
    ("code", "out = resolve_out_dir(out_dir, 'pairs')\n"
     "splits = pairs.build_splits(\n"
     "    gate_seed=gate_seed, eval_seed=eval_seed,\n"
     "    n_gate_narrative=n_gate_narrative, n_gate_dialogue=n_gate_dialogue,\n"
     "    n_eval_narrative=n_eval_narrative, n_eval_dialogue=n_eval_dialogue,\n"
     ")\n"
     "paths = pairs.write_splits(splits, out)\n"
     "{split: df.height for split, df in splits.items()}"),
    ("markdown", "## Counts\n\nPairs by split, form, variant and kind."),
    ("code", "counts = pairs.counts_table(splits)\n"
     "write_table(counts, out / 'counts', title='Pairs by split, form, variant and kind')\n"
     "counts"),
    ("markdown", "## Oracle sanity\n\n"
     "Pair validity of the oracle replayed from the stored worlds (must be 1.0) and of "
     "answerers that ignore access: `reality` (where the object is), `initial` (where it "
     "started) and `in_room` (\"a character in the room knows what happens\", CogRSI §1). "
     "Both versions of a pair share reality and the start, so these shortcuts give one answer "
     "to both and never make a flip pair valid; `in_room` also fails `watch/asleep` (§5.4)."),
    ("code", "sanity = pairs.sanity_table(splits)\n"
     "pairs.check_oracle(sanity)\n"
     "write_table(sanity, out / 'oracle_sanity',\n"
     "            title='Pair validity of the oracle and of shortcut answerers')\n"
     "sanity"),
    ("code", "long = pairs.sanity_long(splits)\n"
     "write_table(long, out / 'oracle_sanity_long')\n"
     "# saved, not displayed: an inline chart embeds a random element id in the notebook\n"
     "[p.name for p in save_chart(pairs.sanity_chart(long, split='eval'), out / 'oracle_sanity')]"),
    ("markdown", "## Examples\n\nThe first pair of each variant in each split, both versions."),
    ("code", "examples = pairs.examples(splits)\n"
     "write_table(examples, out / 'examples', title='One pair per variant and split')\n"
     "examples.head(4)"),
]


def build(path: Path) -> None:
    write_notebook(path, [CELLS[0], ("parameters", PARAMS), *CELLS[1:]])


if __name__ == "__main__":
    build(Path(__file__).resolve().parents[1] / "pairs.ipynb")
