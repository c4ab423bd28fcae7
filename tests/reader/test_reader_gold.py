"""Gold perceivers in place of the perception call (cogrsi_lib/reader/gold.py) and CogRSI
Table 27 (cogrsi_lib/baselines/gold_perceivers.py)."""

from __future__ import annotations

from dataclasses import replace

import polars as pl
import pytest

from cogrsi_lib import bench
from cogrsi_lib.baselines import make_system
from cogrsi_lib.baselines.gold_perceivers import gold_perceivers_table, with_and_without_gold
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.oracle import Question, World
from cogrsi_lib.oracle.render import render, render_question
from cogrsi_lib.pairs import generate_split, to_frame
from cogrsi_lib.pairs.lexicon import lexicon
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader import evaluate as ev
from cogrsi_lib.reader.gold import (
    CELLS,
    GOLD_KEY,
    GoldPerceiversError,
    gold_items,
    gold_perception,
    perceiver_items,
    percept_items,
    table_cell,
)

from .helpers import Script, as_reply, kind_of, narrative

GOLD = ReaderConfig(perceivers="gold")


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    return ev.select_pairs(to_frame(generate_split("eval", 23, 16, 12)), 6)


def hand_world() -> dict:
    """Ann and Ben see the ball in the basket; Ben leaves; Ann moves it to the box."""
    return {"agents": ["Ann", "Ben"], "room": "kitchen", "object": "ball",
            "containers": ["basket", "box"],
            "initial": {"location": "basket", "present": ["Ann", "Ben"]},
            "events": [{"type": "leave", "agent": "Ben"},
                       {"type": "move", "agent": "Ann", "to": "box"}]}


def hand_records() -> pl.DataFrame:
    world = World.from_dict(hand_world())
    story = render(world, lexicon("eval").narrative).text
    return pl.DataFrame([{"pair_id": "h0", "side": "a", "split": "eval", "form": "narrative",
                          "world_json": world.to_json(), "story": story,
                          "options": ["basket", "box"]}])


def test_a_hand_built_world_gives_its_gold_perceivers_and_answers() -> None:
    items = perceiver_items(hand_records(), 10)
    by_question = {it.question: it for it in items}
    assert len(items) == 4  # Ann, Ben; Ann-Ben, Ben-Ann
    lines = items[0].lines()
    gold = gold_perception(items[0]).witnesses
    assert len(gold) == len(lines)
    left = next(i for i, line in enumerate(lines) if "Ben" in line and "kitchen" in line
                and i > 1)
    moved = next(i for i, line in enumerate(lines) if "box" in line)
    assert set(gold[left]) == {"Ann", "Ben"}  # the leaver sees himself go
    assert gold[moved] == ("Ann",)  # Ben was out of the room
    world = World.from_dict(hand_world())
    t = lexicon("eval").narrative
    ben = by_question[render_question(world, Question("location", ("Ben",)), t)]
    ann_ben = by_question[render_question(world, Question("location", ("Ann", "Ben")), t)]
    ben_ann = by_question[render_question(world, Question("location", ("Ben", "Ann")), t)]
    ann = by_question[render_question(world, Question("location", ("Ann",)), t)]
    assert (ben.gold, ben.meta["question_type"]) == ("basket", "FB1")
    assert (ann.gold, ann.meta["question_type"]) == ("box", "TB1")
    assert (ann_ben.gold, ann_ben.meta["question_type"]) == ("basket", "FB2")
    assert (ben_ann.gold, ben_ann.meta["question_type"]) == ("basket", "FB2")


def test_the_questions_fill_table_27_s_four_columns_in_turn(records: pl.DataFrame) -> None:
    items = perceiver_items(records, 200)
    cells = [it.meta["question_type"] for it in items]
    assert set(cells) == set(CELLS.values())
    assert set(cells[:4]) == set(CELLS.values())  # one of each before a second of any
    assert perceiver_items(records, 3) == items[:3]
    for it in items:
        assert len(gold_perception(it).witnesses) == len(it.lines())
        assert it.gold in it.options


def test_a_story_that_no_longer_renders_from_its_world_is_refused() -> None:
    rows = hand_records().with_columns(pl.lit("1 Someone else's story.").alias("story"))
    with pytest.raises(GoldPerceiversError, match="renders a different story"):
        perceiver_items(rows, 4)


def test_gold_perceivers_replace_the_call_and_nothing_else() -> None:
    gold = [["Aria"], ["Aria", "Aiden"], ["Aria", "Aiden"], ["Aiden"], ["Aria", "Aiden"]]
    item = narrative().with_meta(**{GOLD_KEY: gold})
    script = Script()
    rec = make_system("cogrsi", ScriptedBackend(script), GOLD, "expert").answer(item)
    assert script.count("perception") == 0
    assert rec.perception.status == "gold" and rec.perception.witnesses[3] == ("Aiden",)
    annotated = [prompt_text(j) for k, j in script.seen if k == "annotated"]
    assert annotated and all("[witnessed by: Aria, Aiden]" in t.split("\n5.")[1]
                             for t in annotated)
    own = Script()
    make_system("cogrsi", ScriptedBackend(own), ReaderConfig(), "expert").answer(item)
    assert own.count("perception") == 1
    assert [kind_of(j) for _, j in own.seen][1:] == [kind_of(j) for _, j in script.seen]


