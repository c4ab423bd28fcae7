"""Counterfactual pairs: flip and same variants, narrative and dialogue (CogRSI §3, App. C).

Each pair is two oracle worlds that differ in one access fact of a target character,
with the oracle's gold answer to "where does the target think the object is?" for each.
The gate split (96 pairs) and the evaluation split (320) come from disjoint lexicons and
different seeds; a pair counts only if both its versions are answered right.
"""

from cogrsi_lib.pairs.baselines import (
    ANSWERERS,
    check_oracle,
    predictions,
    sanity_chart,
    sanity_long,
    sanity_table,
)
from cogrsi_lib.pairs.generate import (
    Pair,
    PairGenerationError,
    Version,
    allocate,
    generate_form,
    generate_split,
    make_pair,
)
from cogrsi_lib.pairs.lexicon import EVAL, GATE, LEXICONS, Lexicon, lexicon
from cogrsi_lib.pairs.records import (
    SCHEMA,
    build_splits,
    counts_table,
    examples,
    read_split,
    to_frame,
    write_splits,
)
from cogrsi_lib.pairs.validity import PairValidity, normalize_answer, pair_validity
from cogrsi_lib.pairs.variants import (
    DIALOGUE_VARIANTS,
    NARRATIVE_VARIANTS,
    VARIANTS,
    AccessFacts,
    Variant,
    access_facts,
    variant,
)

__all__ = [
    "ANSWERERS", "DIALOGUE_VARIANTS", "EVAL", "GATE", "LEXICONS", "NARRATIVE_VARIANTS",
    "SCHEMA", "VARIANTS", "AccessFacts", "Lexicon", "Pair", "PairGenerationError",
    "PairValidity", "Variant", "Version", "access_facts", "allocate", "build_splits",
    "check_oracle", "counts_table", "examples", "generate_form", "generate_split", "lexicon",
    "make_pair", "normalize_answer", "pair_validity", "predictions", "read_split",
    "sanity_chart", "sanity_long", "sanity_table", "to_frame", "variant", "write_splits",
]
