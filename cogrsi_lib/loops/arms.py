"""The loop arms of CogRSI Table 1 as configurations of one engine (§4.2, §5.2-5.3, App. C.2).

An arm fixes what is evolved (a rule library or one principle), the registration rule, its
gates and whether counterfactual pairs are shown to the builder as failures:

==================  ==========  =========  ===========  ==============  ===============
arm                 artifact    margin     cohort rule  gates           pairs as data
==================  ==========  =========  ===========  ==============  ===============
accuracy_loop       principle   1 point    off          none            no
accuracy_library    library     delta      2 of 3       none            no
gated_library       library     delta      2 of 3       counterfactual  no
pairs_as_data       library     delta      2 of 3       none            yes
single_principle    principle   delta      2 of 3       counterfactual  no
audit_library       library     delta      2 of 3       cf. + audit     no
==================  ==========  =========  ===========  ==============  ===============

``gated_library`` is CogRSI's library; ``audit_library`` is the audit-in-registration arm
(§6), a configuration like the others. GEPA is run apart (:mod:`cogrsi_lib.loops.gepa_arm`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from cogrsi_lib.loops.registration import RegistrationRule

GATES = ("counterfactual", "audit")


@dataclass(frozen=True)
class ArmConfig:
    name: str
    artifact: str = "library"  # "library" | "principle"
    rule: RegistrationRule = RegistrationRule()
    gates: tuple[str, ...] = ()
    pairs_as_data: bool = False

    def __post_init__(self) -> None:
        if self.artifact not in ("library", "principle"):
            raise ValueError(f"{self.name}: artifact must be library or principle")
        bad = [g for g in self.gates if g not in GATES]
        if bad:
            raise ValueError(f"{self.name}: unknown gate(s) {bad} (known: {GATES})")

    def describe(self) -> str:
        """The registration column of Table 1, e.g. "library: 3-pt, >=0 on 2 cohorts,
        counterfactual gate"."""
        parts = [f"{self.rule.delta:g}-pt"]
        if self.rule.min_nonneg:
            parts.append(f">=0 on {self.rule.min_nonneg} cohorts")
        parts += [f"{g} gate" for g in self.gates]
        if self.pairs_as_data:
            parts.append("pairs as data")
        return f"{self.artifact}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "artifact": self.artifact, "delta": self.rule.delta,
                "min_nonneg": self.rule.min_nonneg, "gates": list(self.gates),
                "pairs_as_data": self.pairs_as_data}


def builtin_arms(delta: float = 3.0, min_nonneg: int = 2,
                 loose_delta: float = 1.0) -> dict[str, ArmConfig]:
    """The arms of the table above for a given margin and cohort rule."""
    strict = RegistrationRule(delta, min_nonneg)
    return {
        "accuracy_loop": ArmConfig("accuracy_loop", "principle", RegistrationRule(loose_delta, 0)),
        "accuracy_library": ArmConfig("accuracy_library", "library", strict),
        "gated_library": ArmConfig("gated_library", "library", strict, ("counterfactual",)),
        "pairs_as_data": ArmConfig("pairs_as_data", "library", strict, (), True),
        "single_principle": ArmConfig("single_principle", "principle", strict,
                                      ("counterfactual",)),
        "audit_library": ArmConfig("audit_library", "library", strict,
                                   ("counterfactual", "audit")),
    }


def arm_from_spec(spec: str | Mapping[str, Any], delta: float = 3.0, min_nonneg: int = 2,
                  loose_delta: float = 1.0) -> ArmConfig:
    """A built-in arm by name, or a mapping: ``{name, base?, artifact?, delta?, min_nonneg?,
    gates?, pairs_as_data?}`` (``base`` names a built-in arm to start from)."""
    arms = builtin_arms(delta, min_nonneg, loose_delta)
    if isinstance(spec, str):
        if spec not in arms:
            raise ValueError(f"unknown arm {spec!r} (built-in: {', '.join(arms)})")
        return arms[spec]
    spec = dict(spec)
    known = {f.name for f in fields(ArmConfig)} | {"base", "delta", "min_nonneg"}
    unknown = set(spec) - known
    if unknown:
        raise ValueError(f"unknown arm settings {sorted(unknown)}")
    if "name" not in spec:
        raise ValueError("an arm mapping needs a name")
    base = arms[spec["base"]] if "base" in spec else ArmConfig(spec["name"])
    rule = RegistrationRule(float(spec.get("delta", base.rule.delta)),
                            int(spec.get("min_nonneg", base.rule.min_nonneg)))
    return replace(base, name=spec["name"], artifact=spec.get("artifact", base.artifact),
                   rule=rule, gates=tuple(spec.get("gates", base.gates)),
                   pairs_as_data=bool(spec.get("pairs_as_data", base.pairs_as_data)))
