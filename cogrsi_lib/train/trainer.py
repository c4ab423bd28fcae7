"""LoRA fine-tuning of the embedded model: SFT on oracle examples, then GRPO with the oracle's
answer as reward (Zing's staged training; peft for the adapter, trl for both phases).

Each phase writes checkpoints to its own folder under a work directory named by everything
that changes its result (base weights, settings, examples); a run that finds a checkpoint
resumes from it exactly (weights, optimizer, scheduler, data order and random state, as the
``transformers`` Trainer restores them), and a phase whose final adapter exists is not
run again. The held-out accuracy is measured every few steps by scoring each option's reply
(:func:`option_accuracy`) and logged beside the loss.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogrsi_lib.train.examples import TRACE_TOKENS, Example
from cogrsi_lib.train.params import LoraParams, TrainParams

SFT, GRPO = "sft", "grpo"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


@dataclass
class PhaseResult:
    """What one phase did: its log (loss, held-out accuracy, reward per step), where its
    adapter is, how long this run took and whether it resumed or found the phase done."""

    phase: str
    adapter: Path
    history: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    resumed_from: int | None = None
    cached: bool = False


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fingerprint(settings: TrainParams, *groups: Sequence[Example], base: str = "") -> str:
    """A short hash of everything a run's result depends on: the training settings, the
    base weights' description and every example of every group."""
    h = hashlib.sha256()
    keep = settings.model_dump(include={"lora", "sft", "grpo", "seed", "checkpoint_every",
                                        "heldout_every"})
    h.update(json.dumps(keep, sort_keys=True).encode())
    h.update(base.encode())
    for group in groups:
        h.update(b"|")
        for e in group:
            h.update(json.dumps(e.row(), sort_keys=True).encode())
    return h.hexdigest()[:16]


def base_model_path() -> Path:
    """The embedded GGUF as a float32 safetensors folder (converted once, then cached)."""
    from cogrsi_lib.llm.weights import converted_weights

    return converted_weights(dtype="float32")


