"""LoRA training of the embedded model, for real on a tiny setting: exact resume after an
interruption, reuse of a finished phase, GRPO's reward, and the trained adapter served by the
embedded backend agreeing with the model it was trained as.

The module trains once (:func:`run`: 4 SFT steps, checkpointed every 2, then one GRPO step);
the tests that need a straight run, a finished phase or a trained adapter share it."""

from __future__ import annotations

import pytest

from cogrsi_lib.stage_params import load
from cogrsi_lib.train import trainer
from cogrsi_lib.train.stage import save_adapter, train, training_set
from cogrsi_lib.train.trainer import TrainingInterrupted, reply_answer, run_grpo, run_sft

pytestmark = pytest.mark.usefixtures("embedded_model")  # skips without the model


def tiny(**over):
    base = {"n_worlds": 8, "n_examples": 6, "mix": {"answer.plain": 1.0}, "n_heldout": 3,
            "n_grpo": 2, "sft": {"steps": 4, "batch_size": 2, "max_length": 512,
                                 "bf16": True, "group_by_length": True},
            "grpo": {"steps": 1, "prompts_per_step": 1, "generations": 2},
            "checkpoint_every": 2, "heldout_every": 2, "threads": 2}
    return load("train", {**base, **over})


@pytest.fixture(scope="module")
def data():
    return training_set(tiny())


@pytest.fixture(scope="module")
def run(data, tmp_path_factory):
    """The module's one training run, straight through: SFT, then GRPO."""
    return train(tiny(), data, tmp_path_factory.mktemp("train"))


@pytest.fixture(scope="module")
def base():
    """The base model and tokenizer as training loads them (tests that change the model
    copy it first)."""
    return trainer.load_base()


def adapter_tensors(path):
    from safetensors.torch import load_file

    return load_file(str(path / "adapter_model.safetensors"))


