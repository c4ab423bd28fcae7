"""Download the full official releases into ``data/benchmarks`` with sha256 checksums.

``cogrsi bench fetch NAME`` (or :func:`fetch`) downloads every :class:`Source` of a
benchmark, checks its sha256 and moves it into place; archives are unpacked.  A source with
a pinned ``sha256`` must match it.  A source without one is checked against the checksum
recorded in ``data/benchmarks/CHECKSUMS.json`` by an earlier download, and the first download
records it there (trust on first use; the command says so).  A mismatch deletes the download
and raises :class:`ChecksumError`; nothing half-written is left in ``data/``.

Tests never touch the network: they fetch ``file://`` URLs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from cogrsi_lib.bench.registry import Source, data_root, get, shared_root

__all__ = ["CHECKSUMS_FILE", "ChecksumError", "fetch", "fetch_sources", "sha256_file"]

CHECKSUMS_FILE = "CHECKSUMS.json"
CHUNK = 1 << 20


class ChecksumError(RuntimeError):
    """A downloaded file whose sha256 is not the expected one."""


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(url: str, target: Path) -> str:
    """Stream ``url`` to ``target``; return its sha256."""
    digest = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": "cogrsi-bench-fetch"})
    with urllib.request.urlopen(request, timeout=60) as response, target.open("wb") as out:
        for block in iter(lambda: response.read(CHUNK), b""):
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def _members(names: Sequence[str]) -> tuple[list[PurePosixPath], int]:
    """Safe member paths, and 1 if they all sit in one common top-level folder (else 0)."""
    paths = []
    for name in names:
        p = PurePosixPath(name)
        if p.is_absolute() or ".." in p.parts:
            raise ValueError(f"unsafe path in archive: {name}")
        paths.append(p)
    nested = bool(paths) and all(len(p.parts) > 1 for p in paths)
    strip = 1 if nested and len({p.parts[0] for p in paths}) == 1 else 0
    return paths, strip


def _junk(name: str) -> bool:
    """Archive clutter: macOS resource forks and Finder files."""
    return name.startswith("__MACOSX/") or PurePosixPath(name).name == ".DS_Store"


def _extract(archive: Path, into: Path) -> list[Path]:
    """Unpack a .zip or .tar(.gz) into ``into`` (dropping one common top-level folder)."""
    written: list[Path] = []
    into.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir() and not _junk(i.filename)]
            paths, strip = _members([i.filename for i in infos])
            for info, p in zip(infos, paths, strict=True):
                dest = into.joinpath(*p.parts[strip:])
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, dest.open("wb") as out:
                    shutil.copyfileobj(src, out)
                written.append(dest)
        return written
    with tarfile.open(archive) as tf:
        infos = [m for m in tf.getmembers() if m.isfile() and not _junk(m.name)]
        paths, strip = _members([m.name for m in infos])
        for info, p in zip(infos, paths, strict=True):
            dest = into.joinpath(*p.parts[strip:])
            dest.parent.mkdir(parents=True, exist_ok=True)
            src = tf.extractfile(info)
            assert src is not None
            with src, dest.open("wb") as out:
                shutil.copyfileobj(src, out)
            written.append(dest)
    return written


def _load_lock(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def fetch_sources(
    sources: Sequence[Source],
    root: str | Path,
    lock_path: str | Path,
    force: bool = False,
    log: Callable[[str], None] = print,
) -> list[Path]:
    """Fetch ``sources`` into ``root``; returns the files written (extracted files included)."""
    root, lock_path = Path(root), Path(lock_path)
    lock = _load_lock(lock_path)
    written: list[Path] = []
    for src in sources:
        target = root / src.dest
        if target.exists() and not force and src.extract_to is None:
            log(f"present: {target}")
            written.append(target)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            part = Path(tmp) / target.name
            log(f"downloading {src.url}")
            digest = _download(src.url, part)
            expected = src.sha256 or lock.get(src.url)
            if expected is not None and digest != expected:
                raise ChecksumError(f"{src.url}: sha256 {digest}, expected {expected}; "
                                    "nothing was written")
            if expected is None:
                lock[src.url] = digest
                log(f"no pinned checksum for {src.url}: recorded sha256 {digest} in {lock_path}")
            if src.extract_to is not None:
                into = root / src.extract_to
                files = _extract(part, into)
                log(f"extracted {len(files)} file(s) into {into}")
                written += files
            else:
                part.replace(target)
                written.append(target)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock_path.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return written


def fetch(name: str, base: str | Path | None = None, force: bool = False,
          log: Callable[[str], None] = print) -> list[Path]:
    """Download benchmark ``name``'s official release into ``base/<its dir>``.

    The default base is ``data/benchmarks``, except for benchmarks that must not be shipped
    (no licence: PercepToM), which go to the shared folder outside the repository.
    """
    bench = get(name)
    if not bench.sources:
        raise ValueError(f"{bench.title}: no download source is known (see its module notes)")
    if base is None:
        base = shared_root() if bench.shared else data_root()
    base = Path(base)
    return fetch_sources(bench.sources, base / bench.data_dir, base / CHECKSUMS_FILE,
                         force=force, log=log)
