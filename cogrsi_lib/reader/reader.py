"""The grounded reader (CogRSI §4.1, §5.1, Appendix G.6, Proposition 3).

Per question: one perception call labels every line with its witnesses; six samples at
temperature 0.7, four reading the annotated view (for a conversation, the questioned
character's view) and two the plain one; a vote; and, when the two readings' majorities
conflict or the vote splits closely, one arbitration call that picks between the two leading
answers under the principle P. An answer held by five or six samples is never overturned.
A malformed perception reply falls back to plain reading (all six samples read the plain
view) and is counted. A batch runs phase by phase (all perception calls, then all samples,
then all arbitration calls), so a batched engine sees whole batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.types import Completion, Request, SamplingParams
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.perception import (
    PerceptionResult,
    parse_perception,
    perception_request,
)
from cogrsi_lib.reader.principles import principle_id, resolve_principle
from cogrsi_lib.reader.records import ArbitrationRecord, ItemRecord, PerceptionRecord, new_record
from cogrsi_lib.reader.system import SamplingConfig, parse_samples
from cogrsi_lib.reader.views import plain_view, reading_view
from cogrsi_lib.reader.vote import VoteOutcome, decide, settle


class ReaderConfig(SamplingConfig):
    """The reader's fixed choices (§4.1) and the switches its ablations need (G.3, C.3)."""

    n_annotated: int = 4
    n_plain: int = 2
    supermajority: int = 5
    close_margin: int = 1
    close_split_kinds: tuple[str, ...] = ("narrative",)
    arbitration: bool = True
    arbitration_temperature: float = 0.0
    use_perception: bool = True
    principle_in_plain: bool = False
    conversation_view: Literal["marked", "filtered"] = "marked"


def perception_record(result: PerceptionResult, c: Completion) -> PerceptionRecord:
    """The perception outcome for a record; a failed request reads ``malformed`` (the reader
    falls back to plain reading) with the backend's reason."""
    if c.error:
        return PerceptionRecord("malformed", f"request failed: {c.error}", None, c.text,
                                c.from_cache)
    w = result.perception.witnesses if result.perception else None
    return PerceptionRecord(result.status, result.reason, w, c.text, c.from_cache)


def run_perception(
    backend: Backend, items: Sequence[ReaderItem], cfg: SamplingConfig
) -> list[tuple[PerceptionResult, list]]:
    """One perception call per item (batched); results with their completions."""
    reqs = [
        perception_request(
            it, max_tokens=cfg.perception_max_tokens, seed=cfg.seed, structured=cfg.structured,
        )
        for it in items
    ]
    outs = backend.generate(reqs)
    results = []
    for it, r, cs in zip(items, reqs, outs, strict=True):
        results.append((parse_perception(cs[0].text, it, r.reply), cs))
    return results


