"""vLLM's offline engine for real on the CPU, behind ``VLLMBackend``, with the embedded model
converted once from its GGUF: its scheduler and structured-output backend, nothing stood in
for. The module builds one engine (LoRA enabled, so the trained adapter is served by the same
engine as the base). ``vllm serve`` is tested in ``test_llm_vllm_serve.py``. Skipped when
vLLM is not installed, failed instead under ``COGRSI_REQUIRE_VLLM=1`` (``.ci/run``).
"""

from __future__ import annotations

import gc

import pytest

from cogrsi_lib.llm import CachedBackend, Request
from cogrsi_lib.llm.tally import open_tally
from cogrsi_lib.reply_families import example_requests

from .test_llm_embedded_structured import FORMATS, QUESTION, STORY
from .vllm_real import CPU_ENGINE, committed_run

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def adapter(tmp_path_factory):
    """The long training configuration's adapter (``reports/train-long.dvc``, from the
    repository's DVC remote): trained long enough to change the base's answers."""
    from cogrsi_lib.pipeline import find_repo_root

    return committed_run(find_repo_root(), "train-long/adapter",
                         tmp_path_factory.mktemp("committed") / "adapter")


@pytest.fixture(scope="module")
def engine(weights, adapter):
    """The module's one engine: LoRA enabled at the committed adapter's rank, so that the
    base (requests without a LoRA request) and the trained adapter share it."""
    from cogrsi_lib.llm.adapter import load_adapter
    from cogrsi_lib.llm.vllm_backend import LORA_RANKS, VLLMBackend

    rank = min(r for r in LORA_RANKS if r >= load_adapter(adapter).rank)
    b = VLLMBackend(None, engine_kwargs={**CPU_ENGINE, "enable_lora": True, "max_loras": 1,
                                         "max_lora_rank": rank})
    yield b
    del b
    gc.collect()


# -- the offline engine ----------------------------------------------------------------------
def test_engine_is_the_converted_embedded_model_on_the_cpu(engine, weights) -> None:
    assert engine.on_cpu() and engine.seeded
    assert engine.engine_kwargs["enable_chunked_prefill"] is False
    assert engine.model == weights.name and engine.identity.startswith(f"vllm:{weights.name}#")
    assert engine.max_model_len == CPU_ENGINE["max_model_len"]


def test_every_prompt_family_parses_through_the_real_engine(engine) -> None:
    reqs = example_requests()
    with open_tally() as tally:
        outs = engine.generate(list(reqs.values()))
    bad = {fam: cs[0].text[:200] for (fam, r), cs in zip(reqs.items(), outs, strict=True)
           if not (cs[0].ok and cs[0].structured and r.reply.ok(cs[0].text))}
    assert not bad
    rows = {r["family"]: r for r in tally.rows()}
    assert set(rows) == set(reqs) and all(r["parse_rate"] == 1.0 for r in rows.values())
    assert all(r["failed"] == 0 and r["thinking_replies"] == 0 for r in rows.values())


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_sampled_replies_keep_their_form_and_seeds_make_them_reproducible(engine, kind):
    fmt = FORMATS[kind]
    req = Request.of(f"{STORY}\n\n{QUESTION} Reply in this form: {fmt.spec}", reply=fmt, n=4,
                     temperature=1.0, max_tokens=80, seed=3)
    first = engine.generate_one(req)
    for c in first:
        fmt.parse(c.text)
        assert c.finish_reason == "stop" and 1 <= c.completion_tokens < 80
    assert len({c.text for c in first}) > 1 or kind == "choice"  # seeds differ by sample
    # the same batch again gives the same samples: per-request seeds, chunked prefill off (in
    # another batch, floating-point batch effects may change them; the cache keeps reruns exact)
    assert [c.text for c in engine.generate_one(req)] == [c.text for c in first]
    if kind == "json":  # compact, as the embedded backend writes it
        assert all("\n" not in c.text and ", " not in c.text for c in first)


def test_an_over_long_prompt_fails_alone_and_the_batch_is_cached(engine, tmp_path) -> None:
    cached = CachedBackend(engine, tmp_path)
    long = Request.of("word " * 5000, max_tokens=8)
    short = Request.of("Where is the ball? Answer in one word.", max_tokens=8)
    out = [cs[0] for cs in cached.generate([long, short])]
    assert not out[0].ok and out[0].error.startswith("context_length: the prompt has ")
    assert out[0].prompt_tokens > CPU_ENGINE["max_model_len"]
    assert out[1].ok and out[1].text and out[1].prompt_tokens > 10
    assert cached.cache.stats.writes == 1
    again = [cs[0] for cs in cached.generate([long, short])]
    assert again[1].from_cache and again[1].text == out[1].text and not again[0].ok


def test_engine_serves_the_trained_adapter_as_the_embedded_backend_merges_it(
        engine, adapter, embedded_model) -> None:
    """The train stage's committed adapter, served by vLLM's LoRA support, answers like the
    embedded backend with the adapter merged, where the adapter changes the base's answer."""
    from cogrsi_lib.llm.embedded import EmbeddedBackend
    from cogrsi_lib.llm.types import SamplingParams
    from cogrsi_lib.llm.vllm_backend import VLLMBackend
    from cogrsi_lib.reader import prompts
    from cogrsi_lib.reader.views import plain_view
    from cogrsi_lib.train.examples import open_item, oracle_items

    lora = VLLMBackend(None, engine_kwargs=CPU_ENGINE, adapter=adapter)
    assert lora.llm is engine.llm, "the adapter is served by the module's engine"
    merged = EmbeddedBackend(adapter=adapter, max_batch=8)
    assert lora.model == engine.model + merged.model[len(embedded_model.model):]
    assert lora.identity != engine.identity and lora.engine_kwargs["enable_lora"]
    items = [open_item(it.item) for it in oracle_items(16, 11, per_world=1)]
    assert len(items) >= 8
    requests = [prompts.answer_request(it, plain_view(it), SamplingParams(max_tokens=24,
                                       temperature=0.0), think=prompts.THINK_NONE)
                for it in items]

    def answers(backend):
        return [cs[0].text for cs in backend.generate(requests)]

    base, trained, served = answers(embedded_model), answers(merged), answers(lora)
    changed = [k for k, (b, t) in enumerate(zip(base, trained, strict=True)) if b != t]
    assert len(changed) >= 6, "the adapter should change some of the base's answers"
    # bf16 on vLLM against float32 merged weights: near ties may differ, most must not
    assert sum(served[k] == trained[k] for k in changed) >= 0.75 * len(changed)
    assert sum(v == t for v, t in zip(served, trained, strict=True)) >= 0.75 * len(items)