def load_base(threads: int | None = None) -> tuple[Any, Any]:
    """The embedded model (float32, trainable) and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads:
        torch.set_num_threads(int(threads))
    path = base_model_path()
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return model, tok


def is_adapter(path: str | os.PathLike[str]) -> bool:
    return all((Path(path) / f).is_file() for f in ADAPTER_FILES)


def _lora_config(s: LoraParams) -> Any:
    from peft import LoraConfig

    targets = s.target_modules if isinstance(s.target_modules, str) else list(s.target_modules)
    return LoraConfig(r=s.r, lora_alpha=s.alpha, lora_dropout=s.dropout,
                      target_modules=targets, task_type="CAUSAL_LM")


def _last_checkpoint(folder: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(folder)) if folder.is_dir() else None


def _finish(trainer: Any, phase_dir: Path) -> Path:
    final = phase_dir / "final"
    trainer.model.save_pretrained(str(final))
    (final / "README.md").unlink(missing_ok=True)  # peft's model-card stub
    (phase_dir / "history.json").write_text(json.dumps(trainer.state.log_history, indent=1))
    return final


def _cached(phase: str, phase_dir: Path) -> PhaseResult | None:
    final = phase_dir / "final"
    if not is_adapter(final):
        return None
    hist = json.loads((phase_dir / "history.json").read_text())
    return PhaseResult(phase, final, hist, cached=True)


#: the held-out measurements each log row of a measured step carries
HELDOUT_COLUMNS = ("heldout_accuracy", "heldout_open_accuracy",
                   "heldout_open_false_belief_accuracy", "heldout_traced_accuracy",
                   "heldout_traced_false_belief_accuracy")


def _heldout_callback(phase: str, heldout: Sequence[Example], tok: Any, every: int,
                      at_start: bool = True) -> Any:
    from transformers import TrainerCallback

    class HeldOut(TrainerCallback):
        """Held-out accuracy at step 0 (``at_start``) and every ``every`` steps, into the log:
        by option label, and (for open examples) by the place the model most likely names."""

        def _measure(self, state: Any, model: Any) -> None:
            lettered = [e for e in heldout if e.labels]
            named = [e for e in heldout if e.family == "answer.open"]
            traced = [e for e in heldout if e.family == "answer.traced"]
            right = _right(open_picks, model, tok, named)
            by_trace = _right(traced_picks, model, tok, traced)
            values = (option_accuracy(model, tok, lettered), _mean(right),
                      _false_beliefs(right, named), _mean(by_trace),
                      _false_beliefs(by_trace, traced))
            state.log_history.append({"step": state.global_step, "phase": phase,
                                      **dict(zip(HELDOUT_COLUMNS, values, strict=True))})

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if heldout and at_start and state.global_step == 0:
                self._measure(state, kw["model"])

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            step = state.global_step
            if heldout and (step % max(1, every) == 0 or step == state.max_steps):
                self._measure(state, kw["model"])

    return HeldOut()


def run_sft(
    examples: Sequence[Example],
    heldout: Sequence[Example],
    settings: TrainParams,
    work: str | os.PathLike[str],
    *,
    callbacks: Sequence[Any] = (),
) -> PhaseResult:
    """Supervised fine-tuning of a fresh LoRA adapter on ``examples`` (loss on the reply
    tokens only), resuming from the last checkpoint under ``work/sft``."""
    phase_dir = Path(work) / SFT
    done = _cached(SFT, phase_dir)
    if done is not None:
        return done
    trainer = sft_trainer(examples, heldout, settings, phase_dir, callbacks=callbacks)
    return _train(SFT, trainer, phase_dir)


def sft_trainer(
    examples: Sequence[Example],
    heldout: Sequence[Example],
    settings: TrainParams,
    phase_dir: str | os.PathLike[str],
    *,
    callbacks: Sequence[Any] = (),
) -> Any:
    """trl's SFT trainer for a fresh LoRA adapter on the base model, writing to
    ``phase_dir``, with the reply-only loss of :func:`_reply_loss_trainer`."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    s = settings.sft
    model, tok = load_base(settings.threads)
    rows = [{"prompt": r["prompt"], "completion": r["completion"]}
            for r in (e.row() for e in examples)]
    args = SFTConfig(
        max_steps=s.steps, per_device_train_batch_size=s.batch_size,
        gradient_accumulation_steps=s.grad_accum, learning_rate=s.lr,
        lr_scheduler_type=s.scheduler, warmup_steps=s.warmup_steps, max_length=s.max_length,
        completion_only_loss=True, dataset_num_proc=None, bf16=s.bf16,
        train_sampling_strategy="group_by_length" if s.group_by_length else "random",
        **_run_args(settings, Path(phase_dir)),
    )
    return _reply_loss_trainer(SFTTrainer)(
        model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tok,
        peft_config=_lora_config(settings.lora),
        callbacks=[_heldout_callback(SFT, heldout, tok, settings.heldout_every), *callbacks],
    )


def _reply_loss_trainer(base: type) -> type:
    """``base`` (trl's SFTTrainer) with the loss computed at the reply positions only.

    trl applies the output layer to every position (the prompt's too) before masking; the
    replies here are a few tokens after a few hundred of prompt, so projecting only the
    positions that carry a label gives the same loss (mean negative log-likelihood per reply
    token) at a fraction of the cost. Logs the reply tokens' top-1 accuracy."""
    import torch

    class ReplyLossSFTTrainer(base):  # type: ignore[misc, valid-type]
        def compute_loss(self, model: Any, inputs: dict[str, Any], return_outputs: bool = False,
                         num_items_in_batch: Any = None) -> Any:
            causal = model.get_base_model() if hasattr(model, "get_base_model") else model
            body = {k: inputs[k] for k in ("input_ids", "attention_mask", "position_ids")
                    if k in inputs}
            hidden = causal.model(**body, use_cache=False).last_hidden_state[:, :-1]
            targets = inputs["labels"][:, 1:]
            keep = targets != -100
            logits = causal.lm_head(hidden[keep]).float()
            nll = torch.nn.functional.cross_entropy(logits, targets[keep], reduction="sum")
            n = keep.sum() if num_items_in_batch is None else num_items_in_batch
            loss = nll / torch.as_tensor(n).clamp(min=1)
            if model.training:
                hits = (logits.argmax(-1) == targets[keep]).float().mean() if keep.any() else 0.0
                self._metrics["train"]["mean_token_accuracy"].append(float(hits))
            return (loss, None) if return_outputs else loss

    return ReplyLossSFTTrainer