@pytest.mark.parametrize("gold, match", [(None, "has no gold perceivers"),
                                         ([["Aria"]], "1 gold perceiver lists for 5 lines")])
def test_an_item_without_fitting_gold_perceivers_fails_by_name(gold, match) -> None:
    item = narrative("q9") if gold is None else narrative("q9").with_meta(**{GOLD_KEY: gold})
    with pytest.raises(GoldPerceiversError, match=f"q9.*{match}|{match}"):
        make_system("perceptom", ScriptedBackend(Script()), GOLD).answer(item)


def grounded_only(job) -> str:
    """Right (the item's gold, named in the prompt's options) only on a view that shows who
    witnessed each line; the model's own perception is always malformed."""
    text = prompt_text(job)
    k = kind_of(job)
    if k == "perception":
        return "I cannot tell."
    if k == "arbitration":
        return as_reply(job, "Answer: 1")
    right = "[witnessed by:" in text or "past scenes in sequence" in text
    return as_reply(job, "Answer: A" if right else "Answer: B")


def test_table_27_rows_gold_against_own_perception_and_sc_as_control() -> None:
    items = [replace(it, options=(it.gold, "elsewhere"))
             for it in perceiver_items(hand_records(), 4)]
    backend = ScriptedBackend(grounded_only)
    systems = with_and_without_gold(["sc6", "perceptom", "cogrsi"], backend, ReaderConfig(),
                                    "expert")
    assert [s.name for s in systems] == ["sc6", "sc6+gold", "perceptom", "perceptom+gold",
                                         "cogrsi", "cogrsi+gold"]
    runs = ev.ReaderRuns([("m", ev.evaluate_items(systems, items, run=0)),
                          ("m", ev.evaluate_items(systems, items, run=1))])
    t = gold_perceivers_table(runs)
    assert t.columns[:4] == ["model", "source", "system", "perceivers"]
    assert {"FB1", "TB1", "FB2", "TB2", "all", "gain"} <= set(t.columns)
    rows = {(r["system"], r["perceivers"]): r for r in t.iter_rows(named=True)}
    assert set(rows) == {(s, p) for s in ("sc6", "perceptom", "cogrsi")
                         for p in ("model", "gold")}
    assert all(r["questions"] == 4 and r["runs"] == 2 for r in rows.values())
    sc, sc_gold = rows[("sc6", "model")], rows[("sc6", "gold")]
    assert not sc["calls_perception"] and sc_gold["gain"] == 0.0 and sc["gain"] is None
    for name in ("perceptom", "cogrsi"):
        own, gold = rows[(name, "model")], rows[(name, "gold")]
        assert own["calls_perception"] and not gold["calls_perception"]
        assert own["all"] == 0.0 and gold["all"] == 1.0 and gold["gain"] == 1.0
        assert gold["FB1"] == gold["TB1"] == gold["FB2"] == 1.0


def test_percept_tomi_question_types_name_table_27_s_columns() -> None:
    assert [table_cell(q) for q in ("first_order_1_tom", "first_order_0_no_tom",
                                    "second_order_1_tom", "second_order_0_no_tom", "FB2",
                                    "reality", None)] == ["FB1", "TB1", "FB2", "TB2", "FB2",
                                                          None, None]


@pytest.mark.skipif(not bench.available("percept-tomi"),
                    reason="Percept-ToMi is not shipped (no licence); read from the shared "
                           "benchmarks where they are present")
def test_percept_tomi_items_carry_the_release_s_perceivers_line_by_line() -> None:
    items = percept_items(bench.load("percept-tomi"))
    assert len(items) == 600
    assert {table_cell(it.meta["question_type"]) for it in items} == set(CELLS.values())
    for it in items:
        assert len(gold_perception(it).witnesses) == len(it.lines())
        assert it.meta["original"].id == it.item_id
    with pytest.raises(GoldPerceiversError, match="not a Percept-ToMi item"):
        percept_items(bench.load("tomi")[:1])


def test_asking_for_percept_tomi_where_it_is_absent_stops_naming_where_it_looked(
        tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COGRSI_SHARED_BENCHMARKS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=f"Percept-ToMi: missing .* under {tmp_path}"):
        gold_items(hand_records(), 4, percept_tomi=2)
    assert len(gold_items(hand_records(), 4)) == 4


def test_questions_asked_of_records_without_a_narrative_version_stop_the_run(records) -> None:
    dialogue = records.filter(pl.col("form") == "dialogue")
    with pytest.raises(GoldPerceiversError, match="no narrative version"):
        perceiver_items(dialogue, 4)
    assert perceiver_items(dialogue, 0) == []
