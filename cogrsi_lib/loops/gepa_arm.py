"""GEPA on the reader's principle slot (CogRSI §5 baselines, App. C.2 "Loop settings").

"GEPA optimises the same slot from an empty seed, with the reader as its metric, the reader's
failures with gold answers as its reflective data, and 10,240 reader evaluations; it selects on
its own validation split of development questions." :class:`ReaderGEPAAdapter` implements
GEPA's adapter protocol (``gepa.core.adapter.GEPAAdapter``: ``evaluate`` a batch under a
candidate, ``make_reflective_dataset`` from the results) over a
:class:`~cogrsi_lib.loops.slot.Scorer`, with one component, ``principle``; the reflection
model is the backbone behind the same :class:`~cogrsi_lib.llm.backend.Backend`. The ``gepa``
package is a dependency of cogrsi (``pip install -e .`` brings it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import CHARS_PER_TOKEN, ReplyFormat
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.loops.slot import Scorer
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.prompts import options_block

COMPONENT = "principle"


def gepa_available() -> tuple[bool, str]:
    try:
        import gepa  # noqa: F401
    except ImportError as err:
        return False, f"the gepa package is not installed ({err}); pip install 'gepa>=0.1.4,<0.2'"
    return True, ""


class ReaderGEPAAdapter:
    """GEPA's adapter over the principle slot: score 1 for a right answer, 0 otherwise."""

    propose_new_texts = None  # GEPA's own reflective proposer writes the new text

    def __init__(self, scorer: Scorer, max_examples: int = 8) -> None:
        self.scorer = scorer
        self.max_examples = max_examples
        self.evaluations = 0  # reader evaluations requested by GEPA

    def evaluate(self, batch: list[ReaderItem], candidate: dict[str, str],
                 capture_traces: bool = False) -> Any:
        from gepa import EvaluationBatch

        principle = candidate.get(COMPONENT, "")
        recs = self.scorer.answer(principle, batch)
        self.evaluations += len(batch)
        scores = [1.0 if r.correct else 0.0 for r in recs]
        outputs = [{"item_id": it.item_id, "answer": r.answer_text} for it, r in
                   zip(batch, recs, strict=True)]
        traces = None
        if capture_traces:
            traces = [{"item": it, "answer": r.answer_text,
                       "gold": it.option_text(it.gold_key()), "correct": bool(r.correct)}
                      for it, r in zip(batch, recs, strict=True)]
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=traces)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Any,
                                components_to_update: list[str]
                                ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """The reader's failures with gold answers (all examples when none failed)."""
        traces = list(eval_batch.trajectories or [])
        shown = [t for t in traces if not t["correct"]] or traces
        records = []
        for t in shown[: self.max_examples]:
            it: ReaderItem = t["item"]
            inputs = {"story": it.context, "question": it.question}
            ob = options_block(it)
            if ob:
                inputs["options"] = ob
            feedback = ("Correct." if t["correct"] else
                        f"Wrong. The correct answer is {t['gold']}.")
            records.append({"Inputs": inputs,
                            "Generated Outputs": t["answer"] or "(no answer it could parse)",
                            "Feedback": feedback})
        return {name: records for name in components_to_update}


REFLECTION_FAMILY = prompt_family("loops.gepa.reflection", "regex")


def reflection_format(max_tokens: int) -> ReplyFormat:
    """GEPA's own reply protocol (its proposer reads the text between triple backticks):
    one fenced block and nothing else, its text bounded to fit ``max_tokens``."""
    most = max(16, CHARS_PER_TOKEN * max_tokens - 10)
    return ReplyFormat.regex(REFLECTION_FAMILY, f"```\n[^`]{{1,{most}}}\n```")


@family_example(REFLECTION_FAMILY)
def _reflection_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): GEPA's reflection prompt
    with an empty instruction."""
    prompt = ("I provided an assistant with the following instructions to perform a task for "
              "me:\n```\n\n```\nWrite a new instruction for the assistant. Provide the new "
              "instructions within ``` blocks.")
    return Request((Message("user", prompt),), SamplingParams(max_tokens=128),
                   reflection_format(128))


class BackendLM:
    """GEPA's reflection model: ``prompt -> text`` through a :class:`Backend`."""

    def __init__(self, backend: Backend, *, temperature: float = 0.7, max_tokens: int = 2048,
                 seed: int = 0, structured: bool = True) -> None:
        self.backend = backend
        self.params = SamplingParams(n=1, temperature=temperature, max_tokens=max_tokens,
                                     seed=seed)
        self.format = reflection_format(max_tokens)
        self.structured = structured
        self.calls = 0

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        if isinstance(prompt, str):
            messages: tuple[Message, ...] = (Message("user", prompt),)
        else:
            messages = tuple(Message(m["role"], m["content"] if isinstance(m["content"], str)
                                     else " ".join(p.get("text", "") for p in m["content"]))
                             for m in prompt)
        self.calls += 1
        req = Request(messages, self.params, self.format, self.structured)
        return self.backend.generate([req])[0][0].text


class _Quiet:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, message: str) -> None:
        self.lines.append(str(message))


@dataclass
class GEPAOutcome:
    principle: str
    metric_calls: int
    candidates: pl.DataFrame
    reflection_calls: int
    log: list[str]


def run_gepa(scorer: Scorer, backend: Backend, trainset: Sequence[ReaderItem],
             valset: Sequence[ReaderItem], *, budget: int, seed: int = 0,
             run_dir: str | Path | None = None, minibatch_size: int = 3,
             reflection_max_tokens: int = 2048, structured: bool = True) -> GEPAOutcome:
    """Optimise the principle from an empty seed within ``budget`` reader evaluations."""
    ok, why = gepa_available()
    if not ok:
        raise ImportError(why)
    import gepa

    adapter = ReaderGEPAAdapter(scorer)
    lm = BackendLM(backend, max_tokens=reflection_max_tokens, seed=seed, structured=structured)
    logger = _Quiet()
    result = gepa.optimize(
        seed_candidate={COMPONENT: ""}, trainset=list(trainset), valset=list(valset),
        adapter=adapter, reflection_lm=lm, max_metric_calls=budget, seed=seed,
        reflection_minibatch_size=minibatch_size, logger=logger,
        run_dir=str(run_dir) if run_dir is not None else None, display_progress_bar=False,
        raise_on_exception=True)
    rows = []
    for i, cand in enumerate(result.candidates):
        text = cand.get(COMPONENT, "")
        parents = [p for p in result.parents[i] if p is not None]
        rows.append({"candidate": i, "parent": parents[0] if parents else None,
                     "val_score": 100.0 * float(result.val_aggregate_scores[i]),
                     "discovered_at_calls": int(result.discovery_eval_counts[i]),
                     "words": len(text.split()), "principle": text,
                     "best": i == result.best_idx})
    cands = pl.DataFrame(rows, schema={"candidate": pl.Int64, "parent": pl.Int64,
                                       "val_score": pl.Float64,
                                       "discovered_at_calls": pl.Int64, "words": pl.Int64,
                                       "principle": pl.Utf8, "best": pl.Boolean})
    best = result.candidates[result.best_idx].get(COMPONENT, "")
    return GEPAOutcome(best, int(result.total_metric_calls or adapter.evaluations), cands,
                       lm.calls, logger.lines)
