"""Suite D, self and cross-agent prediction (plan §4 Suite D, §3 H7-H8, §12, §19 Exp. 5-6).

Tasks have several plausible answers and no correct one (a colour for a logo, a raffle
number, a meeting place), so matching a target means modelling *it*.  A predictor (any
:class:`~cogrsi_lib.reader.System`) is shown a target, the target's previous answers to
tasks of the same class, and the task; it predicts the target's answer with a confidence,
which goes on the :class:`~cogrsi_lib.scorecard.ledger.PredictionLedger` *before* the
target is queried.  Targets are systems too: the predictor itself under the frozen bare
prompt (``self``), or another backend or model (``cross``).

Two reference predictions go on every entry: ``base_rate`` (the target's most frequent
answer among the observations shown; the first option with none) and
``same_as_predictor`` (what the predictor answers when asked the task itself).  The
learning curve repeats the same test tasks after 0/5/10/20 observations; after a policy
change the target is replaced by its changed version and the history keeps the old
observations, followed by 0/5/10/20 new ones (H8: stale agent models).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import polars as pl

from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.system import System
from cogrsi_lib.scorecard.answers import record_confidence
from cogrsi_lib.scorecard.ledger import LedgerEntry, PredictionLedger
from cogrsi_lib.stats import wilson_bounds

PREDICT_MARKER = "Predict another system's answer before it is asked"
TASK_HEADER = "The task it will be given:"
OBS_LINE = re.compile(r"^- (?P<question>.+) -> (?P<answer>.+)$")
LEARNING, AFTER_CHANGE = "learning", "after_change"
SELF, CROSS = "self", "cross"

# class -> (context template, question template, options, nouns)
TASK_CLASSES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "colour": ("Task {n}: a team is choosing a colour for its new {noun}.",
               "Which colour should the {noun} be?", ("red", "blue", "green", "yellow"),
               ("logo", "mug", "poster", "flag", "banner", "website", "van", "jersey")),
    "number": ("Task {n}: a raffle is drawn for a {noun}.",
               "Pick one number for the {noun} raffle.", ("3", "7", "12", "21"),
               ("bike", "hamper", "concert ticket", "laptop", "weekend trip", "painting")),
    "place": ("Task {n}: a group is planning its {noun}.",
              "Where should the {noun} take place?", ("library", "cafe", "park", "office"),
              ("weekly meeting", "study session", "book club", "planning day",
               "farewell lunch", "workshop")),
}


@dataclass(frozen=True)
class Task:
    """One open-ended task of one class."""

    id: str
    task_class: str
    context: str
    question: str
    options: tuple[str, ...]

    def reader_item(self) -> ReaderItem:
        return ReaderItem(item_id=self.id, context=self.context, question=self.question,
                          options=self.options, story_id=self.id,
                          meta={"suite": "selfpred", "task_class": self.task_class})


def generate_tasks(n_per_class: int, seed: int = 0,
                   classes: Sequence[str] = tuple(TASK_CLASSES)) -> list[Task]:
    """``n_per_class`` tasks per class, numbered so that no two share their text."""
    rng = random.Random(seed)
    out, n = [], 0
    for cls in classes:
        ctx, q, options, nouns = TASK_CLASSES[cls]
        for i in range(n_per_class):
            n += 1
            noun = rng.choice(nouns)
            out.append(Task(f"{cls}-{i:03d}", cls, ctx.format(n=n, noun=noun),
                            q.format(noun=noun), options))
    return out


@dataclass(frozen=True)
class Target:
    """A system whose answers are predicted; ``relation`` is ``self`` or ``cross``."""

    name: str
    relation: str
    system: System
    description: str = ""


@dataclass(frozen=True)
class Observation:
    """One earlier answer of a target: the whole task text and what it answered."""

    question: str
    answer: str | None


def prediction_item(target: Target, task: Task, history: Sequence[Observation]) -> ReaderItem:
    """What the predictor sees: the target, its previous answers, and the task."""
    who = target.description or target.name
    past = "\n".join(f"- {o.question} -> {o.answer if o.answer is not None else '(no answer)'}"
                     for o in history) or "(none yet)"
    context = (
        f"{PREDICT_MARKER}. The target is {who}. It will be given the task below; say "
        "which answer it will give.\n"
        f"Its previous answers to {task.task_class} tasks, oldest first:\n{past}\n\n"
        f"{TASK_HEADER}\n{task.context}"
    )
    return ReaderItem(item_id=f"predict:{target.name}:{task.id}:{len(history)}",
                      context=context, question=f"{task.question} (Which answer will it give?)",
                      options=task.options, story_id=task.id,
                      meta={"suite": "selfpred-predict", "task_class": task.task_class})


def observed_answers(text: str) -> list[str]:
    """The answers listed in a prediction prompt's history, oldest first."""
    head = text.split(TASK_HEADER)[0]
    return [m.group("answer") for m in map(OBS_LINE.match, head.splitlines()) if m]


