"""The embedded GGUF as a safetensors folder that vLLM can load (converted once, cached).

vLLM does not open the shipped GGUF file as a model. :func:`converted_weights` loads it with
transformers (which de-quantises it), rebuilds a plain model from its config without the GGUF
quantisation entry, and saves weights, config and tokenizer with ``save_pretrained``. The
folder is named by the GGUF file's sha256 (``<stem>-<sha256[:16]>-<dtype>``) under the cache
root, so a different file gets a different folder and the same file is converted once. A
conversion is written to a temporary folder and renamed into place, so an interrupted one
leaves nothing behind that looks finished; ``cogrsi-source.json`` in the folder says what it
was made from.

:func:`weights_fingerprint` names a weights folder by what changes outputs (config, tokenizer
files, tensor names, shapes and dtypes, and 64 KiB of tensor data out of every 16 MiB, so a
fine-tuned copy of the same architecture differs) without reading whole files; the vLLM
backend puts it in its cache identity.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import tempfile
from pathlib import Path
from typing import Any

#: environment variable that moves the cache root (default ``~/.cache/cogrsi/weights``)
CACHE_ENV = "COGRSI_WEIGHTS_DIR"
SOURCE_FILE = "cogrsi-source.json"
DTYPES = ("bfloat16", "float16", "float32")


def weights_cache_root() -> Path:
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "cogrsi" / "weights"


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def converted_weights(
    gguf: str | os.PathLike[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    dtype: str = "bfloat16",
) -> Path:
    """The safetensors folder of ``gguf`` (default: the embedded model's file), converting it
    on first use."""
    from cogrsi_lib.llm.embedded import locate_default_gguf

    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, not {dtype!r}")
    src = Path(gguf) if gguf else locate_default_gguf()
    if not src.is_file():
        raise FileNotFoundError(f"GGUF file {src} does not exist")
    digest = file_sha256(src)
    base = Path(root) if root else weights_cache_root()
    out = base / f"{src.stem}-{digest[:16]}-{dtype}"
    if (out / SOURCE_FILE).is_file():
        return out
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=base))
    try:
        _convert(src, tmp, dtype, base)
        (tmp / SOURCE_FILE).write_text(json.dumps(
            {"gguf": src.name, "sha256": digest, "dtype": dtype, "converter": _versions()},
            indent=2, sort_keys=True) + "\n", encoding="utf-8")
        try:
            os.rename(tmp, out)
        except OSError:  # another process finished first
            if not (out / SOURCE_FILE).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _convert(src: Path, out: Path, dtype: str, root: Path) -> None:
    """De-quantise ``src`` to float32; any other dtype is cast from the float32 folder, so
    the GGUF is de-quantised once per file whatever dtypes are asked for."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype != "float32":
        f32 = converted_weights(src, root=root, dtype="float32")
        tok = AutoTokenizer.from_pretrained(f32)
        loaded = AutoModelForCausalLM.from_pretrained(f32, dtype=torch.float32)
    else:
        folder, name = str(src.parent), src.name
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name,
                                                      dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.architectures = [type(loaded).__name__]
    plain = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    missing, unexpected = plain.load_state_dict(loaded.state_dict(), strict=False)
    # tied output embeddings may be absent from one side; nothing else may be
    if unexpected or [k for k in missing if not k.endswith("lm_head.weight")]:
        raise RuntimeError(f"GGUF conversion lost tensors: missing {missing}, "
                           f"unexpected {unexpected}")
    plain.save_pretrained(out)
    tok.save_pretrained(out)


def _versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {}
    for pkg in ("transformers", "torch", "gguf"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def weights_fingerprint(folder: str | os.PathLike[str]) -> str:
    """sha256 over a local model folder's config and tokenizer files, its safetensors headers
    (tensor names, dtypes, shapes, offsets) and a sample of their data; "" when ``folder``
    is not a local folder (a hub name: its revision then names the weights)."""
    path = Path(folder)
    if not path.is_dir():
        return ""
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.suffix in (".json", ".jinja", ".txt") or f.name == "tokenizer.model":
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
        elif f.suffix == ".safetensors":
            h.update(f.name.encode() + b"\0")
            _hash_safetensors(f, h)
    return h.hexdigest()


SAMPLE_BYTES, SAMPLE_STRIDE = 1 << 16, 1 << 24


def _hash_safetensors(path: Path, h: Any) -> None:
    size = path.stat().st_size
    with open(path, "rb") as fh:
        (n,) = struct.unpack("<Q", fh.read(8))
        h.update(fh.read(n))
        for pos in range(8 + n, size, SAMPLE_STRIDE):
            fh.seek(pos)
            h.update(fh.read(SAMPLE_BYTES))
    h.update(str(size).encode())


def describe(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """``cogrsi-source.json`` of a converted folder ({} for any other folder)."""
    p = Path(folder) / SOURCE_FILE
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