class GroundedReader:
    """CogRSI's reader: ``answer_batch(items)`` under the principle ``principle``.

    ``principle``: text, or "none"/"expert" (see :mod:`cogrsi_lib.reader.principles`); the
    default is CogRSI's expert principle (§4.1).
    """

    def __init__(
        self,
        backend: Backend,
        principle: str | None = "expert",
        config: ReaderConfig | None = None,
        name: str = "cogrsi",
    ) -> None:
        self.backend = backend
        self.principle = resolve_principle(principle)
        self.config = config or ReaderConfig()
        self.name = name

    def with_principle(self, principle: str | None) -> GroundedReader:
        """The same reader with another P (what the loops vary)."""
        return GroundedReader(self.backend, principle, self.config, self.name)

    def _sampling(self, n: int) -> SamplingParams:
        c = self.config
        return SamplingParams(
            n=n,
            temperature=c.temperature,
            top_p=c.top_p,
            max_tokens=c.sample_max_tokens,
            seed=c.seed_for(c.temperature),
        )

    def answer(self, item: ReaderItem) -> ItemRecord:
        return self.answer_batch([item])[0]

    def answer_batch(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        """One record per item: perception, then the annotated and plain samples (one batch),
        the vote, arbitration where the vote calls for it (one batch), the final answer."""
        recs = self._new_records(items)
        views = self._perceive(items, recs)
        requests, layout = self._sample_requests(items, views)
        outs = self.backend.generate(requests)
        outcomes = self._vote(items, recs, requests, outs, layout)
        choices = self._arbitrate(items, recs, views, outcomes)
        for i, it in enumerate(items):
            o = outcomes[i]
            if recs[i].arbitration is None:
                recs[i].arbitration = ArbitrationRecord(ran=False, reason=o.reason)
            final = settle(o, choices.get(i))
            recs[i].answer = final
            recs[i].answer_text = it.option_text(final)
            recs[i].status = "ok" if final is not None else "unparsed"
            recs[i].vote = vote_dict(o)
        return recs

    def _new_records(self, items: Sequence[ReaderItem]) -> list[ItemRecord]:
        pid = principle_id(self.principle)
        recs = [new_record(self.name, it, pid) for it in items]
        for r in recs:
            r.extra["prompt_version"] = prompts.PROMPT_VERSION
            r.extra["structured"] = self.config.structured
        return recs

    def _perceive(self, items: Sequence[ReaderItem], recs: Sequence[ItemRecord]
                  ) -> list[str | None]:
        """Phase 1, perception (one batch): each item's grounded view, None where there is
        none (perception off or unparsed)."""
        cfg = self.config
        grounded_views: list[str | None] = [None] * len(items)
        if cfg.use_perception and cfg.n_annotated > 0:
            for i, (res, cs) in enumerate(
                run_perception(self.backend, items, cfg)
            ):
                recs[i].ledger.add("perception", cs)
                recs[i].perception = perception_record(res, cs[0])
                if res.perception is not None:
                    grounded_views[i] = reading_view(
                        items[i],
                        res.perception,
                        filtered_conversation=cfg.conversation_view == "filtered",
                    )
        else:
            for r in recs:
                r.perception = PerceptionRecord("none", "perception disabled")
        return grounded_views

    def _sample_requests(self, items: Sequence[ReaderItem], views: Sequence[str | None]
                         ) -> tuple[list[Request], list[tuple[int, int]]]:
        """Phase 2's requests: per item, the annotated samples on its grounded view (none
        without one) and the plain samples, which make up the rest; and per item how many
        requests of each it has (0 or 1)."""
        cfg, P = self.config, self.principle
        requests: list[Request] = []
        layout: list[tuple[int, int]] = []  # per item: (#annotated requests, #plain requests)
        for i, it in enumerate(items):
            plain_p = P if cfg.principle_in_plain else ""
            n_ann = cfg.n_annotated if views[i] is not None else 0
            n_plain = cfg.n_plain + (cfg.n_annotated - n_ann)
            if n_ann:
                requests.append(prompts.answer_request(
                    it, views[i] or "", self._sampling(n_ann),
                    think=prompts.THINK_GROUNDED, principle=P, structured=cfg.structured,
                ))
            if n_plain:
                requests.append(prompts.answer_request(
                    it, plain_view(it), self._sampling(n_plain), think=prompts.THINK_PLAIN,
                    principle=plain_p, structured=cfg.structured,
                ))
            layout.append((int(bool(n_ann)), int(bool(n_plain))))
        return requests, layout

    def _vote(self, items: Sequence[ReaderItem], recs: Sequence[ItemRecord],
              requests: Sequence[Request], outs: Sequence[Sequence[Completion]],
              layout: Sequence[tuple[int, int]]) -> list[VoteOutcome]:
        """Phase 2's samples parsed into each record and the vote over them."""
        cfg = self.config
        outcomes: list[VoteOutcome] = []
        pos = 0
        for i, it in enumerate(items):
            has_ann, has_plain = layout[i]
            s_ann, a_ann = ([], [])
            if has_ann:
                s_ann, a_ann = parse_samples(it, "annotated", requests[pos], outs[pos],
                                             recs[i].ledger, "sample")
            pos += has_ann
            s_pl, a_pl = ([], [])
            if has_plain:
                s_pl, a_pl = parse_samples(it, "plain", requests[pos], outs[pos],
                                           recs[i].ledger, "sample")
            pos += has_plain
            recs[i].samples = s_ann + s_pl
            outcome = decide(
                a_ann,
                a_pl,
                supermajority=cfg.supermajority,
                close_margin=cfg.close_margin,
                close_split=it.kind in cfg.close_split_kinds,
            )
            if not cfg.arbitration and outcome.arbitrate:
                outcome = _no_arbitration(outcome)
            outcomes.append(outcome)
            recs[i].extra["views"] = {"annotated": len(a_ann), "plain": len(a_pl)}
        return outcomes

    def _arbitrate(self, items: Sequence[ReaderItem], recs: Sequence[ItemRecord],
                   views: Sequence[str | None], outcomes: Sequence[VoteOutcome]
                   ) -> dict[int, str | None]:
        """Phase 3, arbitration (one batch) of the items whose vote calls for it: the choice
        per arbitrated item (None when the reply is unparsed), recorded in its record."""
        cfg, P = self.config, self.principle
        need = [i for i, o in enumerate(outcomes) if o.arbitrate]
        arb_reqs = []
        for i in need:
            it, o = items[i], outcomes[i]
            view = views[i] or plain_view(it)
            assert o.candidates is not None
            arb_reqs.append(prompts.arbitration_request(
                it, view, o.candidates, P,
                SamplingParams(
                    n=1,
                    temperature=cfg.arbitration_temperature,
                    top_p=cfg.top_p,
                    max_tokens=cfg.arbitration_max_tokens,
                    seed=cfg.seed_for(cfg.arbitration_temperature),
                ),
                cfg.structured,
            ))
        arb_outs = self.backend.generate(arb_reqs) if arb_reqs else []
        choices: dict[int, str | None] = {}
        for i, req, cs in zip(need, arb_reqs, arb_outs, strict=True):
            recs[i].ledger.add("arbitration", cs)
            o = outcomes[i]
            assert o.candidates is not None
            parsed = prompts.read_choice(req.reply, cs[0].text)
            choice = o.candidates[int(parsed.value) - 1] if parsed.ok and parsed.value else None
            choices[i] = choice
            recs[i].arbitration = ArbitrationRecord(
                ran=True,
                reason=o.reason,
                candidates=o.candidates,
                choice=choice,
                status=parsed.status,
                text=cs[0].text,
                from_cache=cs[0].from_cache,
            )
        return choices


def vote_dict(o: VoteOutcome) -> dict:
    return {
        "counts": [[a, n] for a, n in o.counts],
        "leader": o.leader,
        "annotated_majority": o.annotated_majority,
        "plain_majority": o.plain_majority,
        "reason": o.reason,
        "margin": o.margin,
        "unparsed": o.unparsed,
    }


def _no_arbitration(o: VoteOutcome) -> VoteOutcome:
    from dataclasses import replace

    return replace(o, arbitrate=False, reason=f"{o.reason}_unarbitrated", candidates=None)
