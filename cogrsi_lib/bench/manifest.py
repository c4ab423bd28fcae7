"""Sample manifests: disjoint samples drawn by story with fixed seeds (CogRSI App. E.1-E.2).

"Samples are drawn by story with fixed seeds and are disjoint by construction": S0 holds the
smoke subsets (never reported), S1 the development data, S2 held-out sample 1 (CogRSI's
development set), S3 held-out sample 2 (the main test sample) and S4 held-out sample 3 (the
confirmatory sample).  The paper's seeds are 0 for smoke and held-out 1, 1 for held-out 2
and 3 for the confirmatory draw; each draw "excludes every unit of the earlier ones".

:func:`draw_samples` draws the splits in order from the units (``Item.story_id``: story,
conversation or ExploreToM structural group) not yet used: a permutation of the remaining
units (sorted, so the draw depends only on the seed and the data) is walked until the split
has at least its number of questions.  A manifest records, per split, the seed, the units
and the item ids, plus a fingerprint of the item ids it was drawn from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from cogrsi_lib.bench.schema import Item

__all__ = [
    "DEFAULT_SEEDS",
    "SPLIT_NAMES",
    "Manifest",
    "ManifestError",
    "SampleSpec",
    "check_disjoint",
    "draw_manifests",
    "draw_samples",
    "fingerprint",
    "manifest_frame",
    "read_manifest",
    "select",
    "specs_from_params",
    "write_manifest",
]

SPLIT_NAMES: dict[str, str] = {
    "S0": "smoke",
    "S1": "development",
    "S2": "held-out 1 (CogRSI development set)",
    "S3": "held-out 2 (main test sample)",
    "S4": "held-out 3 (confirmatory sample)",
}
#: CogRSI App. E.2: smoke and held-out 1: 0, held-out 2: 1, confirmatory: 3.  The paper gives
#: no seed for S1 (its development data is ExploreToM's own dev split); 2 is this project's.
DEFAULT_SEEDS: dict[str, int] = {"S0": 0, "S1": 2, "S2": 0, "S3": 1, "S4": 3}


class ManifestError(ValueError):
    """A manifest that cannot be drawn, read or applied; names the benchmark and split."""


@dataclass(frozen=True)
class SampleSpec:
    """One split to draw: at least ``n_questions`` questions, by whole units."""

    split: str
    n_questions: int
    seed: int

    def __post_init__(self) -> None:
        if self.split not in SPLIT_NAMES:
            raise ManifestError(f"unknown split {self.split!r} (splits: {', '.join(SPLIT_NAMES)})")
        if self.n_questions < 0:
            raise ManifestError(f"{self.split}: n_questions must be >= 0")


@dataclass(frozen=True)
class Manifest:
    """The drawn splits of one benchmark: split -> unit -> item ids."""

    benchmark: str
    unit: str
    fingerprint: str
    seeds: Mapping[str, int]
    members: Mapping[str, Mapping[str, tuple[str, ...]]]

    @property
    def units(self) -> dict[str, tuple[str, ...]]:
        """split -> its units (sorted)."""
        return {split: tuple(m) for split, m in self.members.items()}

    @property
    def items(self) -> dict[str, tuple[str, ...]]:
        """split -> its item ids, unit by unit."""
        return {split: tuple(i for ids in m.values() for i in ids)
                for split, m in self.members.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "unit": self.unit,
            "fingerprint": self.fingerprint,
            "splits": {
                split: {"name": SPLIT_NAMES[split], "seed": self.seeds[split],
                        "n_questions": sum(len(v) for v in members.values()),
                        "n_units": len(members),
                        "units": {u: list(ids) for u, ids in members.items()}}
                for split, members in self.members.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "manifest") -> Manifest:
        try:
            splits = data["splits"]
            return cls(
                benchmark=data["benchmark"], unit=data["unit"], fingerprint=data["fingerprint"],
                seeds={s: int(v["seed"]) for s, v in splits.items()},
                members={s: {u: tuple(ids) for u, ids in v["units"].items()}
                         for s, v in splits.items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ManifestError(f"{where}: not a manifest ({err!r})") from err


def fingerprint(items: Sequence[Item]) -> str:
    """sha256 (first 16 hex digits) of the sorted item ids a manifest is drawn from."""
    digest = hashlib.sha256("\n".join(sorted(it.id for it in items)).encode())
    return digest.hexdigest()[:16]


def draw_samples(
    items: Sequence[Item], specs: Sequence[SampleSpec], benchmark: str | None = None,
    unit: str = "story",
) -> Manifest:
    """Draw ``specs`` in order, each from the units the earlier ones left (disjoint)."""
    name = benchmark or (items[0].benchmark if items else "?")
    by_unit: dict[str, list[str]] = {}
    for it in items:
        by_unit.setdefault(it.story_id, []).append(it.id)
    remaining = sorted(by_unit)
    seeds: dict[str, int] = {}
    members: dict[str, dict[str, tuple[str, ...]]] = {}
    for spec in specs:
        if spec.split in members:
            raise ManifestError(f"{name}: split {spec.split} given twice")
        order = np.random.default_rng(spec.seed).permutation(len(remaining))
        picked: list[str] = []
        total = 0
        for k in order:
            if total >= spec.n_questions:
                break
            picked.append(remaining[k])
            total += len(by_unit[remaining[k]])
        if total < spec.n_questions:
            raise ManifestError(f"{name}: split {spec.split} needs {spec.n_questions} questions "
                                f"but only {total} remain in {len(remaining)} units")
        taken = set(picked)
        remaining = [u for u in remaining if u not in taken]
        seeds[spec.split] = spec.seed
        members[spec.split] = {u: tuple(sorted(by_unit[u])) for u in sorted(picked)}
    manifest = Manifest(name, unit, fingerprint(items), seeds, members)
    check_disjoint(manifest)
    return manifest


def check_disjoint(manifest: Manifest) -> None:
    """Raise :class:`ManifestError` if a unit or an item is in two splits."""
    for kind, table in (("unit", manifest.units), ("item", manifest.items)):
        owner: dict[str, str] = {}
        for split, ids in table.items():
            for i in ids:
                if i in owner:
                    raise ManifestError(f"{manifest.benchmark}: {kind} {i!r} is in both "
                                        f"{owner[i]} and {split}")
                owner[i] = split


def specs_from_params(sizes: Mapping[str, int], seeds: Mapping[str, int] | None = None
                      ) -> list[SampleSpec]:
    """Specs in split order from ``{split: n_questions}`` (seeds default to the paper's)."""
    seeds = {**DEFAULT_SEEDS, **(seeds or {})}
    return [SampleSpec(split, int(sizes[split]), int(seeds[split]))
            for split in SPLIT_NAMES if split in sizes]


def draw_manifests(
    loaded: Mapping[str, Sequence[Item]],
    sizes: Mapping[str, int],
    sizes_by_benchmark: Mapping[str, Mapping[str, int]] | None = None,
    seeds: Mapping[str, int] | None = None,
) -> list[Manifest]:
    """A manifest per loaded benchmark: ``sizes`` (split -> questions), overridden per
    benchmark by ``sizes_by_benchmark[name]``; a split of size 0 is recorded empty."""
    from cogrsi_lib.bench.registry import get

    out = []
    for name, items in loaded.items():
        merged = {**sizes, **(sizes_by_benchmark or {}).get(name, {})}
        out.append(draw_samples(items, specs_from_params(merged, seeds), name, get(name).unit))
    return out


def write_manifest(manifest: Manifest, path: str | Path) -> Path:
    """Write the manifest as JSON (sorted keys, trailing newline)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest.to_json(), indent=1, sort_keys=True) + "\n",
                    encoding="utf-8")
    return path


def read_manifest(path: str | Path) -> Manifest:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ManifestError(f"{path}: not JSON ({err})") from err
    manifest = Manifest.from_json(data, where=str(path))
    check_disjoint(manifest)
    return manifest


def select(items: Sequence[Item], manifest: Manifest, split: str) -> list[Item]:
    """The items of ``split``, in manifest order; every listed id must be present."""
    if split not in manifest.items:
        raise ManifestError(f"{manifest.benchmark}: manifest has no split {split}")
    by_id = {it.id: it for it in items}
    missing = [i for i in manifest.items[split] if i not in by_id]
    if missing:
        raise ManifestError(f"{manifest.benchmark} {split}: {len(missing)} manifest ids not in "
                            f"the loaded items (first: {missing[0]!r}); was it drawn from other "
                            f"data? (fingerprint {manifest.fingerprint})")
    return [by_id[i] for i in manifest.items[split]]


#: the samples the papers' tables are scored on (App. E.2): held-out sample 1, CogRSI's
#: development set (Tables 7, 19), held-out sample 2, the main test sample (Table 3A), and
#: held-out sample 3, the confirmatory one (Table 3B)
DEVELOPMENT_SET, MAIN_TEST, CONFIRMATORY = "S2", "S3", "S4"


def sample_items(names: Sequence[str], manifest_dir: str | Path, split: str,
                 n: int | None = None) -> dict[str, list[Item]]:
    """Per benchmark of ``names``, the first ``n`` (all: None) items of sample ``split`` as the
    benchmarks stage drew it (``<manifest_dir>/<name>.json``). A benchmark without its data or
    its manifest stops with one line: a table that silently lacked it would mislead."""
    from cogrsi_lib import bench

    out: dict[str, list[Item]] = {}
    for name in names:
        if not bench.available(name):
            raise ManifestError(f"benchmark {name!r} has no data under {bench.data_root()}: "
                                f"`dvc pull data.dvc`, or `cogrsi bench fetch {name}` where "
                                "there is internet, or leave it out of `benchmarks`")
        path = Path(manifest_dir) / f"{name}.json"
        if not path.is_file():
            raise FileNotFoundError(f"no manifest {path}: run the benchmarks stage first "
                                    "(`dvc repro benchmarks`), or draw one with "
                                    "`cogrsi bench manifest`")
        out[name] = select(bench.load(name), read_manifest(path), split)[:n]
    return out


def manifest_frame(manifests: Sequence[Manifest]) -> pl.DataFrame:
    """Long table: benchmark, split, story_id (the unit), item_id."""
    rows = [(m.benchmark, split, unit_id, item_id)
            for m in manifests for split, members in m.members.items()
            for unit_id, ids in members.items() for item_id in ids]
    return pl.DataFrame(rows, schema=["benchmark", "split", "story_id", "item_id"], orient="row")
