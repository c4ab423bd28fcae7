"""Ask a model a benchmark under its ``official`` protocol (CogRSI §3, App. E.3).

The release's prompt of every view of every item goes to a backend (greedy); the replies are
scored by the protocol and kept per view, so a user can see exactly what the release's rule
read.  Replies are free text as in the releases, or, with ``structured=True``, held while
decoding to the form the released prompt asks for (``Protocol.answer``: ``[[X]]``, a listed
label, ...), so that a weak model's replies are read at all; that is a listed deviation.
The ``uniform`` protocol is what the reader and its baselines run
(:mod:`cogrsi_lib.reader.evaluate`); an official protocol whose release prompt is not
reproduced has no prompt here and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from cogrsi_lib.bench.registry import get
from cogrsi_lib.bench.report import Evaluation, evaluate
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.progress import progress

__all__ = ["OfficialRun", "ask_official", "ask_official_all"]


@dataclass(frozen=True)
class OfficialRun:
    """Replies per view and the evaluation under the official protocol."""

    evaluation: Evaluation
    views: pl.DataFrame  # per view: id, view, prompt, reply, finish_reason, structured, tokens


def ask_official(name: str, items: Sequence[Item], backend: Backend, max_tokens: int = 64,
                 batch_size: int = 64, structured: bool = False) -> OfficialRun:
    """Every item of benchmark ``name`` asked as its release asks it; scored by its rule."""
    proto = get(name).protocol("official")
    if proto.prompt is None:
        raise ValueError(f"{get(name).title}: the release's prompt is not reproduced here; "
                         "run the uniform protocol (the reader's systems) instead")
    views = [(it, v) for it in items for v in proto.present(it)]
    requests = [proto.request(v, max_tokens, structured) for _, v in views]
    completions = []
    for start in progress(range(0, len(requests), batch_size), desc=f"{name} official",
                          unit="batch"):
        completions += [cs[0] for cs in backend.generate(requests[start:start + batch_size])]
    replies: dict[str, list[str]] = {}
    for (it, _), c in zip(views, completions, strict=True):
        replies.setdefault(it.id, []).append(c.text)
    rows = pl.DataFrame({
        "id": [it.id for it, _ in views],
        "view": [v.id for _, v in views],
        "prompt": [json.dumps(r.messages_dicts(), ensure_ascii=False) for r in requests],
        "reply": [c.text for c in completions],
        "finish_reason": [c.finish_reason for c in completions],
        "structured": [c.structured for c in completions],
        "completion_tokens": [c.completion_tokens for c in completions],
    })
    return OfficialRun(evaluate(name, items, replies, protocol="official"), rows)


def ask_official_all(loaded: dict[str, Sequence[Item]], backend: Backend, max_tokens: int = 64,
                     batch_size: int = 64, structured: bool = False
                     ) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """:func:`ask_official` on every benchmark of ``loaded`` whose released prompt is
    reproduced: (scores per benchmark beside the best constant reply's score on the same
    items, replies per view, names skipped for want of a prompt)."""
    from cogrsi_lib.bench.report import constant_baselines

    scores, views, skipped = [], [], []
    for name, items in loaded.items():
        if get(name).protocol("official").prompt is None:
            skipped.append(name)
            continue
        run = ask_official(name, items, backend, max_tokens, batch_size, structured)
        ev = run.evaluation
        constants = constant_baselines(name, items, protocol="official")
        best = constants.filter(pl.col("metric") == "score")
        scores.append({"benchmark": name, "protocol": "official", "questions": len(items),
                       "asks": run.views.height, "score": ev.summary["score"],
                       "malformed": int(ev.records["malformed"].sum()),
                       "best_constant": best["score"][0] if best.height else None})
        views.append(run.views.with_columns(benchmark=pl.lit(name)))
    table = pl.DataFrame(scores, schema={"benchmark": pl.Utf8, "protocol": pl.Utf8,
                                         "questions": pl.Int64, "asks": pl.Int64,
                                         "score": pl.Float64, "malformed": pl.Int64,
                                         "best_constant": pl.Float64})
    return table, (pl.concat(views) if views else pl.DataFrame()), skipped
