"""Suite D: the prediction ledger, predict-before-query, and known learning curves."""

from __future__ import annotations

from collections import Counter

import pytest

from cogrsi_lib.scorecard.direct import DirectSystem
from cogrsi_lib.scorecard.ledger import LedgerOrderError, PredictionLedger
from cogrsi_lib.scorecard.scripted import ScriptedModel
from cogrsi_lib.scorecard.selfpred import (
    AFTER_CHANGE,
    CROSS,
    LEARNING,
    SELF,
    Observation,
    SelfPredConfig,
    Target,
    base_rate,
    curve_chart,
    generate_tasks,
    observed_answers,
    prediction_item,
    run_selfpred,
    score_selfpred,
)

from .helpers import TableSystem


def test_ledger_enforces_predict_query_resolve() -> None:
    ledger = PredictionLedger()
    e = ledger.predict(target="t", relation=CROSS, task_class="colour", item_id="x",
                       phase=LEARNING, n_observations=0, predicted="red", confidence=0.7)
    with pytest.raises(LedgerOrderError, match="already on the ledger"):
        ledger.predict(target="t", relation=CROSS, task_class="colour", item_id="x",
                       phase=LEARNING, n_observations=0, predicted="blue", confidence=0.7)
    with pytest.raises(LedgerOrderError, match="before its target was queried"):
        ledger.resolve(e, "red")
    ledger.before_query([e])
    with pytest.raises(LedgerOrderError, match="already queried"):
        ledger.before_query([e])
    ledger.resolve(e, "blue")
    with pytest.raises(LedgerOrderError, match="already resolved"):
        ledger.resolve(e, "blue")
    assert e.predicted_at < e.queried_at < e.resolved_at
    assert e.correct is False and e.residual == pytest.approx(-0.7)
    assert e.residual_note() == "predicted 'red', target answered 'blue'"
    stranger = PredictionLedger().predict(target="t", relation=CROSS, task_class="c",
                                          item_id="y", phase=LEARNING, n_observations=0,
                                          predicted=None, confidence=None)
    with pytest.raises(LedgerOrderError, match="no prediction"):
        ledger.before_query([stranger])
    row = ledger.frame().row(0, named=True)
    assert row["residual"] == pytest.approx(-0.7) and row["correct"] is False


def test_tasks_base_rate_and_observation_format() -> None:
    tasks = generate_tasks(5, seed=1, classes=("colour", "place"))
    assert len(tasks) == 10 and len({(t.context, t.question) for t in tasks}) == 10
    t = tasks[0]
    hist = [Observation("q", "blue"), Observation("q", "green"), Observation("q", "blue")]
    assert base_rate(hist, t) == "blue" and base_rate([], t) == t.options[0]
    assert base_rate([Observation("q", "green"), Observation("q", "red")], t) == "red"
    target = Target("other", CROSS, TableSystem(lambda it: "red"))
    item = prediction_item(target, t, hist)
    text = item.context + item.question
    assert observed_answers(item.context) == ["blue", "green", "blue"]
    assert t.context in text and t.question in text and item.options == t.options
    # answers listed after the task header are not observations
    assert observed_answers(item.context + "\n- x -> red") == ["blue", "green", "blue"]


class Counted:
    """A scripted target: a fixed answer per phase, noting what the ledger held when asked."""

    def __init__(self, answer: str, ledger: PredictionLedger, name: str = "target"):
        self.answer, self.ledger, self.name = answer, ledger, name
        self.open_when_asked: list[int] = []

    def answer_batch(self, items):
        # at every query, each asked item must already have a frozen, unresolved prediction
        open_ids = {e.item_id for e in self.ledger.entries()
                    if not e.resolved and e.queried_at is not None}
        self.open_when_asked.append(len(open_ids & {it.item_id for it in items}))
        return TableSystem(lambda it: self.answer).answer_batch(items)


def mode_predictor(window: int | None):
    """Predict the most frequent of the last ``window`` observed answers (ties: latest), or
    'red' with no observations."""
    def answer(item):
        seen = observed_answers(item.context)
        seen = seen[-window:] if window else seen
        if not seen:
            return "red"
        c = Counter(seen)
        return next(a for a in reversed(seen) if c[a] == max(c.values()))
    return TableSystem(answer, "predictor", confidence=0.75)


@pytest.mark.parametrize(
    ("window", "after"),
    [(None, [0.0, 0.0, 0.0, 1.0]),  # whole history: stale until new answers outnumber old
     (5, [0.0, 1.0, 1.0, 1.0])],   # a recency window adapts after five new observations
)
def test_known_learning_curve_and_policy_change(window, after) -> None:
    ledger = PredictionLedger()
    cfg = SelfPredConfig(n_test=3, classes=("colour",))
    before = Counted("blue", ledger)
    changed = Counted("green", ledger)
    ledger = run_selfpred(mode_predictor(window),
                          [Target("target", CROSS, before)], cfg,
                          {"target": Target("target", CROSS, changed)}, ledger)
    s = score_selfpred(ledger)
    learn = s.curve.filter(s.curve["phase"] == LEARNING).sort("observations")
    post = s.curve.filter(s.curve["phase"] == AFTER_CHANGE).sort("observations")
    assert learn["observations"].to_list() == [0, 5, 10, 20]
    assert learn["accuracy"].to_list() == [0.0, 1.0, 1.0, 1.0]
    assert post["accuracy"].to_list() == after
    # the base rate counts every observation: 20 old blues outvote up to 20 new greens
    assert post["base_rate"].to_list() == [0.0, 0.0, 0.0, 0.0]
    assert s.adaptation_gain == 1.0 and s.recovery_after_change == after[-1] - after[0]
    # every query came after its predictions were written (and before they were resolved)
    assert all(n == cfg.n_test for n in before.open_when_asked[1:])
    assert all(n == cfg.n_test for n in changed.open_when_asked[1:])
    df = s.ledger
    assert (df["predicted_at"] < df["queried_at"]).all()
    assert (df["queried_at"] < df["resolved_at"]).all()
    # the figure: every series told apart by dash and shape too (the two references
    # coincide here), accuracy's Wilson bars, and n in the subtitle
    spec = curve_chart(s.curve).to_dict()
    lines, band = spec["spec"]["layer"][1], spec["spec"]["layer"][0]
    assert {"color", "strokeDash", "shape"} <= set(lines["encoding"])
    assert band["mark"]["type"] == "rule" and band["encoding"]["y2"]["field"] == "high"
    assert spec["title"]["subtitle"][0].startswith("n = 3 predictions per point;")


