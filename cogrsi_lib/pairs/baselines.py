"""Reference answerers for pair records and the oracle sanity table (CogRSI §3, App. C).

The oracle answerer replays each stored world and must make every pair valid.  The
shortcut answerers ignore access: ``reality`` names where the object is, ``initial`` where
it started, and ``in_room`` follows the rule "a character who is in the room knows what
happens" (CogRSI §1), which is wrong for a character asleep in the room (§5.4).  Both
versions of a pair share reality and the initial location, so an answerer blind to the
access fact gives one answer to both and can never make a flip pair valid.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import altair as alt
import polars as pl

from cogrsi_lib.oracle import OracleState, Question, World, answer_all
from cogrsi_lib.pairs.records import combined, sort_by_variant
from cogrsi_lib.pairs.validity import pair_validity

Answerer = Callable[[World, Question], str]


def oracle_answer(world: World, question: Question) -> str:
    """The oracle's own answer, replayed from the stored world."""
    (a,) = answer_all(world, (question,))
    return str(a.value)


def reality_answer(world: World, question: Question) -> str:
    """Where the object really is at the end."""
    (a,) = answer_all(world, (Question("location", ()),))
    return str(a.value)


def initial_answer(world: World, question: Question) -> str:
    """Where the object started."""
    return world.location


def in_room_answer(world: World, question: Question) -> str:
    """Reality if the asked character was in the room during the last move, else the start.

    Being in the room is taken for seeing, so an asleep character is wrongly counted.
    """
    (target,) = question.chain
    state = OracleState.initial(world, max_depth=1)
    in_room_at_last_move = True
    for i, e in enumerate(world.events):
        if e.type == "move":
            in_room_at_last_move = target in state.present
        state.apply(e, i)
    return state.location if in_room_at_last_move else world.location


ANSWERERS: dict[str, Answerer] = {
    "oracle": oracle_answer,
    "reality": reality_answer,
    "initial": initial_answer,
    "in_room": in_room_answer,
}


def predictions(records: pl.DataFrame, answerer: Answerer) -> pl.DataFrame:
    """``pair_id, side, answer`` from ``answerer`` on each record's stored world and question."""
    answers = []
    for world_json, question_json in records.select(["world_json", "question_json"]).iter_rows():
        q = Question.from_dict(json.loads(question_json), 0)
        answers.append(answerer(World.from_json(world_json), q))
    return records.select(["pair_id", "side"]).with_columns(
        answer=pl.Series(answers, dtype=pl.Utf8))


def sanity_long(splits: Mapping[str, pl.DataFrame] | pl.DataFrame,
                answerers: Mapping[str, Answerer] = ANSWERERS) -> pl.DataFrame:
    """Pair validity and item accuracy of each answerer by split, form and variant."""
    records = combined(splits)
    parts = []
    for name, fn in answerers.items():
        table = pair_validity(records, predictions(records, fn)).table()
        parts.append(table.select(["split", "form", "variant", "kind", "n_pairs",
                                   "pair_validity", "item_accuracy"])
                     .with_columns(answerer=pl.lit(name)))
    return pl.concat(parts)


def sanity_table(splits: Mapping[str, pl.DataFrame] | pl.DataFrame,
                 answerers: Mapping[str, Answerer] = ANSWERERS) -> pl.DataFrame:
    """Pair validity per answerer (one column each) by split, form and variant."""
    long = sanity_long(splits, answerers)
    wide = long.pivot(on="answerer", index=["split", "form", "variant", "kind", "n_pairs"],
                      values="pair_validity")
    return sort_by_variant(wide.select(["split", "form", "variant", "kind", "n_pairs",
                                        *answerers]))


def check_oracle(sanity: pl.DataFrame) -> None:
    """Raise if the oracle answerer does not make every pair valid."""
    bad = sanity.filter(pl.col("oracle") != 1.0)
    if bad.height:
        raise AssertionError(f"the oracle fails its own pairs:\n{bad}")


def sanity_chart(long: pl.DataFrame, split: str = "eval") -> alt.Chart:
    """Bars: pair validity of each answerer by variant (one split)."""
    data = long.filter((pl.col("split") == split) & (pl.col("variant") != "all"))
    return (
        alt.Chart(data)
        .mark_bar()
        .encode(
            x=alt.X("answerer:N", title=None, sort=list(ANSWERERS)),
            y=alt.Y("pair_validity:Q", title="pair validity", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("answerer:N", sort=list(ANSWERERS)),
            column=alt.Column("variant:N", title=None, sort=list(data["variant"].unique(
                maintain_order=True))),
        )
        .properties(width=60, height=120, title=f"Pair validity by variant ({split} split)")
    )
