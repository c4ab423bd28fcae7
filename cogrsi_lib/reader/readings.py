"""What each reading and each step of the reader adds, read offline from its records (CogRSI
G.3, G.6, G.7: Figures 8, 13b, 13c and 14).

A reader record keeps its six samples with the view each read, the vote and the arbitration,
so the steps of one question can be replayed on the same samples, with no new call
(:func:`steps`):

- ``annotated`` / ``plain``: the vote over one reading's samples alone;
- ``vote``: the vote over both (the vote-only design);
- ``conflict_rule``: the vote, with the arbiter's choice where the two readings conflicted;
- ``final``: the reader's answer (the arbiter's choice on close splits too).

Tables from the replay: :func:`step_accuracy`, each step's accuracy (by construct: Figure 13b;
on belief questions: Figure 8); :func:`conflict_table`, how often each reading, the vote and
the evidential rule are right where the readings conflict, and what close-split arbitration
fixes and breaks (Figure 13c); :func:`close_split_table`, the reader's designs (vote only,
without and with close-split arbitration) per benchmark (Table 7 on the development sample,
Table 8 on the test samples); and
:func:`arbiter_table`, the rule against each reading and a neutral arbiter on the same
conflicts (Table 12). Figure 14's robustness checks are offline too: :func:`sample_mix`
re-votes the vote-only design's saved samples over the first *a* annotated and *p* plain
ones, and :func:`stricter_thresholds` keeps an arbitration only where a stricter rule would
also have called it (looser rules would need new arbiter calls). An answer is right when it
equals the gold option, so only the benchmarks' multiple-choice records (``n_options`` > 0)
are replayed, as the paper's figures are over benchmark questions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from cogrsi_lib.bench.constructs import sort_constructs, with_constructs
from cogrsi_lib.reader.reader import ReaderConfig
from cogrsi_lib.reader.vote import decide, ranked

STEPS: tuple[str, ...] = ("annotated", "plain", "vote", "conflict_rule", "final")
_DEFAULT = ReaderConfig()


def _lead(annotated: Sequence[str | None], plain: Sequence[str | None]) -> str | None:
    r = ranked(annotated, plain)
    return r[0][0] if r else None


def _answers(samples_json: str) -> tuple[list[str | None], list[str | None]]:
    samples = sorted(json.loads(samples_json or "[]"), key=lambda s: (s["view"], s["index"]))
    return ([s["answer"] for s in samples if s["view"] == "annotated"],
            [s["answer"] for s in samples if s["view"] == "plain"])


def _replayable(records: pl.DataFrame, system: str) -> pl.DataFrame:
    return records.filter((pl.col("system") == system) & (pl.col("n_options") > 0)
                          & pl.col("benchmark").is_not_null())


def steps(records: pl.DataFrame, system: str = "cogrsi") -> pl.DataFrame:
    """One row per multiple-choice record of ``system`` (reader_eval's records): its construct,
    the answer at every step of :data:`STEPS` with ``<step>_right``, the two readings'
    majorities, whether they conflict, the vote's reason and the arbitration (``arbitrated``,
    ``choice``)."""
    rows = with_constructs(_replayable(records, system))
    out: list[dict[str, Any]] = []
    for r in rows.iter_rows(named=True):
        ann, pl_ = _answers(r["samples_json"])
        vote = json.loads(r["vote_json"] or "{}")
        arb = json.loads(r["arbitration_json"] or "null") or {}
        a_maj, p_maj = vote.get("annotated_majority"), vote.get("plain_majority")
        conflict = a_maj is not None and p_maj is not None and a_maj != p_maj
        leader = vote.get("leader")
        choice = arb.get("choice") if arb.get("ran") else None
        ok = choice is not None and choice in (arb.get("candidates") or ())
        answers = {"annotated": _lead(ann, []), "plain": _lead([], pl_), "vote": leader,
                   "conflict_rule": choice if ok and arb.get("reason") == "conflict" else leader,
                   "final": r["answer"]}
        row = {k: r[k] for k in ("model", "run", "source", "benchmark", "item_id", "story_id",
                                 "construct", "kind", "gold")}
        row |= {"samples": json.dumps([ann, pl_]),
                "annotated_majority": a_maj, "plain_majority": p_maj, "conflict": conflict,
                "reason": vote.get("reason") or r["arbitration_reason"],
                "arbitrated": bool(arb.get("ran")), "choice": choice,
                "perception_fallback": r["perception_status"] == "malformed"}
        for step in STEPS:
            row[step] = answers[step]
            row[f"{step}_right"] = answers[step] is not None and answers[step] == r["gold"]
        out.append(row)
    return pl.DataFrame(out) if out else pl.DataFrame()


def _with_all(df: pl.DataFrame, column: str) -> pl.DataFrame:
    return pl.concat([df, df.with_columns(pl.lit("all").alias(column))])


def step_accuracy(decomposed: pl.DataFrame, by: str = "construct") -> pl.DataFrame:
    """Per model, ``by`` value (and ``all``) and step: questions (every run's), accuracy in
    points and ``gain`` over the step before: the vote against the better single reading,
    ``conflict_rule`` against the vote, ``final`` against ``conflict_rule`` (the two
    readings are alternatives: no gain)."""
    if decomposed.height == 0:
        return pl.DataFrame()
    d = _with_all(decomposed, by)
    long = d.unpivot(index=["model", by], on=[f"{s}_right" for s in STEPS],
                     variable_name="step", value_name="right").with_columns(
        pl.col("step").str.strip_suffix("_right"))
    t = (long.group_by("model", by, "step", maintain_order=True)
         .agg(pl.len().alias("questions"),
              (pl.col("right").cast(pl.Float64).mean() * 100).alias("accuracy")))
    acc = {(r["model"], r[by], r["step"]): r["accuracy"] for r in t.iter_rows(named=True)}

    def gain(model: str, key: str, step: str) -> float | None:
        before = {"vote": ("annotated", "plain"), "conflict_rule": ("vote",),
                  "final": ("conflict_rule",)}.get(step)
        if before is None:
            return None
        return acc[(model, key, step)] - max(acc[(model, key, b)] for b in before)

    t = t.with_columns(pl.Series("gain", [gain(r["model"], r[by], r["step"])
                                          for r in t.iter_rows(named=True)], dtype=pl.Float64))
    return sort_constructs(t, "model") if by == "construct" else _all_last(t, by)


def _all_last(table: pl.DataFrame, by: str) -> pl.DataFrame:
    return table.sort("model", pl.col(by) == "all", maintain_order=True)


def conflict_table(decomposed: pl.DataFrame) -> pl.DataFrame:
    """Per model and construct (and ``all``): on the questions whose two readings conflict,
    how many each reading's majority, the vote and the evidential rule (the arbiter's choice,
    the reader's answer there) get right; on close splits, how many the arbiter fixed (the
    vote was wrong, the answer right) and broke (the reverse)."""
    if decomposed.height == 0:
        return pl.DataFrame()
    d = _with_all(decomposed, "construct")
    return sort_constructs(d.group_by("model", "construct", maintain_order=True).agg(
        pl.len().alias("questions"),
        pl.col("conflict").sum().alias("conflicts"),
        pl.col("annotated_right").filter("conflict").sum().alias("annotated_right"),
        pl.col("plain_right").filter("conflict").sum().alias("plain_right"),
        pl.col("vote_right").filter("conflict").sum().alias("vote_right"),
        pl.col("final_right").filter("conflict").sum().alias("rule_right"),
        *_close_splits()), "model")


def _close_splits() -> list[pl.Expr]:
    close = pl.col("reason") == "close_split"
    return [close.sum().alias("close_splits"),
            (close & pl.col("final_right") & ~pl.col("vote_right")).sum().alias("fixed"),
            (close & ~pl.col("final_right") & pl.col("vote_right")).sum().alias("broken")]


def close_split_table(decomposed: pl.DataFrame, by: str = "benchmark") -> pl.DataFrame:
    """CogRSI Tables 7 and 8: per model and ``by`` value (and ``all``), the reader's designs
    replayed on the same samples, accuracy in points: the vote alone (``vote_only``),
    arbitration on reading conflicts only (``without`` close-split arbitration) and the final
    design (``with`` it); the difference the close splits make, and those fixed and broken."""
    if decomposed.height == 0:
        return pl.DataFrame()
    d = _with_all(decomposed, by)
    t = d.group_by("model", by, maintain_order=True).agg(
        pl.len().alias("questions"),
        (pl.col("vote_right").cast(pl.Float64).mean() * 100).alias("vote_only"),
        (pl.col("conflict_rule_right").cast(pl.Float64).mean() * 100).alias("without"),
        (pl.col("final_right").cast(pl.Float64).mean() * 100).alias("with"),
        *_close_splits())
    return _all_last(t.with_columns((pl.col("with") - pl.col("without")).alias("difference")),
                     by)


def design_table(blocks: Mapping[str, pl.DataFrame | None], system: str = "cogrsi"
                 ) -> pl.DataFrame:
    """CogRSI Table 8: :func:`close_split_table` of ``system``'s records in each block (block
    label -> records; None or no replayable record: no rows), with a ``block`` column."""
    tables = {b: close_split_table(steps(items, system)) for b, items in blocks.items()
              if items is not None}
    parts = [t.select(pl.lit(b).alias("block"), pl.all()) for b, t in tables.items() if t.height]
    return pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame()


def arbiter_table(records: pl.DataFrame, rule: str = "cogrsi",
                  neutral: str = "cogrsi_neutralarb", by: str = "benchmark") -> pl.DataFrame:
    """CogRSI Table 12: per model and ``by`` value (and ``all``), on the reading conflicts of
    ``rule`` (the reader), how many the evidential rule, the plain and the annotated readings'
    majorities and a neutral arbiter get right; the neutral arbiter is ``neutral``'s answer to
    the same question in the same run, which read the same samples (its requests are the
    reader's). A question whose two records hold different samples is left out and counted
    (``unshared``): the comparison is only fair on the same samples."""
    a, b = steps(records, rule), steps(records, neutral)
    if a.height == 0 or b.height == 0:
        return pl.DataFrame()
    on = ["model", "run", "item_id"]
    g = a.join(b.select(*on, pl.col("samples").alias("neutral_samples"),
                        pl.col("final_right").alias("neutral_right")), on=on, how="inner",
               maintain_order="left")
    g = g.with_columns(shared=pl.col("samples") == pl.col("neutral_samples"))
    d = _with_all(g, by)
    fair = pl.col("conflict") & pl.col("shared")
    t = d.group_by("model", by, maintain_order=True).agg(
        pl.len().alias("questions"),
        fair.sum().alias("conflicts"),
        pl.col("final_right").filter(fair).sum().alias("rule_right"),
        pl.col("plain_right").filter(fair).sum().alias("plain_right"),
        pl.col("annotated_right").filter(fair).sum().alias("annotated_right"),
        pl.col("neutral_right").filter(fair).sum().alias("neutral_right"),
        (pl.col("conflict") & ~pl.col("shared")).sum().alias("unshared"))
    return _all_last(t, by)


def sample_mix(records: pl.DataFrame, system: str = "cogrsi_noarb",
               n_annotated: int = _DEFAULT.n_annotated, n_plain: int = _DEFAULT.n_plain
               ) -> pl.DataFrame:
    """Figure 14's sample-mix check: per model and every mix of the first ``a`` <=
    ``n_annotated`` annotated and ``p`` <= ``n_plain`` plain samples of the vote-only design
    (``system``), the accuracy of their vote (the reader's tie-break). Questions whose
    perception fell back to plain reading (no annotated sample) are left out and counted."""
    rows = _replayable(records, system)
    out: list[dict[str, Any]] = []
    for model in rows["model"].unique(maintain_order=True).to_list():
        own = rows.filter(pl.col("model") == model)
        readings = [(_answers(s), g) for s, g in zip(own["samples_json"], own["gold"],
                                                     strict=True)]
        kept = [(ann, p, g) for (ann, p), g in readings if ann]
        for a in range(n_annotated + 1):
            for p in range(n_plain + 1):
                if a + p == 0:
                    continue
                right = [_lead(ann[:a], pl_[:p]) == g for ann, pl_, g in kept]
                out.append({"model": model, "system": system, "annotated": a, "plain": p,
                            "questions": len(kept),
                            "left_out": len(readings) - len(kept),
                            "accuracy": 100 * sum(right) / len(right) if right else None})
    return pl.DataFrame(out) if out else pl.DataFrame()


def stricter_thresholds(records: pl.DataFrame, system: str = "cogrsi",
                        supermajorities: Sequence[int] = (5, 4, 3),
                        close_margins: Sequence[int] = (1, 0),
                        close_split_kinds: Sequence[str] = _DEFAULT.close_split_kinds
                        ) -> pl.DataFrame:
    """Figure 14's threshold check, in the stricter direction only: per model and pair of
    (``supermajority``, ``close_margin``) no looser than the records', each question's vote is
    decided again; an arbitration the records hold stands only where the stricter rule also
    calls it (between the same two answers), else the vote leader answers. ``arbitrations``
    counts those kept; the first pair is the design's own, so its accuracy is the reader's."""
    rows = _replayable(records, system)
    out: list[dict[str, Any]] = []
    for model in rows["model"].unique(maintain_order=True).to_list():
        own = rows.filter(pl.col("model") == model)
        for sm in supermajorities:
            for cm in close_margins:
                right, kept = [], 0
                for r in own.iter_rows(named=True):
                    ann, pl_ = _answers(r["samples_json"])
                    arb = json.loads(r["arbitration_json"] or "null") or {}
                    o = decide(ann, pl_, supermajority=sm, close_margin=cm,
                               close_split=r["kind"] in close_split_kinds)
                    same = (o.arbitrate and arb.get("ran")
                            and tuple(o.candidates or ()) == tuple(arb.get("candidates") or ()))
                    answer = r["answer"] if same else o.leader
                    kept += bool(same)
                    right.append(answer is not None and answer == r["gold"])
                out.append({"model": model, "system": system, "supermajority": sm,
                            "close_margin": cm, "questions": len(right),
                            "arbitrations": kept,
                            "accuracy": 100 * sum(right) / len(right) if right else None})
    return pl.DataFrame(out) if out else pl.DataFrame()


def steps_chart(accuracy: pl.DataFrame, title: str, by: str = "construct") -> Any:
    """Accuracy at each step (bars in :data:`STEPS` order), one panel per ``by`` value, in
    the table's order."""
    import altair as alt

    return alt.Chart(accuracy).mark_bar().encode(
        x=alt.X("step:N", sort=list(STEPS), title=None),
        y=alt.Y("accuracy:Q", title="accuracy (points)", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("step:N", sort=list(STEPS), legend=None),
        column=alt.Column(f"{by}:N", title=None,
                          sort=list(dict.fromkeys(accuracy[by].to_list()))),
        tooltip=[by, "step", "questions", "accuracy", "gain"],
    ).properties(width=120, height=200, title=title)


def conflict_chart(conflicts: pl.DataFrame) -> Any:
    """Figure 13c: on reading conflicts, how many each reading, the vote and the rule get right
    (bars), per construct with conflicts; the conflict count is in the tooltip."""
    import altair as alt

    who = ["annotated_right", "plain_right", "vote_right", "rule_right"]
    data = conflicts.filter(pl.col("conflicts") > 0).unpivot(
        index=["model", "construct", "conflicts"], on=who, variable_name="answer",
        value_name="right")
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("answer:N", sort=who, title=None),
        y=alt.Y("right:Q", title="conflicts answered right"),
        color=alt.Color("answer:N", sort=who, legend=None),
        column=alt.Column("construct:N", title=None,
                          sort=list(dict.fromkeys(data["construct"].to_list()))),
        tooltip=["construct", "answer", "right", "conflicts"],
    ).properties(width=120, height=200,
                 title="Reading conflicts: who is right (CogRSI Figure 13c)")


def mix_chart(mix: pl.DataFrame) -> Any:
    """Figure 14 (left): accuracy of the vote over the first a annotated and p plain samples."""
    import altair as alt

    base = alt.Chart(mix).encode(x=alt.X("annotated:O", title="annotated samples (a)"),
                                 y=alt.Y("plain:O", title="plain samples (p)", sort="descending"))
    cells = base.mark_rect().encode(
        color=alt.Color("accuracy:Q", title="accuracy (points)"),
        tooltip=["annotated", "plain", "questions", "left_out", "accuracy"])
    text = base.mark_text(fontSize=11).encode(text=alt.Text("accuracy:Q", format=".1f"))
    return (cells + text).properties(width=220, height=110,
                                     title="Sample mix of the vote (CogRSI Figure 14)")
