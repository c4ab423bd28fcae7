"""Sample manifests: disjoint by construction, reproducible from their seeds (App. E.1-E.2)."""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.bench.manifest import (
    DEFAULT_SEEDS,
    SPLIT_NAMES,
    Manifest,
    ManifestError,
    SampleSpec,
    check_disjoint,
    draw_manifests,
    draw_samples,
    manifest_frame,
    read_manifest,
    select,
    specs_from_params,
    write_manifest,
)

from .conftest import real

SIZES = {"S0": 30, "S1": 60, "S2": 300, "S3": 420, "S4": 310}


@pytest.fixture(scope="module")
def tomi_manifest():
    items = real("tomi")
    return items, draw_samples(items, specs_from_params(SIZES), "tomi")


def test_paper_seeds_are_the_defaults():
    assert DEFAULT_SEEDS["S0"] == DEFAULT_SEEDS["S2"] == 0
    assert DEFAULT_SEEDS["S3"] == 1 and DEFAULT_SEEDS["S4"] == 3
    assert list(SPLIT_NAMES) == ["S0", "S1", "S2", "S3", "S4"]


def test_splits_are_disjoint_in_units_and_items(tomi_manifest):
    items, m = tomi_manifest
    units = [u for split in m.units.values() for u in split]
    ids = [i for split in m.items.values() for i in split]
    assert len(units) == len(set(units)) and len(ids) == len(set(ids))
    story_of = {it.id: it.story_id for it in items}
    for members in m.members.values():
        for unit, unit_items in members.items():
            assert all(story_of[i] == unit for i in unit_items)
    # whole stories: every question of a drawn story is in the same split
    for split in m.items:
        drawn = set(m.units[split])
        assert sum(1 for it in items if it.story_id in drawn) == len(m.items[split])


def test_each_split_reaches_its_size_by_whole_stories(tomi_manifest):
    _, m = tomi_manifest
    for split, n in SIZES.items():
        got = len(m.items[split])
        assert n <= got < n + 6  # ToMi stories have six questions each


def test_draw_is_reproducible_and_depends_on_the_seed(tomi_manifest):
    items, m = tomi_manifest
    again = draw_samples(list(reversed(items)), specs_from_params(SIZES), "tomi")
    assert again.members == m.members  # order of the input does not matter
    other = draw_samples(items, specs_from_params(SIZES, {"S3": 7}), "tomi")
    assert other.units["S0"] == m.units["S0"]  # earlier draws unchanged
    assert other.units["S3"] != m.units["S3"]


def test_manifest_round_trip_and_select(tomi_manifest, tmp_path):
    items, m = tomi_manifest
    path = write_manifest(m, tmp_path / "tomi.json")
    back = read_manifest(path)
    assert back == m
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["splits"]["S3"]["seed"] == 1
    assert data["splits"]["S3"]["n_questions"] == len(m.items["S3"])
    chosen = select(items, back, "S3")
    assert [it.id for it in chosen] == list(m.items["S3"])
    frame = manifest_frame([m])
    assert frame.height == sum(len(v) for v in m.items.values())


def test_overlapping_manifest_is_refused(tomi_manifest, tmp_path):
    _, m = tomi_manifest
    bad = m.to_json()
    s0_unit, s0_items = next(iter(bad["splits"]["S0"]["units"].items()))
    bad["splits"]["S3"]["units"][s0_unit] = s0_items
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"is in both S0 and S3"):
        read_manifest(path)
    with pytest.raises(ManifestError, match="is in both"):
        check_disjoint(Manifest.from_json(bad))


def test_select_refuses_ids_from_other_data(tomi_manifest):
    items, m = tomi_manifest
    with pytest.raises(ManifestError, match=r"tomi S3: \d+ manifest ids not in the loaded items"):
        select(items[:100], m, "S3")


def test_too_few_questions_is_an_error():
    items = real("hi-tom")  # 600 questions
    with pytest.raises(ManifestError, match=r"hi-tom: split S3 needs 700 questions but only"):
        draw_samples(items, [SampleSpec("S3", 700, 1)], "hi-tom")


def test_unknown_split_is_refused():
    with pytest.raises(ManifestError, match="unknown split 'S9'"):
        SampleSpec("S9", 1, 0)


def test_draw_manifests_per_benchmark_overrides():
    loaded = {"hi-tom": real("hi-tom"), "tombench": real("tombench")}
    ms = draw_manifests(loaded, {"S0": 10, "S3": 400}, {"hi-tom": {"S3": 100}})
    by = {m.benchmark: m for m in ms}
    assert 100 <= len(by["hi-tom"].items["S3"]) < 105
    assert 400 <= len(by["tombench"].items["S3"]) < 420
    assert by["tombench"].unit == "story"
