"""The reader through the vLLM backend against the same requests sent to one raw ``LLM.chat``.

Runs the grounded reader (``cogrsi``) and SC-6 together on a fixed set of ToMi-style items
through ``VLLMBackend`` (no completion cache, so every call is real; after one untimed pass
that lets vLLM compile the reply formats' grammars): both systems' flows share one stream,
each question's next request joining the engine's running batch as soon as the one it waits
for is back (:mod:`cogrsi_lib.llm.flow`). Then, on the same engine with its prefix cache
reset, the very same conversations and sampling settings go to vLLM in one ``LLM.chat`` call.
It prints both wall times and their ratio (goal: at most 1.10), the same work in waves
(every request ready at a moment in one ``LLM.chat``, as a batch-at-a-time engine would take
it), and the calls and tokens per question of both systems (CogRSI §5.1 and G.7: 7.3 calls,
1.51x the tokens of SC-6).

The raw call is a lower bound: it gets every request at once, while the reader must wait for
each question's perception before its samples and for the samples before arbitration.

``--server`` measures the path through a server instead: a local ``vllm serve`` of the same
weights (``cogrsi serve``'s own launch), the reader and SC-6 through ``backend: openai``, then
the very requests the backend sent, sent to that server all at once by a plain asynchronous
client (``openai.AsyncOpenAI``, the same request bodies); goal: at most 1.15.

Run:  python benchmarks/bench_vllm.py [--items 12] [--model DIR] [--server] [--out bench.json]
Needs vLLM (README: vLLM, on the CPU and at scale).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

from bench_embedded import tomi_like

from cogrsi_lib.baselines import make_system
from cogrsi_lib.llm.flow import JobStream, WaveStream
from cogrsi_lib.llm.types import Completion, Job
from cogrsi_lib.llm.vllm_backend import VLLMBackend
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader.system import run_systems

CPU_ENGINE = {"dtype": "bfloat16", "max_model_len": 4096, "enforce_eager": True,
              "gpu_memory_utilization": 0.2}


class Recording(VLLMBackend):
    """The vLLM backend, keeping every job it sends (in order); ``waves`` sends each moment's
    ready jobs in one ``LLM.chat`` instead of streaming them into the engine."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.batches: list[list[Job]] = []
        self.check_s = 0.0
        self.waves = False

    @property
    def sent(self) -> list[Job]:
        return [j for b in self.batches for j in b]

    def stream(self) -> JobStream:
        if self.waves:
            return WaveStream(self.complete)
        inner = super().stream()
        sent = self.batches

        class Logged(type(inner)):  # type: ignore[misc]
            def submit(self, jobs: Sequence[Job]):  # noqa: ANN202
                sent.append(list(jobs))
                return super().submit(jobs)

        inner.__class__ = Logged
        return inner

    def prompt_tokens(self, job: Job) -> int | None:
        t = time.perf_counter()
        try:
            return super().prompt_tokens(job)
        finally:
            self.check_s += time.perf_counter() - t

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        self.batches.append(list(jobs))
        return super().complete(jobs)


def both(backend, items: Sequence, cfg: ReaderConfig) -> tuple[float, dict]:
    """The reader and SC-6 on ``items`` in one stream: wall seconds, calls and tokens."""
    systems = [make_system(name, backend, cfg, "expert") for name in ("cogrsi", "sc6")]
    t = time.perf_counter()
    records, _ = run_systems(systems, items)
    wall = time.perf_counter() - t
    return wall, {s.name: per_question(r) for s, r in zip(systems, records, strict=True)}


def raw_chat(backend: VLLMBackend, jobs: Sequence[Job]) -> tuple[float, list]:
    """Wall time of one ``LLM.chat`` call on these jobs, with the backend's own settings."""
    t = time.perf_counter()
    out = backend.llm.chat([j.request.messages_dicts() for j in jobs],
                           sampling_params=[backend.sampling_params(j) for j in jobs],
                           use_tqdm=False,
                           chat_template_kwargs=backend.chat_template_kwargs or None)
    return time.perf_counter() - t, out


