"""Statistics: paired cluster bootstraps, seed/scenario bootstraps, Holm (CogRSI §3, E.3),
accuracy against chance, Wilson intervals, power."""

from cogrsi_lib.stats.bootstrap import (
    DEFAULT_RESAMPLES,
    BootstrapResult,
    align_paired,
    cluster_bootstrap,
    construct_effects,
    paired_bootstrap,
    resample_counts,
    seed_scenario_bootstrap,
)
from cogrsi_lib.stats.chance import against_chance, chance_table
from cogrsi_lib.stats.interval import wilson, wilson_bounds
from cogrsi_lib.stats.multiple import benjamini_hochberg, holm
from cogrsi_lib.stats.power import (
    MIN_N,
    minimum_detectable_effect,
    underpowered,
    why_underpowered,
    with_power,
)

__all__ = [
    "benjamini_hochberg",
    "MIN_N",
    "minimum_detectable_effect",
    "underpowered",
    "why_underpowered",
    "wilson",
    "wilson_bounds",
    "with_power",
    "DEFAULT_RESAMPLES",
    "BootstrapResult",
    "against_chance",
    "align_paired",
    "chance_table",
    "cluster_bootstrap",
    "construct_effects",
    "holm",
    "paired_bootstrap",
    "resample_counts",
    "seed_scenario_bootstrap",
]