def predicted_task_text(text: str) -> str:
    """The part of a prediction prompt after the history: the task to be predicted."""
    return text.split(TASK_HEADER, 1)[-1]


def base_rate(history: Sequence[Observation], task: Task) -> str:
    """The target's most frequent observed answer (ties: option order); first option if none."""
    counts = Counter(o.answer for o in history if o.answer in task.options)
    if not counts:
        return task.options[0]
    top = max(counts.values())
    return next(o for o in task.options if counts.get(o) == top)


def observe(target: Target, tasks: Sequence[Task]) -> list[Observation]:
    """The target's answers to ``tasks`` (observations shown to the predictor later)."""
    recs = target.system.answer_batch([t.reader_item() for t in tasks])
    return [Observation(f"{t.context} {t.question}", r.answer_text)
            for t, r in zip(tasks, recs, strict=True)]


def prediction_round(
    predictor: System, target: Target, tasks: Sequence[Task], history: Sequence[Observation],
    ledger: PredictionLedger, own: Mapping[str, str | None], phase: str = LEARNING,
    since_change: int | None = None,
) -> list[LedgerEntry]:
    """Predict every task, write the predictions, then query the target and resolve them."""
    recs = predictor.answer_batch([prediction_item(target, t, history) for t in tasks])
    entries = [
        ledger.predict(target=target.name, relation=target.relation, task_class=t.task_class,
                       item_id=t.id, phase=phase, n_observations=len(history),
                       predicted=r.answer_text, confidence=record_confidence(r),
                       since_change=since_change,
                       heuristics={"base_rate": base_rate(history, t),
                                   "same_as_predictor": own.get(t.id)})
        for t, r in zip(tasks, recs, strict=True)
    ]
    ledger.before_query(entries)
    actual = target.system.answer_batch([t.reader_item() for t in tasks])
    for e, a in zip(entries, actual, strict=True):
        ledger.resolve(e, a.answer_text)
    return entries


@dataclass(frozen=True)
class SelfPredConfig:
    """Knobs of Suite D (``params.yaml: scorecard``)."""

    n_test: int = 6
    counts: tuple[int, ...] = (0, 5, 10, 20)
    classes: tuple[str, ...] = ("colour",)
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.counts or min(self.counts) < 0:
            raise ValueError("counts must be non-negative numbers of observations")
        unknown = set(self.classes) - set(TASK_CLASSES)
        if unknown:
            raise ValueError(f"unknown task classes {sorted(unknown)}")

    def tasks(self) -> list[Task]:
        """Per class: the test tasks, then two observation pools (before and after a change)."""
        return generate_tasks(self.n_test + 2 * max(self.counts), self.seed, self.classes)