def _run_args(settings: TrainParams, phase_dir: Path) -> dict[str, Any]:
    """What both phases' trainer configs share: where and how often to checkpoint, a log
    line per step, the CPU, the seeds, no reporting service."""
    return {"output_dir": str(phase_dir), "logging_steps": 1,
            "save_steps": settings.checkpoint_every, "save_total_limit": 2, "report_to": [],
            "use_cpu": True, "seed": settings.seed, "data_seed": settings.seed,
            "dataloader_num_workers": 0}


def _progress_callback(phase: str) -> Any:
    from transformers import TrainerCallback

    from cogrsi_lib.progress import progress

    class Progress(TrainerCallback):
        """A bar over the phase's steps (a resumed run starts at its checkpoint's step),
        showing the last logged loss."""

        bar: Any = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.bar = progress(desc=f"train {phase}", total=state.max_steps, unit="step")
            self.bar.update(state.global_step)

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None,
                   **kw: Any) -> None:
            if self.bar is not None and logs and "loss" in logs:
                self.bar.set_postfix(loss=f"{logs['loss']:.3f}", refresh=False)

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.bar is not None:
                self.bar.update(state.global_step - self.bar.n)

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self.bar is not None:
                self.bar.close()

    return Progress()


def _train(phase: str, trainer: Any, phase_dir: Path) -> PhaseResult:
    trainer.add_callback(_progress_callback(phase))
    last = _last_checkpoint(phase_dir)
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=last)
    wall = time.perf_counter() - t0
    if trainer.state.global_step < trainer.state.max_steps:
        raise TrainingInterrupted(phase, trainer.state.global_step, trainer.state.max_steps)
    final = _finish(trainer, phase_dir)
    resumed = int(Path(last).name.split("-")[-1]) if last else None
    return PhaseResult(phase, final, list(trainer.state.log_history), wall, resumed)


class TrainingInterrupted(RuntimeError):
    """A phase stopped before its last step (its checkpoints stay; a rerun resumes)."""

    def __init__(self, phase: str, step: int, of: int) -> None:
        super().__init__(f"{phase} stopped at step {step} of {of}; run again to resume")
        self.phase, self.step, self.of = phase, step, of


def answer_reward(items: dict[str, Example]) -> Any:
    """GRPO's reward: 1 when the reply parses under its request's format and names the
    oracle's answer, else 0 (an unparsed reply earns nothing)."""

    def reward(completions: list[Any], item_id: list[str], **_: Any) -> list[float]:
        out = []
        for c, iid in zip(completions, item_id, strict=True):
            text = c[-1]["content"] if isinstance(c, list) else str(c)
            out.append(1.0 if reply_answer(text) == items[iid].gold else 0.0)
        return out

    reward.__name__ = "oracle_answer"
    return reward


#: the keys of a direct reply and of a traced one (reasoning first)
DIRECT_KEYS, TRACED_KEYS = frozenset({"answer"}), frozenset({"reasoning", "answer"})


def reply_answer(text: str, keys: frozenset[str] = DIRECT_KEYS) -> str | None:
    """The ``answer`` of a reply, or None if it is not a JSON object of exactly ``keys``."""
    try:
        value = json.loads(text.strip())
    except ValueError:
        return None
    if not isinstance(value, dict) or set(value) != keys:
        return None
    return str(value["answer"])


