"""The grounded reader (CogRSI §4.1, §5.1, Appendix G.6, Proposition 3).

Per question: one perception call labels every line with its witnesses; six samples at
temperature 0.7, four reading the annotated view (for a conversation, the questioned
character's view) and two the plain one; a vote; and, when the two readings' majorities
conflict or the vote splits closely, one arbitration call that picks between the two leading
answers under the principle P. An answer held by five or six samples is never overturned.
A malformed perception reply falls back to plain reading (all six samples read the plain
view) and is counted. Each question's calls are one flow (:mod:`cogrsi_lib.llm.flow`): a
question's samples go out as soon as its perception is back, whatever the other questions
are doing, so a batched engine sees all ready work at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.flow import Flow
from cogrsi_lib.llm.types import Completion, Request, SamplingParams
from cogrsi_lib.reader import prompts
from cogrsi_lib.reader.gold import gold_perception
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.perception import (
    PerceptionResult,
    parse_perception,
    perception_request,
)
from cogrsi_lib.reader.principles import principle_id, resolve_principle
from cogrsi_lib.reader.records import ArbitrationRecord, ItemRecord, PerceptionRecord, new_record
from cogrsi_lib.reader.system import FlowSystem, SamplingConfig, parse_samples
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
    # the arbiter is told only to pick the right candidate given the story, without the
    # principle (G.6, Table 12's neutral arbiter); the samples keep theirs
    neutral_arbiter: bool = False
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


def perceive(item: ReaderItem, cfg: SamplingConfig, rec: ItemRecord) -> Flow[PerceptionResult]:
    """The perception step of a flow (``yield from``): one call, or with ``perceivers: gold``
    the item's gold perceivers and no call (:mod:`cogrsi_lib.reader.gold`). Its completions
    go to the record's ledger and its outcome to ``rec.perception``."""
    if cfg.perceivers == "gold":
        gold = gold_perception(item)
        rec.perception = PerceptionRecord("gold", "gold perceivers", gold.witnesses)
        return PerceptionResult("ok", gold, "gold perceivers")
    req = perception_request(item, max_tokens=cfg.perception_max_tokens, seed=cfg.seed,
                             structured=cfg.structured)
    [cs] = yield [req]
    result = parse_perception(cs[0].text, item, req.reply)
    rec.ledger.add("perception", cs)
    rec.perception = perception_record(result, cs[0])
    return result


class GroundedReader(FlowSystem):
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

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        """One item's calls: perception, then the annotated and plain samples (one step),
        the vote, arbitration where the vote calls for it, the final answer."""
        cfg = self.config
        rec = new_record(self.name, item, principle_id(self.principle))
        rec.extra["prompt_version"] = prompts.PROMPT_VERSION
        rec.extra["structured"] = cfg.structured
        view: str | None = None  # the grounded view; None without one
        if cfg.use_perception and cfg.n_annotated > 0:
            res = yield from perceive(item, cfg, rec)
            if res.perception is not None:
                view = reading_view(item, res.perception,
                                    filtered_conversation=cfg.conversation_view == "filtered")
        else:
            rec.perception = PerceptionRecord("none", "perception disabled")
        requests, layout = self._sample_requests(item, view)
        outs = yield requests
        outcome = self._vote(item, rec, requests, outs, layout)
        choice = None
        if outcome.arbitrate:
            assert outcome.candidates is not None
            req = self._arbitration_request(item, view, outcome.candidates)
            [cs] = yield [req]
            choice = self._read_arbitration(rec, outcome, req, cs)
        else:
            rec.arbitration = ArbitrationRecord(ran=False, reason=outcome.reason)
        final = settle(outcome, choice)
        rec.answer = final
        rec.answer_text = item.option_text(final)
        rec.status = "ok" if final is not None else "unparsed"
        rec.vote = vote_dict(outcome)
        return rec

    def _sample_requests(self, item: ReaderItem, view: str | None
                         ) -> tuple[list[Request], tuple[bool, bool]]:
        """The samples' requests: the annotated samples on the grounded view (none without
        one) and the plain samples, which make up the rest; and which of the two there are."""
        cfg, P = self.config, self.principle
        plain_p = P if cfg.principle_in_plain else ""
        n_ann = cfg.n_annotated if view is not None else 0
        n_plain = cfg.n_plain + (cfg.n_annotated - n_ann)
        requests: list[Request] = []
        if n_ann:
            requests.append(prompts.answer_request(
                item, view or "", self._sampling(n_ann),
                think=prompts.THINK_GROUNDED, principle=P, structured=cfg.structured,
            ))
        if n_plain:
            requests.append(prompts.answer_request(
                item, plain_view(item), self._sampling(n_plain), think=prompts.THINK_PLAIN,
                principle=plain_p, structured=cfg.structured,
            ))
        return requests, (bool(n_ann), bool(n_plain))

    def _vote(self, item: ReaderItem, rec: ItemRecord, requests: Sequence[Request],
              outs: Sequence[Sequence[Completion]], layout: tuple[bool, bool]) -> VoteOutcome:
        """The samples parsed into the record and the vote over them."""
        cfg = self.config
        has_ann, has_plain = layout
        s_ann, a_ann = ([], [])
        if has_ann:
            s_ann, a_ann = parse_samples(item, "annotated", requests[0], outs[0],
                                         rec.ledger, "sample")
        s_pl, a_pl = ([], [])
        if has_plain:
            s_pl, a_pl = parse_samples(item, "plain", requests[-1], outs[-1],
                                       rec.ledger, "sample")
        rec.samples = s_ann + s_pl
        outcome = decide(
            a_ann,
            a_pl,
            supermajority=cfg.supermajority,
            close_margin=cfg.close_margin,
            close_split=item.kind in cfg.close_split_kinds,
        )
        if not cfg.arbitration and outcome.arbitrate:
            outcome = _no_arbitration(outcome)
        rec.extra["views"] = {"annotated": len(a_ann), "plain": len(a_pl)}
        return outcome

    def _arbitration_request(self, item: ReaderItem, view: str | None,
                             candidates: Sequence[str]) -> Request:
        cfg = self.config
        return prompts.arbitration_request(
            item, view or plain_view(item), candidates,
            "" if cfg.neutral_arbiter else self.principle,
            SamplingParams(
                n=1,
                temperature=cfg.arbitration_temperature,
                top_p=cfg.top_p,
                max_tokens=cfg.arbitration_max_tokens,
                seed=cfg.seed_for(cfg.arbitration_temperature),
            ),
            cfg.structured,
        )

    def _read_arbitration(self, rec: ItemRecord, o: VoteOutcome, req: Request,
                          cs: Sequence[Completion]) -> str | None:
        """The arbitrated choice (None when the reply is unparsed), recorded."""
        assert o.candidates is not None
        rec.ledger.add("arbitration", cs)
        parsed = prompts.read_choice(req.reply, cs[0].text)
        choice = o.candidates[int(parsed.value) - 1] if parsed.ok and parsed.value else None
        rec.arbitration = ArbitrationRecord(
            ran=True,
            reason=o.reason,
            candidates=o.candidates,
            choice=choice,
            status=parsed.status,
            text=cs[0].text,
            from_cache=cs[0].from_cache,
        )
        return choice


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