def test_the_predictor_never_sees_the_answer_it_predicts() -> None:
    ledger = PredictionLedger()
    cfg = SelfPredConfig(n_test=2, counts=(0, 5), classes=("colour",))
    predictor = mode_predictor(None)
    target = Target("t", CROSS, TableSystem(lambda it: "yellow"))
    run_selfpred(predictor, [target], cfg, ledger=ledger)
    test_questions = {f"{t.context} {t.question}" for t in cfg.tasks()[: cfg.n_test]}
    for item in predictor.seen:
        if item.meta.get("suite") != "selfpred-predict":
            continue
        shown = [ln.split(" -> ")[0][2:] for ln in item.context.splitlines()
                 if ln.startswith("- ")]
        assert not set(shown) & test_questions


def test_self_and_cross_prediction_with_the_scripted_model() -> None:
    cfg = SelfPredConfig(n_test=4, classes=("colour",), seed=3)
    tasks = cfg.tasks()
    me = ScriptedModel(preferences={"colour": 1}).add_tasks(tasks)
    other = ScriptedModel("other", preferences={"colour": 3}).add_tasks(tasks)
    b = me.backend()
    targets = [Target("self", SELF, DirectSystem(b, name="self")),
               Target("other", CROSS, DirectSystem(other.backend(), name="other"))]
    s = score_selfpred(run_selfpred(DirectSystem(b), targets, cfg))
    rows = {r["target"]: r for r in s.summary.iter_rows(named=True)}
    # self: its own preference with no history and after; "same as predictor" is perfect,
    # so self-prediction earns no lift over it (plan §4: not deep recursion automatically)
    assert s.self_accuracy == 1.0 and rows["self"]["lift_over_same_as_predictor"] == 0.0
    # cross: wrong with no history (its own preference), right once it has observations
    curve = s.curve.filter(s.curve["target"] == "other").sort("observations")
    assert curve["accuracy"].to_list() == [0.0, 1.0, 1.0, 1.0]
    assert s.cross_accuracy == 0.75 and rows["other"]["same_as_predictor_accuracy"] == 0.0
    assert rows["other"]["brier"] is not None


def test_scoring_refuses_an_unresolved_ledger() -> None:
    ledger = PredictionLedger()
    ledger.predict(target="t", relation=CROSS, task_class="c", item_id="i", phase=LEARNING,
                   n_observations=0, predicted="a", confidence=0.5, heuristics={"base_rate": "a"})
    with pytest.raises(ValueError, match="unresolved"):
        score_selfpred(ledger)


def test_a_changed_target_keeps_its_name() -> None:
    cfg = SelfPredConfig(n_test=1, counts=(0,), classes=("colour",))
    t = Target("t", CROSS, TableSystem(lambda it: "red"))
    with pytest.raises(ValueError, match="keeps its name"):
        run_selfpred(mode_predictor(None), [t], cfg,
                     {"t": Target("u", CROSS, TableSystem(lambda it: "red"))})


def test_entries_whose_target_gave_no_answer_are_not_scored() -> None:
    """A target reply that does not parse leaves nothing to predict against: the entry is on
    the ledger, resolved, but neither the predictor nor a reference answer is scored on it."""
    cfg = SelfPredConfig(n_test=4, counts=(0, 5), classes=("colour",))
    test_ids = {t.id for t in cfg.tasks()[: cfg.n_test]}
    silent = sorted(test_ids)[:2]
    # the target answers "red", except on two test tasks, where its reply does not parse
    target = Target("t", CROSS, TableSystem(lambda it: None if it.item_id in silent else "red"))
    s = score_selfpred(run_selfpred(TableSystem(lambda it: "red"), [target], cfg))
    df = s.ledger
    void = df.filter(~df["target_answered"])
    assert set(void["item_id"]) == set(silent) and void.height == 2 * len(cfg.counts)
    assert void["correct"].null_count() == void.height
    assert void["residual"].null_count() == void.height
    assert void["base_rate_correct"].null_count() == void.height
    assert set(void["residual_note"]) == {"the target gave no answer: not scored"}
    (row,) = s.summary.iter_rows(named=True)
    assert (row["n"], row["no_target_answer"]) == (4, 4)
    assert row["accuracy"] == 1.0 and s.cross_accuracy == 1.0
    assert s.curve["n"].to_list() == [2, 2] and s.curve["no_target_answer"].to_list() == [2, 2]
    # a target that never answers leaves every accuracy undefined, not zero
    mute = Target("m", CROSS, TableSystem(lambda it: None))
    s = score_selfpred(run_selfpred(TableSystem(lambda it: "red"), [mute], cfg))
    (row,) = s.summary.iter_rows(named=True)
    assert row["n"] == 0 and row["accuracy"] is None and s.cross_accuracy is None
    assert s.adaptation_gain is None
