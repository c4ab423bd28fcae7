"""vLLM for real on the CPU: the offline engine behind ``VLLMBackend``, and ``vllm serve`` on
127.0.0.1 behind ``OpenAIBackend``, with the embedded model converted once from its GGUF.

These run vLLM's own engine, scheduler, structured-output backend and HTTP server; nothing is
stood in for. To keep the suite's share of vLLM small on any CPU, the module builds one
engine (LoRA enabled, so the trained adapter is served by the same engine as the base) and
the pytest run starts one server (``vllm_server`` in ``tests/llm/conftest.py``), shared by
every server test and by the model stages run with their counts cut to a few items; one
model stage runs at its full ``params.yaml`` CPU setting on an engine of its own (``slow``).
Skipped when vLLM is not installed, failed instead under ``COGRSI_REQUIRE_VLLM=1``
(``.ci/run``).
"""

from __future__ import annotations

import gc

import pytest

from cogrsi_lib.llm import CachedBackend, Request
from cogrsi_lib.llm.tally import open_tally
from cogrsi_lib.reply_families import example_requests

from .test_llm_embedded_structured import FORMATS, QUESTION, STORY
from .vllm_real import CPU_ENGINE, SERVED_NAME, metric, on_server, on_vllm

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


# -- vllm serve on 127.0.0.1 -----------------------------------------------------------------
def served(urls, **cfg):
    from cogrsi_lib.llm import build_backend

    return build_backend({"backend": "openai", "model": SERVED_NAME, "base_url": urls,
                          "structured_outputs": "vllm", "max_retries": 2, **cfg})


@pytest.mark.parametrize("kind", sorted(FORMATS))
def test_openai_backend_against_a_real_vllm_server(vllm_server, kind) -> None:
    b = served(vllm_server, concurrency=1)  # one request at a time: no batch effects
    fmt = FORMATS[kind]
    req = Request.of(f"{STORY}\n\n{QUESTION} Reply in this form: {fmt.spec}", reply=fmt, n=4,
                     temperature=1.0, max_tokens=80, seed=5)
    with open_tally() as tally:
        first = b.generate_one(req)
        again = b.generate_one(req)
    for c in first:
        fmt.parse(c.text)
        assert c.ok and c.usage_reported and c.prompt_tokens > 50 and c.completion_tokens >= 1
    assert [c.text for c in again] == [c.text for c in first]  # the server honours seeds
    assert len({c.text for c in first}) > 1 or kind == "choice"
    (row,) = tally.rows()
    assert row["parse_rate"] == 1.0 and row["usage_unreported"] == 0
    assert row["thinking_replies"] == 0 and row["failed"] == 0


def test_response_format_mode_against_a_real_vllm_server(vllm_server) -> None:
    b = served(vllm_server, structured_outputs="response_format")
    fmt = FORMATS["json"]
    out = b.generate_one(Request.of(f"{STORY}\n\n{QUESTION}", reply=fmt, n=2, temperature=0.7,
                                    max_tokens=80))
    assert all(fmt.ok(c.text) for c in out)


def test_real_server_over_long_prompt_is_caught_before_sending(vllm_server, tmp_path) -> None:
    b = CachedBackend(served(vllm_server), tmp_path)
    before = metric(vllm_server, "vllm:request_success_total")
    long = Request.of("word " * 5000, max_tokens=8)
    near = Request.of("word " * 3900, max_tokens=400)  # fits, with less room than asked
    short = Request.of("Where is the ball? Answer in one word.", max_tokens=8)
    out = [cs[0] for cs in b.generate([long, near, short])]
    assert not out[0].ok and out[0].error.startswith("context_length: the prompt has ")
    assert out[1].ok and out[1].prompt_tokens + out[1].completion_tokens <= 4096
    assert out[2].ok and out[2].text
    assert metric(vllm_server, "vllm:request_success_total") - before == 2
    assert b.cache.stats.writes == 2


def test_requests_are_spread_over_the_endpoint_list(vllm_server) -> None:
    """Two endpoints (the one server under two addresses): the requests are shared between
    them, each endpoint's count is what it sent, and the server answered every one."""
    port = vllm_server.rsplit(":", 1)[1]
    urls = [vllm_server, f"http://localhost:{port}"]
    b = served(urls, concurrency=4)
    before = metric(vllm_server, "vllm:request_success_total")
    out = b.generate_one(Request.of("Name a colour.", n=24, temperature=1.0, max_tokens=6))
    assert len(out) == 24 and all(c.ok for c in out)
    assert metric(vllm_server, "vllm:request_success_total") - before == 24
    sent = [e.sent for e in b.endpoints]
    assert sum(sent) == 24 and min(sent) > 0


# -- every model stage through vLLM -----------------------------------------------------------
#: reader_eval runs at its full CPU setting (test_reader_eval_at_its_cpu_setting_...)
TINY_STAGES = ("harness", "pddl_mind", "scorecard", "loops", "audit")

