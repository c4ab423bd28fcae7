"""The harness's shared vocabulary: asked mental variables, skill families, SAGE dimensions,
and the annotation of an item (zing-social-mind-report §5.3.1, §5.3.3, §5.5.2).

Every harness module speaks in these terms:

- a *family* is one layer of the skill library (L0-L7), the unit of the router's family hit;
- a *dimension* is one of SAGE's seven experience-memory buckets;
- an *annotation* is what an item is about, read off the item's own labels (ToMBench's
  ability, Hi-ToM's order, the oracle's depth and kind), never off a model's output. The
  router never sees it; it is the gold that family-hit and strict-hit are scored against
  (a skill's ``covers`` lists the annotation tags it is an acceptable choice for).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cogrsi_lib.reader.items import ReaderItem

#: skill-library layers (ours; the report's Figure 20 is not in our copy): family -> summary
FAMILIES: dict[str, str] = {
    "perception": "L0 who saw, heard or attended to what",
    "knowledge": "L1 what a character knows from access, pretence or being told",
    "belief": "L2 first-order, higher-order and content-versus-label beliefs",
    "desire": "L3 what a character wants, and how wants drive action and feeling",
    "emotion": "L4 typical, atypical, hidden, mixed and moral emotions",
    "intention": "L5 why a character acts and what they will do next",
    "non_literal": "L6 irony, lies, hints, humour and implicature",
    "norms": "L7 social norms, faux pas and what is appropriate to say",
}

#: SAGE's social-mental dimensions (§5.5.2: six plus Others)
DIMENSIONS: tuple[str, ...] = (
    "Emotion", "Desire", "Intention", "Knowledge", "Belief", "Non-Literal Communication",
    "Others",
)  # fmt: skip

#: the family each dimension's questions usually belong to (for fallbacks)
DIMENSION_FAMILY: dict[str, str] = {
    "Emotion": "emotion", "Desire": "desire", "Intention": "intention",
    "Knowledge": "knowledge", "Belief": "belief", "Non-Literal Communication": "non_literal",
    "Others": "norms",
}  # fmt: skip

# ToMBench ability prefix -> (family, dimension); the subtask refines below.
_TOMBENCH_PREFIX: dict[str, tuple[str, str]] = {
    "belief": ("belief", "Belief"),
    "knowledge": ("knowledge", "Knowledge"),
    "desire": ("desire", "Desire"),
    "emotion": ("emotion", "Emotion"),
    "intention": ("intention", "Intention"),
    "non-literal communication": ("non_literal", "Non-Literal Communication"),
}
_TOMBENCH_SUBTASK_FAMILY: dict[str, str] = {
    "percepts-knowledge links": "perception",
    "knowledge-attention links": "perception",
    "faux pas": "norms",
}


@dataclass(frozen=True)
class Annotation:
    """What an item asks about: its family, its SAGE dimension and a fine-grained tag."""

    family: str
    dimension: str
    tag: str

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}")
        if self.dimension not in DIMENSIONS:
            raise ValueError(f"unknown dimension {self.dimension!r}")


def tombench_annotation(ability: str) -> Annotation:
    """ToMBench's ability label (e.g. ``Belief: Location false beliefs``) as an annotation.
    Two-label abilities ("... Belief: Second-order beliefs") take the last label."""
    labels = [s.strip() for s in ability.replace(" Belief:", "\nBelief:").splitlines()]
    label = labels[-1]
    prefix, _, subtask = label.partition(":")
    key = prefix.strip().lower()
    if key not in _TOMBENCH_PREFIX:
        raise ValueError(f"unknown ToMBench ability {ability!r}")
    family, dimension = _TOMBENCH_PREFIX[key]
    sub = subtask.strip().lower()
    family = _TOMBENCH_SUBTASK_FAMILY.get(sub, family)
    slug = re.sub(r"[^a-z0-9]+", "-", sub).strip("-")
    return Annotation(family, dimension, f"tombench/{slug}")


def annotate(item: ReaderItem) -> Annotation | None:
    """The item's annotation from its own labels, or None when it carries none.

    - ToMBench: its ability (``meta["question_type"]``);
    - Hi-ToM: ``order_k`` -> ``hi-tom/order-k`` (order 0 asks about reality: perception);
    - oracle items (``meta["source"] == "oracle"``): ``oracle/<kind>/depth-<d>``.
    """
    meta = item.meta
    bench = str(meta.get("benchmark", "")).lower()
    qtype = str(meta.get("question_type", ""))
    if bench == "tombench" and qtype:
        return tombench_annotation(qtype)
    if bench == "hi-tom" and qtype.startswith("order_"):
        order = int(qtype.split("_", 1)[1])
        family = "perception" if order == 0 else "belief"
        return Annotation(family, "Belief" if order else "Knowledge", f"hi-tom/order-{order}")
    if meta.get("source") == "oracle" and "depth" in meta:
        depth = int(meta["depth"])
        kind = str(meta.get("kind", "location"))
        return Annotation("belief", "Belief", f"oracle/{kind}/depth-{depth}")
    return None