def run_selfpred(
    predictor: System, targets: Sequence[Target], cfg: SelfPredConfig,
    changed: Mapping[str, Target] | None = None, ledger: PredictionLedger | None = None,
) -> PredictionLedger:
    """The learning curve for every target and class, and the policy change for the targets
    named in ``changed`` (their changed version keeps the target's name)."""
    ledger = PredictionLedger() if ledger is None else ledger
    tasks = cfg.tasks()
    top = max(cfg.counts)
    for cls in cfg.classes:
        pool = [t for t in tasks if t.task_class == cls]
        test = pool[:cfg.n_test]
        before, after = pool[cfg.n_test:cfg.n_test + top], pool[cfg.n_test + top:]
        own = {r.item_id: r.answer_text
               for r in predictor.answer_batch([t.reader_item() for t in test])}
        for target in targets:
            history = observe(target, before) if top else []
            for n in cfg.counts:
                prediction_round(predictor, target, test, history[:n], ledger, own)
            new = (changed or {}).get(target.name)
            if new is None:
                continue
            if new.name != target.name:
                raise ValueError("a changed target keeps its name")
            fresh = observe(new, after) if top else []
            for j in cfg.counts:
                prediction_round(predictor, new, test, history + fresh[:j], ledger, own,
                                 AFTER_CHANGE, since_change=j)
    return ledger


@dataclass(frozen=True)
class SelfPredScore:
    """Accuracy, Brier and lifts by relation and target, and the learning curves."""

    ledger: pl.DataFrame
    summary: pl.DataFrame
    curve: pl.DataFrame
    self_accuracy: float | None
    cross_accuracy: float | None
    adaptation_gain: float | None
    recovery_after_change: float | None


def _acc(df: pl.DataFrame, col: str = "correct") -> float | None:
    """Mean of a correctness column; None where nothing is scored (nulls are not scored)."""
    m = df[col].cast(pl.Float64).mean()
    return None if m is None else float(m)  # type: ignore[arg-type]


def score_selfpred(ledger: PredictionLedger) -> SelfPredScore:
    """Score a resolved ledger (plan §4 Suite D metrics).

    Brier is the one-vs-rest score of the predicted answer, ``(confidence - correct)^2``.
    Entries whose target gave no answer are not scored (``n`` counts the scored ones,
    ``no_target_answer`` the others), for the predictor and the reference answers alike.
    ``adaptation_gain``: accuracy after the most observations minus after none (learning
    phase, mean over targets with both); ``recovery_after_change``: after a change, accuracy
    with the most new observations minus with none.
    """
    df = ledger.frame()
    if df.filter(pl.col("resolved_at").is_null()).height:
        raise ValueError("the ledger has unresolved entries")
    learn = df.filter(pl.col("phase") == LEARNING)
    rows = []
    for keys, every in learn.group_by(["relation", "target"], maintain_order=True):
        relation, target = keys
        part = every.filter(pl.col("target_answered"))
        conf = part.filter(pl.col("confidence").is_not_null())
        brier = (float(((conf["confidence"] - conf["correct"].cast(pl.Float64)) ** 2).mean())
                 if conf.height else None)
        acc, br = _acc(part), _acc(part, "base_rate_correct")
        same = _acc(part, "same_as_predictor_correct")
        rows.append({"relation": relation, "target": target, "n": part.height,
                     "no_target_answer": every.height - part.height, "accuracy": acc,
                     "brier": brier, "base_rate_accuracy": br,
                     "same_as_predictor_accuracy": same,
                     "lift_over_base_rate": None if acc is None or br is None else acc - br,
                     "lift_over_same_as_predictor":
                         None if acc is None or same is None else acc - same})
    schema = {"relation": pl.Utf8, "target": pl.Utf8, "n": pl.Int64,
              "no_target_answer": pl.Int64, "accuracy": pl.Float64,
              "brier": pl.Float64, "base_rate_accuracy": pl.Float64,
              "same_as_predictor_accuracy": pl.Float64, "lift_over_base_rate": pl.Float64,
              "lift_over_same_as_predictor": pl.Float64}
    summary = pl.DataFrame(rows, schema=schema)
    curve = (df.with_columns(pl.when(pl.col("phase") == LEARNING).then(pl.col("n_observations"))
                             .otherwise(pl.col("since_change")).alias("observations"))
             .group_by(["phase", "relation", "target", "observations"], maintain_order=True)
             .agg(pl.col("target_answered").sum().cast(pl.Int64).alias("n"),
                  (~pl.col("target_answered")).sum().cast(pl.Int64).alias("no_target_answer"),
                  pl.col("correct").cast(pl.Float64).mean().alias("accuracy"),
                  pl.col("base_rate_correct").cast(pl.Float64).mean().alias("base_rate"),
                  pl.col("same_as_predictor_correct").cast(pl.Float64).mean()
                  .alias("same_as_predictor"))
             .sort(["phase", "relation", "target", "observations"],
                   descending=[True, False, False, False]))
    answered = learn.filter(pl.col("target_answered"))
    return SelfPredScore(
        df, summary, curve,
        self_accuracy=_acc(answered.filter(pl.col("relation") == SELF)),
        cross_accuracy=_acc(answered.filter(pl.col("relation") == CROSS)),
        adaptation_gain=_gain(curve, LEARNING), recovery_after_change=_gain(curve, AFTER_CHANGE),
    )


