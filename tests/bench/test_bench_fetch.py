"""`cogrsi bench fetch`: checksums and archives, on file:// URLs (never the network)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench.fetch import ChecksumError, fetch_sources, sha256_file
from cogrsi_lib.bench.registry import Source


def _file(tmp_path: Path, name: str, data: bytes) -> tuple[str, str]:
    path = tmp_path / "remote" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path.as_uri(), hashlib.sha256(data).hexdigest()


def test_pinned_checksum_ok_and_mismatch(tmp_path):
    url, digest = _file(tmp_path, "a.json", b'{"x": 1}')
    root, lock = tmp_path / "data" / "b", tmp_path / "data" / "CHECKSUMS.json"
    (out,) = fetch_sources([Source(url, "sub/a.json", digest)], root, lock, log=lambda _: None)
    assert out == root / "sub" / "a.json" and out.read_bytes() == b'{"x": 1}'
    bad = Source(url, "sub/b.json", "0" * 64)
    with pytest.raises(ChecksumError, match="expected 0000"):
        fetch_sources([bad], root, lock, log=lambda _: None)
    assert not (root / "sub" / "b.json").exists()
    assert sorted(p.name for p in (root / "sub").iterdir()) == ["a.json"]  # no temp left


def test_unpinned_checksum_is_recorded_then_enforced(tmp_path):
    url, digest = _file(tmp_path, "q.csv", b"a,b\n1,2\n")
    root, lock = tmp_path / "data" / "b", tmp_path / "data" / "CHECKSUMS.json"
    messages: list[str] = []
    fetch_sources([Source(url, "q.csv")], root, lock, log=messages.append)
    assert json.loads(lock.read_text())[url] == digest
    assert any("recorded sha256" in m for m in messages)
    (tmp_path / "remote" / "q.csv").write_bytes(b"a,b\n1,3\n")  # upstream changed
    with pytest.raises(ChecksumError):
        fetch_sources([Source(url, "q.csv")], root, lock, force=True, log=lambda _: None)
    assert (root / "q.csv").read_bytes() == b"a,b\n1,2\n"  # the checked copy is kept


def test_zip_with_top_folder_is_unpacked_without_it(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("tomi_balanced_story_types/fb_all_test.txt", "1 A entered the hall.\n")
        zf.writestr("__MACOSX/._junk", "x")
    url, digest = _file(tmp_path, "t.zip", buf.getvalue())
    root = tmp_path / "tomi"
    files = fetch_sources([Source(url, "t.zip", digest, extract_to="tomi_balanced_story_types")],
                          root, tmp_path / "lock.json", log=lambda _: None)
    assert files == [root / "tomi_balanced_story_types" / "fb_all_test.txt"]
    assert not (root / "t.zip").exists()


def test_flat_tar_gz_is_unpacked_in_place(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        data = b"[]"
        info = tarfile.TarInfo("fantom_v1.json")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    url, digest = _file(tmp_path, "fantom.tar.gz", buf.getvalue())
    root = tmp_path / "fantom"
    fetch_sources([Source(url, "fantom.tar.gz", digest, extract_to=".")], root,
                  tmp_path / "lock.json", log=lambda _: None)
    assert (root / "fantom_v1.json").read_bytes() == b"[]"


@pytest.mark.parametrize("name", ["bigtom", "hi-tom", "opentom", "tombench"])
def test_pinned_checksums_match_the_shipped_byte_identical_copies(name):
    b = bench.get(name)
    pinned = [s for s in b.sources if s.sha256]
    assert pinned, f"{name} has no pinned checksum"
    for src in pinned:
        assert src.url.startswith("https://")
        assert sha256_file(b.root() / src.dest) == src.sha256, src.dest


def test_every_benchmark_but_cogtom_has_a_source():
    missing = [n for n in bench.names() if not bench.get(n).sources]
    assert missing == ["cogtom"]


def test_unshipped_benchmark_is_fetched_outside_data(shared_benchmarks, tmp_path, monkeypatch):
    """Percept-ToMi has no licence: `fetch` writes it to the shared folder, not data/."""
    from cogrsi_lib.bench import fetch as fetch_mod

    original = shared_benchmarks / "percept-tomi" / "dataset" / "Percept-ToMi.csv"

    def fake_download(url: str, target: Path) -> str:  # no network in tests
        assert url.startswith("https://raw.githubusercontent.com/chanijung/PercepToM/")
        target.write_bytes(original.read_bytes())
        return sha256_file(target)

    monkeypatch.setattr(fetch_mod, "_download", fake_download)
    monkeypatch.setenv("COGRSI_SHARED_BENCHMARKS", str(tmp_path / "shared"))
    monkeypatch.setenv("COGRSI_DATA", str(tmp_path / "data"))
    (out,) = fetch_mod.fetch("percept-tomi", log=lambda _: None)
    assert out == tmp_path / "shared" / "percept-tomi" / "dataset" / "Percept-ToMi.csv"
    assert not (tmp_path / "data").exists()