def stop_at(step):
    from transformers import TrainerCallback

    class Stop(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step == step:
                control.should_training_stop = True

    return Stop()


def test_an_interrupted_run_resumes_exactly_and_a_finished_one_is_reused(data, run, tmp_path):
    import torch

    p = tiny()
    straight = run.phases[0]
    with pytest.raises(TrainingInterrupted, match="step 2 of 4"):
        run_sft(data.examples, data.heldout, p, tmp_path / "cut", callbacks=[stop_at(2)])
    assert (tmp_path / "cut" / "sft" / "checkpoint-2").is_dir()
    resumed = run_sft(data.examples, data.heldout, p, tmp_path / "cut")
    assert resumed.resumed_from == 2 and straight.resumed_from is None
    a, b = adapter_tensors(straight.adapter), adapter_tensors(resumed.adapter)
    assert a.keys() == b.keys() and len(a) > 0
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k
    losses = [h["loss"] for h in resumed.history if "loss" in h]
    assert losses == pytest.approx([h["loss"] for h in straight.history if "loss" in h])
    assert len(losses) == 4
    held = [h["step"] for h in resumed.history if "heldout_accuracy" in h]
    assert held == [0, 2, 4]
    again = run_sft(data.examples, data.heldout, p, tmp_path / "cut")
    assert again.cached and again.adapter == resumed.adapter


def test_the_reply_only_loss_and_gradient_are_trls(data, tmp_path):
    """Projecting only the reply positions gives trl's own loss and the same gradient."""
    from trl import SFTTrainer

    t = trainer.sft_trainer(data.examples, (), tiny(), tmp_path)
    batch = next(iter(t.get_train_dataloader()))
    labels = batch["labels"]
    assert 0 < int((labels != -100).sum()) < labels.numel() // 4  # replies are short

    def loss_and_grads(compute):
        t.model.zero_grad()
        loss = compute(t, t.model, dict(batch))
        loss.backward()
        return loss.item(), {n: q.grad.clone() for n, q in t.model.named_parameters()
                             if q.requires_grad}

    ours, g_ours = loss_and_grads(type(t).compute_loss)
    theirs, g_theirs = loss_and_grads(SFTTrainer.compute_loss)
    assert ours == pytest.approx(theirs, rel=1e-5) and ours > 0
    assert g_ours.keys() == g_theirs.keys()
    for n in g_ours:
        assert torch_close(g_ours[n], g_theirs[n]), n


def torch_close(a, b):
    """Equal up to float32 summation order: relative error of the whole tensor."""
    return float((a - b).norm()) <= 1e-3 * float(b.norm()) + 1e-9


def test_grpo_rewards_the_oracle_answer_and_the_stage_saves_the_adapter(data, run, tmp_path):
    result = run
    assert [ph.phase for ph in result.phases] == ["sft", "grpo"]
    rewards = [h["reward"] for h in result.phases[1].history if "reward" in h]
    assert len(rewards) == 1 and 0.0 <= rewards[0] <= 1.0
    saved = save_adapter(result, tmp_path / "out" / "adapter")
    assert trainer.is_adapter(saved) and (saved / "cogrsi-train.json").is_file()
    hist = result.history()
    assert set(hist["phase"]) == {"sft", "grpo"}
    grpo_steps = hist.filter(hist["phase"] == "grpo")["global_step"]
    # GRPO's one step continues SFT's 4; its start, SFT's end, is not measured twice
    assert grpo_steps.to_list() == [5] * len(grpo_steps)
    measured = hist.filter(hist["heldout_accuracy"].is_not_null())
    assert measured["global_step"].to_list() == [0, 2, 4, 5]
    assert measured["heldout_open_accuracy"].is_between(0, 1).all()
    # the open accuracy on false beliefs alone: measured when the held-out set has some
    false = [e for e in data.heldout if not e.labels and e.meta.get("false_belief")]
    fb = measured["heldout_open_false_belief_accuracy"]
    assert fb.is_between(0, 1).all() if false else fb.is_nan().all()
    with pytest.raises(TrainingInterrupted):
        run_grpo(data.grpo, data.heldout, result.phases[0].adapter, tiny(grpo={"steps": 2}),
                 tmp_path / "g", callbacks=[stop_at(1)])


def test_reward_reads_only_the_exact_reply():
    assert reply_answer('{"answer":"B"}') == "B"
    assert reply_answer(' {"answer": "C"} ') == "C"
    assert reply_answer('{"answer":"B","why":"x"}') is None
    assert reply_answer("B") is None and reply_answer("[1]") is None
    items = {"i": type("E", (), {"gold": "B"})()}
    reward = trainer.answer_reward(items)
    assert reward(['{"answer":"B"}', '{"answer":"A"}', "B"], ["i", "i", "i"]) == [1.0, 0.0, 0.0]


def test_option_picks_are_what_the_constrained_decoder_answers(data, run, base, embedded_model):
    """Held-out scoring predicts the backend's greedy constrained answers, for the base and
    for the trained adapter merged into the GGUF model."""
    import copy

    from peft import PeftModel

    from cogrsi_lib.llm.embedded import EmbeddedBackend
    from cogrsi_lib.llm.types import Request, SamplingParams
    from cogrsi_lib.reader import prompts

    result = run.phases[0]  # the SFT adapter
    examples = [e for e in data.heldout if e.labels] + list(data.grpo)
    # the same messages, with the reply format their labels declare
    requests = [Request(e.messages, SamplingParams(max_tokens=32, temperature=0.0),
                        prompts.answer_format(_item(e.labels), prompts.THINK_NONE, 32), True)
                for e in examples]

    def answers(backend):
        return [reply_answer(cs[0].text) for cs in backend.generate(requests)]

    model, tok = base
    assert answers(embedded_model) == trainer.option_picks(model, tok, examples)
    tuned = EmbeddedBackend(adapter=result.adapter, max_batch=8)
    assert "+lora:" in tuned.model and tuned.identity != embedded_model.identity
    peft_model = PeftModel.from_pretrained(copy.deepcopy(model), str(result.adapter))
    assert answers(tuned) == trainer.option_picks(peft_model, tok, examples)


def test_open_picks_name_the_most_likely_option_reply(data, base):
    """Scoring the options' replies on a shared prompt cache, padded, agrees with scoring
    each option's whole reply alone; an example asked by label is refused."""
    import json

    import torch

    model, tok = base
    named = [e for e in data.heldout if not e.labels]
    assert named and all(e.gold in e.meta["options"] for e in named)
    # replies of different lengths, so the padding of the shared-cache batch is exercised
    assert any(len({len(tok(o)["input_ids"]) for o in e.meta["options"]}) > 1 for e in named)

    def alone(e, option):
        prompt = tok.apply_chat_template([{"role": m.role, "content": m.content}
                                          for m in e.messages],
                                         tokenize=False, add_generation_prompt=True)
        p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
        r_ids = tok(json.dumps({"answer": option}, separators=(",", ":")) + tok.eos_token,
                    add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([p_ids + r_ids])).logits[0].float()
        logp = logits.log_softmax(-1)
        return sum(float(logp[len(p_ids) + i - 1, t]) for i, t in enumerate(r_ids))

    expected = [max(e.meta["options"], key=lambda o, e=e: alone(e, o)) for e in named]
    assert trainer.open_picks(model, tok, named) == expected
    acc = trainer.open_accuracy(model, tok, named)
    assert acc == sum(x == e.gold for x, e in zip(expected, named, strict=True)) / len(named)
    with pytest.raises(ValueError, match="not an open direct answer"):
        trainer.open_picks(model, tok, [e for e in data.heldout if e.labels])


def _item(labels):
    from cogrsi_lib.reader.items import ReaderItem

    return ReaderItem("x", "story", "q?", tuple(f"o{k}" for k in range(len(labels))), "o0")


def test_a_folder_without_an_adapter_is_refused(tmp_path):
    from cogrsi_lib.llm.config import build_backend

    with pytest.raises(FileNotFoundError, match="not a LoRA adapter folder"):
        build_backend({"backend": "embedded", "adapter": str(tmp_path)})
    pytest.importorskip("vllm")
    with pytest.raises(FileNotFoundError, match="not a LoRA adapter folder"):
        build_backend({"backend": "vllm", "adapter": str(tmp_path)})
    with pytest.raises(ValueError, match="unknown key 'llm.adapter'"):
        build_backend({"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                       "adapter": str(tmp_path)})


def test_traced_replies_batched_are_the_replies_one_at_a_time(base):
    """Greedy traced replies generated in a left-padded batch equal each reply generated
    alone; the answer is read only from the exact traced object."""
    from cogrsi_lib.train.examples import oracle_items, traceable, traced_example

    traced = [traced_example(it) for it in oracle_items(12, 4) if traceable(it)][:3]
    assert len(traced) == 3 and len({len(e.messages[-1].content) for e in traced}) > 1
    model, tok = base
    batched = trainer.traced_replies(model, tok, traced, batch_size=3, max_tokens=24)
    alone = [trainer.traced_replies(model, tok, [e], batch_size=1, max_tokens=24)[0]
             for e in traced]
    assert batched == alone and all(batched)
    traced_keys = trainer.TRACED_KEYS
    assert reply_answer('{"reasoning":"3 box seen","answer":"box"}', traced_keys) == "box"
    assert reply_answer('{"answer":"box"}', traced_keys) is None
    assert reply_answer('{"reasoning":"3 box seen","answer":"box"}') is None
    assert reply_answer("box", traced_keys) is None