def run_grpo(
    items: Sequence[Example],
    heldout: Sequence[Example],
    start: str | os.PathLike[str],
    settings: TrainParams,
    work: str | os.PathLike[str],
    *,
    callbacks: Sequence[Any] = (),
) -> PhaseResult:
    """GRPO from the adapter at ``start`` on direct-answer prompts, rewarded by the oracle's
    answer (:func:`answer_reward`), resuming from the last checkpoint under ``work/grpo``."""
    from datasets import Dataset
    from peft import PeftModel
    from trl import GRPOConfig, GRPOTrainer

    phase_dir = Path(work) / GRPO
    done = _cached(GRPO, phase_dir)
    if done is not None:
        return done
    g = settings.grpo
    base, tok = load_base(settings.threads)
    model = PeftModel.from_pretrained(base, str(start), is_trainable=True)
    rows = [{"prompt": r["prompt"], "item_id": r["item_id"]} for r in (e.row() for e in items)]
    args = GRPOConfig(
        max_steps=g.steps, per_device_train_batch_size=g.prompts_per_step * g.generations,
        num_generations=g.generations, learning_rate=g.lr, beta=g.beta,
        temperature=g.temperature, max_completion_length=g.max_completion_tokens,
        **_run_args(settings, phase_dir),
    )
    trainer = GRPOTrainer(
        model=model, reward_funcs=answer_reward({e.item_id: e for e in items}), args=args,
        train_dataset=Dataset.from_list(rows), processing_class=tok,
        callbacks=[_heldout_callback(GRPO, heldout, tok, settings.heldout_every,
                                     at_start=False),  # the SFT adapter was measured
                   *callbacks],
    )
    return _train(GRPO, trainer, phase_dir)


def option_accuracy(model: Any, tok: Any, examples: Sequence[Example]) -> float:
    """Share of direct-answer examples whose gold label :func:`option_picks` picks."""
    return _share_right(option_picks, model, tok, examples)


def open_accuracy(model: Any, tok: Any, examples: Sequence[Example]) -> float:
    """Share of open examples (options in ``meta["options"]``) whose gold :func:`open_picks`
    picks."""
    return _share_right(open_picks, model, tok, examples)


def _share_right(pick: Any, model: Any, tok: Any, examples: Sequence[Example]) -> float:
    return _mean(_right(pick, model, tok, examples))


def _right(pick: Any, model: Any, tok: Any, examples: Sequence[Example]) -> list[bool]:
    """Whether ``pick`` picks each example's gold."""
    if not examples:
        return []
    picks = pick(model, tok, examples)
    return [p == e.gold for p, e in zip(picks, examples, strict=True)]


def _false_beliefs(right: Sequence[bool], examples: Sequence[Example]) -> float:
    return _mean([r for r, e in zip(right, examples, strict=True) if e.meta.get("false_belief")])


def _mean(right: Sequence[bool]) -> float:
    return sum(right) / len(right) if right else float("nan")


def _prompt_ids(tok: Any, e: Example) -> list[int]:
    """The token ids of ``e``'s messages in the chat template, up to the reply."""
    text = tok.apply_chat_template([{"role": m.role, "content": m.content} for m in e.messages],
                                   tokenize=False, add_generation_prompt=True)
    return tok(text, add_special_tokens=False)["input_ids"]


def open_picks(model: Any, tok: Any, examples: Sequence[Example]) -> list[str]:
    """For each open direct-answer example, the option whose whole reply
    ``{"answer":"<option>"}`` the model finds most likely (summed log-probability): the
    place it would name, were it limited to the story's options. The prompt is read once
    and its cache shared by the option replies."""
    import torch

    was_training = model.training
    model.eval()
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    picks: list[str] = []
    with torch.no_grad():
        for e in examples:
            options = list(e.meta.get("options") or ())
            if e.labels or not options:
                raise ValueError(f"{e.item_id}: not an open direct answer with its options")
            prompt = _prompt_ids(tok, e)
            replies = [tok(json.dumps({"answer": o}, separators=(",", ":"), ensure_ascii=False)
                           + tok.eos_token, add_special_tokens=False)["input_ids"]
                       for o in options]
            out = model(input_ids=torch.tensor([prompt]), use_cache=True)
            first = out.logits[0, -1].float().log_softmax(-1)
            cache = out.past_key_values
            cache.batch_repeat_interleave(len(replies))
            width = max(len(r) for r in replies)
            ids = torch.tensor([r + [pad] * (width - len(r)) for r in replies])
            mask = torch.tensor([[1] * len(prompt) + [1] * len(r) + [0] * (width - len(r))
                                 for r in replies])
            logp = model(input_ids=ids, attention_mask=mask, past_key_values=cache,
                         use_cache=False).logits.float().log_softmax(-1)
            scores = [float(first[r[0]]) + sum(float(logp[j, i - 1, t])
                                               for i, t in enumerate(r) if i)
                      for j, r in enumerate(replies)]
            picks.append(options[max(range(len(options)), key=scores.__getitem__)])
    if was_training:
        model.train()
    return picks


