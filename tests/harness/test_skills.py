"""PRISM's skill library: loading, strict validation, lookups and coverage of real tags."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from cogrsi_lib import bench
from cogrsi_lib.harness.skills import (
    ASKED_VARIABLES,
    DEFAULT_PATH,
    SkillLibraryError,
    load_library,
)
from cogrsi_lib.harness.taxonomy import FAMILIES, annotate
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.oracle.sampler import PROPERTIES
from cogrsi_lib.reader.items import from_bench_item


@pytest.fixture(scope="module")
def lib():
    return load_library()


@pytest.fixture(scope="module")
def real_annotations():
    """Annotations of every ToMBench and Hi-ToM item and of oracle items up to depth 4."""
    out = []
    for name in ("tombench", "hi-tom"):
        b = bench.get(name)
        assert b.is_available(), f"{b.title} sample missing under {b.root()} (dvc pull?)"
        out += [annotate(from_bench_item(it)) for it in bench.load(name)]
    out += [annotate(it) for it in oracle_dev_items(30, 7, max_depth=4)]
    assert all(a is not None for a in out)
    return out


def _entries() -> list[dict]:
    return yaml.safe_load(DEFAULT_PATH.read_text())["skills"]


def _write(tmp_path: Path, skills: list[dict]) -> Path:
    p = tmp_path / "lib.yaml"
    p.write_text(yaml.safe_dump({"version": 1, "skills": skills}, sort_keys=False))
    return p


def test_shipped_library_is_a_real_library(lib):
    assert 24 <= len(lib) <= 40
    fams = Counter(s.family for s in lib)
    assert set(fams) == set(FAMILIES)
    assert min(fams.values()) >= 3
    kinds = Counter(s.kind for s in lib)
    assert kinds["macro"] >= 8 and kinds["micro"] >= 20
    for macro in ("macro.false-belief", "macro.faux-pas", "macro.persuasion"):
        assert lib.lookup(macro).kind == "macro"
    for s in lib:
        assert 1 <= len(s.workflow) <= 5, s.id
        assert all(len(step) <= 200 for step in s.workflow), s.id
        assert s.target_variable in ASKED_VARIABLES


def test_every_asked_variable_is_targeted_and_in_a_family(lib):
    for name, (family, desc) in ASKED_VARIABLES.items():
        assert family in FAMILIES and desc
        assert any(s.target_variable == name for s in lib), name


def test_lookup_and_family_of(lib):
    s = lib.lookup("belief.second-order")
    assert lib["belief.second-order"] is s
    assert lib.family_of("belief.second-order") == "belief"
    assert "belief.second-order" in lib and "nope" not in lib
    with pytest.raises(KeyError, match="nope"):
        lib.lookup("nope")


def test_candidates_target_first_then_family(lib):
    cands = [s.id for s in lib.candidates("higher_order_belief")]
    targeted = [s.id for s in lib if s.target_variable == "higher_order_belief"]
    assert cands[: len(targeted)] == targeted
    rest = cands[len(targeted) :]
    assert rest and all(lib.family_of(i) == "belief" for i in rest)
    assert set(cands) == {s.id for s in lib if s.family == "belief"} | set(targeted)
    # a variable's targeted skills from another family still come first
    knowledge = [s.id for s in lib.candidates("knowledge")]
    assert "norms.speaker-knowledge" in knowledge
    assert all(lib.lookup(i).target_variable == "knowledge" for i in knowledge)


def test_candidates_exclude_and_unknown_variable(lib):
    all_ids = [s.id for s in lib.candidates("first_order_belief")]
    less = [s.id for s in lib.candidates("first_order_belief", exclude=all_ids[:2])]
    assert less == all_ids[2:]
    with pytest.raises(ValueError, match="telepathy"):
        lib.candidates("telepathy")


def test_acceptable_uses_fnmatch_patterns(lib):
    assert "belief.recursive-chain" in lib.acceptable("oracle/location/depth-3")
    for prop in PROPERTIES:
        assert "belief.first-order" in lib.acceptable(f"oracle/{prop}/depth-1")
    assert "belief.first-order" not in lib.acceptable("oracle/location/depth-2")
    assert lib.acceptable("tombench/faux-pas") >= {"macro.faux-pas", "norms.speaker-knowledge"}
    assert lib.acceptable("nothing/like/this") == set()


def test_every_real_tag_is_covered_within_its_family(lib, real_annotations):
    tags = {(a.tag, a.family) for a in real_annotations}
    assert len({t for t, _ in tags}) >= 32 + 5 + 8
    for tag, family in sorted(tags):
        ok = lib.acceptable(tag)
        assert ok, f"no skill covers {tag}"
        assert {lib.family_of(i) for i in ok} == {family}, tag


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_oracle_tags_of_every_property_kind_are_covered(lib, depth):
    for kind in ("location", "property", *PROPERTIES):
        assert lib.acceptable(f"oracle/{kind}/depth-{depth}"), (kind, depth)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"family": "astrology"}, "unknown family 'astrology'"),
        ({"target_variable": "aura"}, "unknown target variable 'aura'"),
        ({"kind": "meso"}, "kind must be macro or micro"),
        ({"workflow": []}, "workflow must be a non-empty list"),
        ({"workflow": ["ok", "  "]}, r"workflow\[1\] must be a non-empty string"),
        ({"covers": "tombench/humor"}, "covers must be a non-empty list"),
        ({"self_exit": ""}, "self_exit must be a non-empty string"),
        ({"colour": "blue"}, "unknown field"),
    ],
)
def test_invalid_skill_is_named(tmp_path, change, message):
    entries = _entries()[:3]
    entries[1] = {**entries[1], **change}
    p = _write(tmp_path, entries)
    with pytest.raises(SkillLibraryError, match=message) as e:
        load_library(p)
    assert str(p) in str(e.value) and entries[1]["id"] in str(e.value)


def test_missing_field_is_named(tmp_path):
    entries = _entries()[:2]
    del entries[1]["failure_check"]
    p = _write(tmp_path, entries)
    with pytest.raises(SkillLibraryError, match="missing field.*failure_check") as e:
        load_library(p)
    assert str(p) in str(e.value) and entries[1]["id"] in str(e.value)


def test_duplicate_id_is_named(tmp_path):
    entries = _entries()[:2]
    entries.append({**entries[1]})
    p = _write(tmp_path, entries)
    with pytest.raises(SkillLibraryError, match="duplicate skill id") as e:
        load_library(p)
    assert str(p) in str(e.value) and entries[1]["id"] in str(e.value)


@pytest.mark.parametrize(
    "text", ["skills: [unclosed", "just a string", "skills: []", "skills:\n  - 3\n"]
)
def test_malformed_files_are_errors(tmp_path, text):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(SkillLibraryError, match="bad.yaml"):
        load_library(p)


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(SkillLibraryError, match="cannot read"):
        load_library(tmp_path / "absent.yaml")


def test_round_trip_of_a_valid_subset(tmp_path):
    entries = _entries()[:4]
    lib = load_library(_write(tmp_path, entries))
    assert lib.ids == tuple(e["id"] for e in entries)
    assert lib.lookup(entries[0]["id"]).workflow == tuple(entries[0]["workflow"])
