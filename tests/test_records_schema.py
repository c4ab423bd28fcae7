"""One record schema: every model stage's writer gives the declared core, then its own
columns, in the declared types; an all-null column keeps its type."""

from __future__ import annotations

import json

import polars as pl
import pytest
from stage_records import stage_records

from cogrsi_lib.records_schema import CORE, FILE, STAGES, RecordSchema, stage_schema

CALLS = {"reader_eval": {"plain", "annotated"}, "harness": {"harness"},
         "pddl_mind": {"problem", "actions", "answer"}, "scorecard": {"plain", "perspective",
                                                                      "store"},
         "loops": {"plain", "annotated"}, "audit": {"translation"},
         "train": {"direct", "traced"}}


def test_the_seven_model_stages_declare_their_records():
    assert STAGES == ("reader_eval", "harness", "pddl_mind", "scorecard", "loops", "audit",
                      "train")
    for stage in STAGES:
        schema = stage_schema(stage)
        assert schema.stage == stage and list(schema.schema)[:len(CORE)] == list(CORE)
        assert not set(schema.extension) & set(CORE)
    with pytest.raises(KeyError, match="no records declared"):
        stage_schema("oracle_worlds")


@pytest.mark.parametrize("stage", STAGES)
def test_a_stage_writes_the_core_columns_then_its_own_in_the_declared_types(stage, tmp_path):
    frame = stage_records(stage)
    schema = stage_schema(stage)
    assert frame.height > 0
    schema.check(frame)  # exactly the declared columns, order and types
    path = schema.write(frame, tmp_path)
    assert path.name == FILE
    assert dict(pl.read_parquet(path).schema) == schema.schema
    # the core means the same thing in every stage
    assert frame["stage"].unique().to_list() == [stage]
    for col in ("run", "system", "model", "source", "item_id", "story_id", "prompt", "reply",
                "parse_status", "calls", "prompt_tokens", "completion_tokens"):
        assert frame[col].null_count() == 0, col
    assert (frame["calls"] >= 1).all() and (frame["cached_calls"] <= frame["calls"]).all()
    for row in frame.iter_rows(named=True):
        prompt, reply = json.loads(row["prompt"]), json.loads(row["reply"])
        assert prompt and set(prompt) <= set(reply) and set(reply) <= CALLS[stage], row
        for messages in prompt.values():
            assert messages and messages[-1]["role"] == "user"
            assert all(set(m) == {"role", "content"} for m in messages)
        assert all(isinstance(t, str) for texts in reply.values() for t in texts)
        if row["parse_status"] == "ok":
            assert row["answer"] is not None
        if row["gold"] is None:
            assert row["correct"] is None


def test_reader_records_are_right_when_the_answer_is_the_gold():
    for stage in ("reader_eval", "harness", "scorecard", "loops"):
        frame = stage_records(stage).filter(pl.col("gold").is_not_null())
        assert frame["correct"].to_list() == (frame["answer"] == frame["gold"]).fill_null(
            False).to_list(), stage


def test_a_reader_record_keeps_each_prompt_once_and_every_sample_reply():
    frame = stage_records("reader_eval")
    sc6 = frame.filter(pl.col("system") == "sc6").row(0, named=True)
    prompt, reply = json.loads(sc6["prompt"]), json.loads(sc6["reply"])
    samples = json.loads(sc6["samples_json"])
    assert list(prompt) == ["plain"] and len(reply["plain"]) == 6 == len(samples)
    assert reply["plain"] == [s["text"] for s in samples]
    assert all("prompt" not in s for s in samples)  # the prompt is in its own column, once
    # the grounded reader under the loops' scripted world perceives: two views, two prompts
    grounded = stage_records("loops").row(0, named=True)
    views, texts = json.loads(grounded["prompt"]), json.loads(grounded["reply"])
    assert set(views) == set(texts) == {"annotated", "plain"}
    assert views["annotated"] != views["plain"]
    assert sum(map(len, texts.values())) == grounded["n_samples"]


def test_each_stage_fills_the_core_its_own_way():
    loops = stage_records("loops")
    final = loops.filter(pl.col("cohort") == "final")
    assert set(final["system"]) == {"none", "expert", "gated_library"}
    assert sorted(final["run"].unique()) == [0, 1] and final["round"].null_count() == final.height
    rounds = loops.filter(pl.col("cohort") != "final")
    assert set(rounds["system"]) == {"gated_library"} and rounds["round"].null_count() == 0
    assert set(rounds["source"]) == {"oracle"}
    pddl = stage_records("pddl_mind")
    assert set(pddl["system"]) == {"no_verification", "no_domain", "full"}
    assert (pddl["calls"] == 3).all()
    audit = stage_records("audit")
    assert (audit["item_id"] == audit["story_id"]).all() and set(audit["system"]) == {"A", "B"}
    scorecard = stage_records("scorecard")
    assert set(scorecard["source"]) == {"nested", "applied", "strategic"}
    train = stage_records("train")
    assert set(train["system"]) == {"base", "trained"}
    assert set(train["model"]) == {"m-base", "m-trained"}


def test_an_all_null_column_keeps_its_declared_type(tmp_path):
    schema = RecordSchema("demo", {"note": pl.Utf8, "score": pl.Float64, "flag": pl.Boolean})
    frame = schema.frame([{"item_id": "a"}, {"item_id": "b", "score": None}])
    assert dict(frame.schema) == schema.schema
    path = tmp_path / "x.parquet"
    frame.write_parquet(path)
    assert dict(pl.read_parquet(path).schema) == schema.schema
    assert frame["stage"].to_list() == ["demo", "demo"]
    # a stage's real run: no arbitration ran, yet the column is text, not Null
    harness = stage_records("harness")
    assert harness["arbitration_choice"].null_count() == harness.height
    assert harness.schema["arbitration_choice"] == pl.Utf8


def test_the_declaration_refuses_what_it_does_not_declare():
    schema = RecordSchema("demo", {"note": pl.Utf8})
    with pytest.raises(ValueError, match=r"undeclared columns \['nope'\]"):
        schema.frame([{"item_id": "a", "nope": 1}])
    with pytest.raises(ValueError, match="are core columns"):
        RecordSchema("demo", {"answer": pl.Utf8})
    frame = schema.frame([{"item_id": "a"}])
    with pytest.raises(ValueError, match="differ from the declaration"):
        schema.check(frame.with_columns(pl.col("run").cast(pl.Int32)))
    with pytest.raises(ValueError, match="column order"):
        schema.check(frame.select(list(reversed(frame.columns))))
    conformed = schema.conform(frame.select("item_id", "note"))
    schema.check(conformed)
    assert conformed["stage"].to_list() == ["demo"]
