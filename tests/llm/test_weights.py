"""The embedded GGUF's cached safetensors conversions (``cogrsi_lib.llm.weights``): the float32
folder the embedded backend and the trainer load is the GGUF's de-quantised model exactly, and
a lower-precision folder is that model cast."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cogrsi_lib.llm import embedded, weights
from cogrsi_lib.llm.embedded import embedded_available

OK, WHY = embedded_available()
needs_weights = pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}")


@pytest.mark.model
@needs_weights
def test_the_float32_folder_is_the_gguf_de_quantised(embedded_model) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = embedded.locate_default_gguf()
    tok, model = embedded.loaded_weights(gguf)  # what the backend runs: the cached folder
    ref_tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    ref = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                               dtype=torch.float32)
    mine, theirs = model.state_dict(), ref.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)
    msgs = [{"role": "user", "content": "Where is the ball? Ünïcode ✓ <|im_end|>"}]
    text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    assert text == ref_tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    assert tok(text)["input_ids"] == ref_tok(text)["input_ids"]
    assert (tok.eos_token_id, tok.pad_token_id) == (ref_tok.eos_token_id, ref_tok.pad_token_id)
    ids = tok(text, return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(model(**ids).logits, ref(**ids).logits)


@pytest.mark.model
@needs_weights
def test_a_bfloat16_folder_is_the_float32_one_cast(tmp_path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    f32 = weights.converted_weights(dtype="float32")
    root = tmp_path / "root"
    (root / f32.name).parent.mkdir(parents=True)
    (root / f32.name).symlink_to(f32)  # the float32 folder is reused, not de-quantised again
    bf16 = weights.converted_weights(root=root, dtype="bfloat16")
    assert bf16.parent == root and json.loads((bf16 / weights.SOURCE_FILE).read_text()
                                              )["dtype"] == "bfloat16"
    a = AutoModelForCausalLM.from_pretrained(f32, dtype=torch.float32).state_dict()
    b = AutoModelForCausalLM.from_pretrained(bf16, dtype=torch.bfloat16).state_dict()
    assert a.keys() == b.keys()
    assert all(b[k].dtype == torch.bfloat16 and torch.equal(a[k].to(torch.bfloat16), b[k])
               for k in a)


class _Loader:
    calls: list[tuple[str, dict]] = []

    @classmethod
    def from_pretrained(cls, where, **kw):
        cls.calls.append((str(where), kw))
        return cls


def test_the_backend_loads_the_cached_folder(monkeypatch, tmp_path) -> None:
    folder = tmp_path / "converted"
    monkeypatch.setattr(weights, "converted_weights", lambda path, dtype: folder)
    _Loader.calls = []
    embedded._load_base(Path("/models/m.gguf"), _Loader, _Loader)
    assert [w for w, _ in _Loader.calls] == [str(folder)] * 2
    assert all("gguf_file" not in kw for _, kw in _Loader.calls)


def test_an_unwritable_cache_falls_back_to_the_gguf(monkeypatch, caplog) -> None:
    def refuse(path, dtype):
        raise PermissionError(13, "Permission denied", "/ro/weights")

    monkeypatch.setattr(weights, "converted_weights", refuse)
    _Loader.calls = []
    embedded._load_base(Path("/models/m.gguf"), _Loader, _Loader)
    assert [(w, kw.get("gguf_file")) for w, kw in _Loader.calls] == [("/models", "m.gguf")] * 2
    assert "not writable" in caplog.text and "m.gguf" in caplog.text