def traced_picks(model: Any, tok: Any, examples: Sequence[Example]) -> list[str | None]:
    """The answer of each traced example's greedy reply (:func:`traced_replies`), or None
    when the reply is not the traced reply's JSON object."""
    return [reply_answer(text, TRACED_KEYS)
            for text in traced_replies(model, tok, examples)]


def traced_replies(model: Any, tok: Any, examples: Sequence[Example], batch_size: int = 8,
                   max_tokens: int = TRACE_TOKENS) -> list[str]:
    """Each example's greedy reply, unconstrained, up to ``max_tokens`` tokens (a traced
    reply thinks first, so the answer cannot be scored from one token)."""
    import torch

    was_training = model.training
    model.eval()
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    replies: list[str] = []
    with torch.no_grad():
        for start in range(0, len(examples), batch_size):
            prompts = [_prompt_ids(tok, e) for e in examples[start:start + batch_size]]
            width = max(len(p) for p in prompts)
            ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
            out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                 max_new_tokens=max_tokens, pad_token_id=pad)
            replies += [tok.decode(row, skip_special_tokens=True) for row in out[:, width:]]
    if was_training:
        model.train()
    return replies


def option_picks(model: Any, tok: Any, examples: Sequence[Example],
                 batch_size: int = 8) -> list[str]:
    """The label a greedy constrained decoder picks for each direct-answer example: the
    reply ``{"answer":"X"}`` is forced up to the label, the label is the only free token,
    and the rest is forced again, so the pick is the most likely label token after the
    forced prefix (one forward pass per example)."""
    import torch

    was_training = model.training
    model.eval()
    rows: list[tuple[list[int], list[int], list[str]]] = []  # ids, label token ids, labels
    for e in examples:
        if not e.labels:
            raise ValueError(f"{e.item_id}: not a multiple-choice direct answer")
        replies = [tok(json.dumps({"answer": lab}, separators=(",", ":")) + tok.eos_token,
                       add_special_tokens=False)["input_ids"] for lab in e.labels]
        prefix, label_ids = _free_token(replies)
        rows.append((_prompt_ids(tok, e) + prefix, label_ids, list(e.labels)))
    picks: list[str] = []
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    with torch.no_grad():
        for start in range(0, len(rows), batch_size):
            chunk = rows[start:start + batch_size]
            width = max(len(r[0]) for r in chunk)
            ids = torch.tensor([[pad] * (width - len(r[0])) + r[0] for r in chunk])
            mask = torch.tensor([[0] * (width - len(r[0])) + [1] * len(r[0]) for r in chunk])
            pos = (mask.cumsum(-1) - 1).clamp(min=0)
            last = model(input_ids=ids, attention_mask=mask, position_ids=pos).logits[:, -1]
            for _, label_ids, labels in chunk:
                picks.append(labels[int(last[len(picks) - start, label_ids].argmax())])
    if was_training:
        model.train()
    return picks


def _free_token(replies: Sequence[list[int]]) -> tuple[list[int], list[int]]:
    """The shared prefix of the option replies and the one token where they differ."""
    first = replies[0]
    n = 0
    while all(len(r) > n and r[n] == first[n] for r in replies):
        n += 1
    if any(len(r) != len(first) or r[n + 1:] != first[n + 1:] for r in replies):
        raise ValueError("option replies differ in more than one token")
    return first[:n], [r[n] for r in replies]