def served(items: Sequence, cfg: ReaderConfig, model: str | None) -> dict:
    """The workload through ``backend: openai`` against a local CPU ``vllm serve``, and the
    same request bodies sent to it at once by a plain asynchronous client."""
    import asyncio
    import tempfile
    from pathlib import Path

    import openai

    from cogrsi_lib.llm.openai_backend import OpenAIBackend
    from cogrsi_lib.llm.vllm_backend import VLLMSpec
    from cogrsi_lib.serve import EMBEDDED_NAME, Server, free_port, launch

    class Sent(OpenAIBackend):
        def __init__(self, *a, **kw) -> None:
            super().__init__(*a, **kw)
            self.batches: list[list[Job]] = []

        def _quiet(self, jobs: Sequence[Job]) -> list[Completion]:  # a stream's sends
            self.batches.append(list(jobs))
            return super()._quiet(jobs)

    server = Server(EMBEDDED_NAME, VLLMSpec(model=model, engine=CPU_ENGINE), (), free_port(),
                    ())
    with launch([server], Path(tempfile.mkdtemp()) / "server", cpu=True) as (url,):
        name = model or EMBEDDED_NAME
        backend = Sent(name, base_url=url, structured_outputs="vllm")
        both(backend, items, cfg)  # untimed: the server compiles each grammar once
        backend.batches.clear()
        through, usage = both(backend, items, cfg)
        bodies = [backend._request_kwargs(j) for b in backend.batches for j in b]

        async def at_once() -> float:
            client = openai.AsyncOpenAI(base_url=url, api_key="none", max_retries=0,
                                        timeout=600)
            t = time.perf_counter()
            await asyncio.gather(*(client.chat.completions.create(**kw) for kw in bodies))
            return time.perf_counter() - t

        raw_s = asyncio.run(at_once())
    return {"mode": "server", "model": name, "items": len(items), "requests": len(bodies),
            "backend_submissions": len(backend.batches),
            "backend_wall_s": round(through, 2),
            "endpoints": backend.throughput(),
            "async_client_wall_s": round(raw_s, 2),
            "ratio_backend_to_async_client": round(through / raw_s, 3),
            "per_question": {k: {kk: round(vv, 2) for kk, vv in v.items()}
                             for k, v in usage.items()}}


def per_question(recs) -> dict:
    calls = sum(r.ledger.total().calls for r in recs)
    tokens = sum(r.ledger.total().total_tokens for r in recs)
    return {"calls_per_q": calls / len(recs), "tokens_per_q": tokens / len(recs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=12)
    ap.add_argument("--model", default=None, help="model folder (default: the embedded GGUF "
                    "converted to safetensors)")
    ap.add_argument("--sample-max-tokens", type=int, default=96)
    ap.add_argument("--server", action="store_true",
                    help="through a local vllm serve, against a plain async client")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.server:
        cfg = ReaderConfig(sample_max_tokens=args.sample_max_tokens, perception_max_tokens=256,
                           arbitration_max_tokens=96)
        result = served([tomi_like(i) for i in range(args.items)], cfg, args.model)
        print(json.dumps(result, indent=2))
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                json.dump(result, fh, indent=2)
        return

    t0 = time.perf_counter()
    backend = Recording(args.model, engine_kwargs=CPU_ENGINE)
    load_s = time.perf_counter() - t0
    items = [tomi_like(i) for i in range(args.items)]
    cfg = ReaderConfig(sample_max_tokens=args.sample_max_tokens, perception_max_tokens=256,
                       arbitration_max_tokens=96)
    backend.llm.chat([[{"role": "user", "content": "Warm up."}]], use_tqdm=False)

    # a first, untimed pass: vLLM compiles each reply format's grammar once and keeps it, so
    # without it the backend would pay every compilation and the raw calls none
    both(backend, items, cfg)
    backend.batches.clear()
    backend.check_s = 0.0

    backend.llm.reset_prefix_cache()
    through_backend, usage = both(backend, items, cfg)
    jobs = backend.sent
    submissions = len(backend.batches)
    check_s = backend.check_s
    # the same work in waves: every request ready at a moment in one LLM.chat, then the next
    backend.waves, backend.batches = True, []
    backend.llm.reset_prefix_cache()
    waves_s, _ = both(backend, items, cfg)
    waves = len(backend.batches)

    backend.llm.reset_prefix_cache()
    raw_s, raw = raw_chat(backend, jobs)
    raw_tokens = sum(len(o.prompt_token_ids) + len(o.outputs[0].token_ids) for o in raw)

    result = {
        "model": backend.model,
        "identity": backend.identity,
        "load_s": round(load_s, 1),
        "items": len(items),
        "requests": len(jobs),
        "backend_wall_s": round(through_backend, 2),
        "backend_submissions": submissions,
        "length_checks_s": round(check_s, 2),
        "raw_chat_wall_s": round(raw_s, 2),
        "ratio_backend_to_raw": round(through_backend / raw_s, 3),
        "waves_wall_s": round(waves_s, 2),
        "waves": waves,
        "ratio_waves_to_raw": round(waves_s / raw_s, 3),
        "raw_tokens": raw_tokens,
        "per_question": {k: {kk: round(vv, 2) for kk, vv in v.items()} for k, v in usage.items()},
        "token_ratio_cogrsi_to_sc6": round(usage["cogrsi"]["tokens_per_q"]
                                           / usage["sc6"]["tokens_per_q"], 3),
        "paper": {"calls_per_q": 7.3, "token_ratio_cogrsi_to_sc6": 1.51},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
