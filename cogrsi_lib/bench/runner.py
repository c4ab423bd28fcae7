"""Ask a model a benchmark under its ``official`` protocol (CogRSI §3, App. E.3).

The release's prompt of every view of every item goes to a backend as free text (greedy,
as the releases decode); the replies are scored by the protocol and kept per view, so a
user can see exactly what the release's rule read.  The ``uniform`` protocol is what the
reader and its baselines run (:mod:`cogrsi_lib.reader.evaluate`); an official protocol
whose release prompt is not reproduced has no prompt here and is refused.
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
from cogrsi_lib.llm.types import Request
from cogrsi_lib.progress import progress

__all__ = ["OfficialRun", "ask_official"]


@dataclass(frozen=True)
class OfficialRun:
    """Replies per view and the evaluation under the official protocol."""

    evaluation: Evaluation
    views: pl.DataFrame  # one row per view: id, view, prompt, reply, finish_reason, tokens


def ask_official(name: str, items: Sequence[Item], backend: Backend, max_tokens: int = 64,
                 batch_size: int = 64) -> OfficialRun:
    """Every item of benchmark ``name`` asked as its release asks it; scored by its rule."""
    proto = get(name).protocol("official")
    if proto.prompt is None:
        raise ValueError(f"{get(name).title}: the release's prompt is not reproduced here; "
                         "run the uniform protocol (the reader's systems) instead")
    views = [(it, v) for it in items for v in proto.present(it)]
    requests = [Request.of(proto.prompt(v), max_tokens=max_tokens, temperature=0.0)
                for _, v in views]
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
        "completion_tokens": [c.completion_tokens for c in completions],
    })
    return OfficialRun(evaluate(name, items, replies, protocol="official"), rows)