#: each stage's counts cut to a few items and its longest reply caps to a few dozen tokens
#: (record columns depend on neither); every other setting, its models included, is the
#: params.yaml CPU setting. reader_eval runs at its full CPU setting below.
TINY = {
    "harness": {"ablations": ["base", "full"], "n_per_benchmark": 1, "n_oracle": 1,
                "agreement": {"n_worlds": 10},
                "dev": {"n_tombench": 1, "n_oracle": 1, "rounds": 1, "budget": 8,
                        "max_tokens": 64}},
    "pddl_mind": {"n_stories": 1, "questions_per_story": 1, "n_cross_check": 4,
                  "n_per_category": 1},
    "scorecard": {"interventions": ["perspective"], "n_per_cell": 1, "n_per_game": 1,
                  "selfpred_test": 1, "applied_depths": [1], "observation_counts": [0],
                  "bootstrap_resamples": 50, "reply_caps": {"perspective": 64, "store": 64}},
    "loops": {"rounds": 2, "discovery_size": 4, "trial_size": 4, "n_trials": 2,
              "final_size": 4, "heldout_size": 2, "max_candidates": 2, "builder_max_tokens": 64,
              "shadow_study": {"arms": ["accuracy_library", "gated_library"], "seeds": [0],
                               "rounds": 1, "discovery_size": 4, "trial_size": 4,
                               "dev_stories": 30, "final_size": 8},
              "shadow_audit": {"n_worlds": 20, "seed": 7, "max_depth": 2},
              "noise_rounds": 200,
              "pairs": {"n_gate_narrative": 1, "n_gate_dialogue": 1, "n_eval_narrative": 1,
                        "n_eval_dialogue": 1}},
    "audit": {"n_worlds": 30, "max_tokens": 256,
              "registration": {"seeds": [0], "rounds": 1, "discovery_size": 8, "trial_size": 8,
                               "dev_stories": 60, "final_size": 20},
              "replay": {"max_per_rule": 1, "n_controls": 1}},
}


def tiny(stage: str, section: dict) -> dict:
    """``section`` with the stage's counts cut (nested settings merged key by key)."""
    out = dict(section)
    for key, value in TINY[stage].items():
        base = out.get(key)
        out[key] = {**base, **value} if isinstance(base, dict) else value
    return out


@pytest.mark.parametrize("stage", TINY_STAGES)
def test_model_stage_at_a_tiny_size_through_vllm_serve(vllm_server, tmp_path, stage):
    """The stage's notebook at its params.yaml CPU setting with its counts cut, every model
    served by ``vllm serve``: the committed run's record files and columns."""
    import yaml

    from cogrsi_lib.pipeline import find_repo_root

    section = yaml.safe_load((find_repo_root() / "params.yaml").read_text())[stage]
    swapped = on_server(tiny(stage, section), vllm_server, str(tmp_path / "cache"))
    check_stage_records(stage, swapped, tmp_path)


@pytest.mark.slow
def test_reader_eval_at_its_cpu_setting_on_the_vllm_engine(weights, tmp_path):
    """reader_eval's whole params.yaml CPU setting with ``backend: vllm``: the engine built
    inside the stage's own kernel, at full size."""
    import yaml

    from cogrsi_lib.pipeline import find_repo_root

    section = yaml.safe_load((find_repo_root() / "params.yaml").read_text())["reader_eval"]
    check_stage_records("reader_eval", on_vllm(section, CPU_ENGINE, str(tmp_path / "cache")),
                        tmp_path)


#: the per-item record files, the stage's ``records.parquet`` and those it replaced (a
#: committed run made before it may still hold them): checked against the declaration
#: (:mod:`cogrsi_lib.records_schema`), not against the committed run
RECORD_FILES = frozenset({"records.parquet", "items.parquet", "translations.parquet",
                          "final_scores.parquet"})


def check_stage_records(stage: str, section: dict, tmp_path) -> None:
    """Run the stage's notebook by papermill with ``section``: its records in exactly the
    declared columns and types, the other tables with the same files and columns as the
    committed embedded run (the outputs dvc.lock names, read from the in-repo DVC remote),
    every reply that the cap did not cut in its declared form, none failed."""
    import json

    import polars as pl
    import yaml

    from cogrsi_lib.pipeline import find_repo_root, run_stage
    from cogrsi_lib.records_schema import FILE, stage_schema

    assert "embedded" not in json.dumps(section)
    root = find_repo_root()
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({stage: section}))
    run_stage(stage, tmp_path / "params.yaml", tmp_path / "out", repo_root=root)
    schema = stage_schema(stage)
    records = pl.read_parquet(tmp_path / "out" / FILE)
    schema.check(records)
    assert records.height, f"{stage}: no records"
    for p in (tmp_path / "out").glob("runs/**/items.parquet"):  # the loops' round logs
        schema.check(pl.read_parquet(p))
    committed = committed_run(root, stage, tmp_path / "committed")
    assert any(committed.rglob("*.parquet")), f"{stage}: the committed run has no records"
    parquets = sorted(p for p in committed.rglob("*.parquet") if p.name not in RECORD_FILES)
    differ = {}
    for p in parquets:
        mine = tmp_path / "out" / p.relative_to(committed)
        assert mine.is_file(), f"{stage}: no {mine.name} on vllm"
        ours, theirs = pl.read_parquet(mine).schema, pl.read_parquet(p).schema
        if ours != theirs:
            differ[p.name] = {c: (ours.get(c), theirs.get(c)) for c in {*ours, *theirs}
                              if ours.get(c) != theirs.get(c)}
    assert not differ, f"{stage}: columns differ from the committed run: {differ}"
    replies = json.loads((tmp_path / "out" / "summary.json").read_text())["replies"]
    assert replies, f"{stage}: no model calls tallied"
    for family, row in replies.items():
        assert row["failed"] == 0 and row["thinking_replies"] == 0, family
        # a reply the backend constrained is in its form unless the token cap cut it
        assert row["parsed"] is None or row["parsed"] + row["capped"] >= row["calls"], family


def committed_run(root, stage: str, dest):
    """``reports/<stage>`` as dvc.lock records it, fetched from the repository's own DVC
    remote (the working tree's reports/ may be newer, or absent in a fresh clone)."""
    from dvc.api import DVCFileSystem

    DVCFileSystem(str(root)).get(f"reports/{stage}", str(dest), recursive=True)
    return dest
