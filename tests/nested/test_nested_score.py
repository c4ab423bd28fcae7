"""Known-answer tests of every scorer metric on hand-made predictions (plan §8, §7, §17)."""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.nested import HEURISTICS, as_replies, oracle_replies, score
from cogrsi_lib.nested.items import NestedItem
from cogrsi_lib.nested.score import brier, depth_auc, slope

from .helpers import small_generation


def _reply(answer: str, confidence: float | None = None) -> str:
    out: dict = {"answer": answer}
    if confidence is not None:
        out["confidence"] = confidence
    return json.dumps(out)


def _other(it: NestedItem) -> str:
    """An option that is neither the gold nor reality."""
    return next(c for c in it.options if c not in (it.gold, it.reality))


@pytest.fixture(scope="module")
def items() -> tuple[NestedItem, ...]:
    return small_generation(11, 2).items  # 2 items per cell: R0, then adversarial + true per k


@pytest.fixture(scope="module")
def made(items: tuple[NestedItem, ...]) -> list[str]:
    """R0: right (conf .9); R1: adversarial leak (conf .8), true right; R2: one adversarial
    right and one unparsed, one true right and one wrong; R3: adversarial leak, true wrong;
    R4: everything unparsed."""
    replies, seen = [], {}
    for it in items:
        n = seen[(it.depth, it.partition)] = seen.get((it.depth, it.partition), 0) + 1
        adv = it.partition == "adversarial"
        if it.depth == 0:
            replies.append(_reply(it.gold, 0.9))
        elif it.depth == 1:
            replies.append(_reply(it.reality, 0.8) if adv else _reply(it.gold))
        elif it.depth == 2:
            if adv:
                replies.append(_reply(it.gold) if n == 1 else "I think the box")
            else:
                replies.append(_reply(it.gold) if n == 1 else _reply(_other(it)))
        elif it.depth == 3:
            replies.append(_reply(it.reality) if adv else _reply(_other(it)))
        else:
            replies.append('{"answer": "nowhere"}')
    return replies


def test_known_answers(items, made) -> None:
    s = score(items, made, heuristics={"reality": HEURISTICS["reality"]})
    assert s.n == 18 and s.n_unparsed == 5
    assert s.by_depth["accuracy"].to_list() == [1.0, 0.5, 0.5, 0.0, 0.0]
    assert s.by_depth["n_unparsed"].to_list() == [0, 0, 1, 0, 2 + 2]
    assert s.accuracy == pytest.approx((2 + 2 + 2) / 18)
    assert s.false_belief_accuracy == pytest.approx(1 / 8)
    assert s.true_belief_accuracy == pytest.approx(3 / 8)
    assert s.leakage_rate == pytest.approx(4 / 8)
    assert s.by_depth["leakage_rate"].to_list()[1:] == [1.0, 0.0, 1.0, 0.0]
    assert s.degradation_slope == pytest.approx(-0.25)
    assert s.depth_auc == pytest.approx(1.5 / 4)
    assert s.by_depth["drop_to_next"].to_list()[:4] == pytest.approx([0.5, 0.0, 0.5, 0.0])
    assert s.n_confidence == 4
    assert s.brier == pytest.approx((2 * 0.1**2 + 2 * 0.8**2) / 4)
    # reality is right on true-belief items (1/2 of every depth) and is not a shortcut at R0
    lift = s.by_depth["recursive_lift"].to_list()
    assert lift[0] is None and lift[1:] == pytest.approx([0.0, 0.0, -0.5, -0.5])
    adv_lift = s.by_depth["recursive_lift_adversarial"].to_list()
    assert adv_lift[1:] == pytest.approx([0.0, 0.5, 0.0, 0.0])
    summary = s.summary()
    assert summary["R2_accuracy"] == 0.5 and summary["n_unparsed"] == 5


def test_unparsed_replies_are_recorded_not_mapped(items, made) -> None:
    rec = score(items, made).records
    bad = rec.filter(~rec["parsed"])
    assert bad.height == 5 and bad["answer"].null_count() == 5
    assert not bad["correct"].any() and not bad["leaked"].any()
    assert "I think the box" in bad["reply"].to_list()


def test_oracle_reality_and_empty_predictors(items) -> None:
    perfect = score(items, oracle_replies(items))
    assert (perfect.accuracy, perfect.depth_auc, perfect.brier) == (1.0, 1.0, 0.0)
    assert perfect.by_depth["recursive_lift"].to_list()[1:] == [0.5] * 4
    real = score(items, as_replies(items, HEURISTICS["reality"]))
    assert real.leakage_rate == 1.0 and real.false_belief_accuracy == 0.0
    assert real.true_belief_accuracy == 1.0 and real.brier is None and real.n_confidence == 0
    junk = score(items, ["nope"] * len(items))
    assert junk.accuracy == 0.0 and junk.n_unparsed == len(items) and junk.leakage_rate == 0.0


def test_replies_by_id_and_misaligned_replies(items) -> None:
    by_id = {it.id: _reply(it.gold) for it in items}
    assert score(items, by_id).accuracy == 1.0
    with pytest.raises(ValueError, match="no reply for 1 item"):
        score(items, dict(list(by_id.items())[1:]))
    with pytest.raises(ValueError, match="one per item"):
        score(items, oracle_replies(items)[1:])
    with pytest.raises(ValueError, match="no items"):
        score([], [])


def test_metric_helpers() -> None:
    assert slope([0, 1, 2, 3, 4], [1, 0.75, 0.5, 0.25, 0]) == pytest.approx(-0.25)
    assert slope([1], [0.5]) is None and depth_auc([1], [0.5]) is None
    assert depth_auc([0, 1, 2, 3, 4], [1, 1, 1, 1, 1]) == 1.0
    assert depth_auc([0, 1, 2, 3, 4], [1, 0, 0, 0, 0]) == pytest.approx(0.125)
    assert depth_auc([1, 2, 3], [0.5, 0.5, 0.5]) == pytest.approx(0.5)
    assert brier([1.0, 0.0, 0.5], [True, False, True]) == pytest.approx(0.25 / 3)
    assert brier([], []) is None