def _gain(curve: pl.DataFrame, phase: str) -> float | None:
    """Mean over targets of accuracy at the most observations minus at the fewest; targets
    without a score at both ends are left out."""
    part = curve.filter(pl.col("phase") == phase)
    gains = []
    for _, g in part.group_by("target", maintain_order=True):
        acc = g.sort("observations")["accuracy"]
        if acc[0] is not None and acc[-1] is not None:
            gains.append(acc[-1] - acc[0])
    return float(sum(gains) / len(gains)) if gains else None


def curve_chart(curve: pl.DataFrame) -> alt.FacetChart:
    """Prediction accuracy against observations shown, with its 95% Wilson interval, and the
    two references (the base rate, and answering as the predictor would); one row per target
    and one column per phase (plan §19 Experiment 6). Each series has its own colour, dash
    and point shape, so references that coincide stay visible; n per point in the subtitle."""
    long = curve.unpivot(index=["phase", "target", "observations", "n"],
                         on=["accuracy", "base_rate", "same_as_predictor"],
                         variable_name="predictor", value_name="value")
    measured = (pl.col("predictor") == "accuracy") & pl.col("value").is_not_null()
    lows, highs = wilson_bounds(long["value"].fill_null(0.0).to_list(), long["n"].to_list())
    long = long.with_columns(
        pl.when(measured).then(pl.Series(lows, dtype=pl.Float64)).alias("low"),
        pl.when(measured).then(pl.Series(highs, dtype=pl.Float64)).alias("high"))
    order = ["accuracy", "base_rate", "same_as_predictor"]
    x = alt.X("observations:Q", title="observations shown")
    color = alt.Color("predictor:N", title="series", sort=order)
    base = alt.Chart(alt.Data(values=long.to_dicts()))
    lines = base.mark_line(point=alt.OverlayMarkDef(filled=False, size=80)).encode(
        x=x, y=alt.Y("value:Q", title="accuracy",
                     scale=alt.Scale(domain=[0, 1])),
        color=color, strokeDash=alt.StrokeDash("predictor:N", sort=order, legend=None),
        shape=alt.Shape("predictor:N", sort=order, legend=None),
        tooltip=["phase:N", "target:N", "predictor:N", "observations:Q", "n:Q",
                 alt.Tooltip("value:Q", format=".3f")])
    band = base.transform_filter("isValid(datum.low)").mark_rule(
        strokeWidth=2, opacity=0.45).encode(x=x, y="low:Q", y2="high:Q", color=color)
    ns = sorted(set(curve["n"].to_list()))
    sizes = f"{ns[0]}-{ns[-1]}" if len(ns) > 1 else (f"{ns[0]}" if ns else "0")
    return alt.layer(band, lines).properties(width=240, height=180).facet(
        row=alt.Row("target:N", title=None),
        # "learning" before "after_change"; an explicit order misplaces panels when a target
        # has no row in a phase (Vega-Lite)
        column=alt.Column("phase:N", title=None, sort="descending")).properties(
        title=alt.Title("Self and cross-agent prediction: learning curve",
                        subtitle=[f"n = {sizes} predictions per point; bars: 95% Wilson intervals",
                                  "after_change: observations made after the change"]))
