"""The rule-executing reader and the symbolic registration comparison (CogRSI §4.2-4.3, §6)."""

from __future__ import annotations

import json
from dataclasses import replace

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogrsi_lib.audit import sample_audit_worlds
from cogrsi_lib.audit.audit import AuditConfig
from cogrsi_lib.audit.handwritten import IN_ROOM, MISSED_MOVE, NOTHING_REACHED
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.loops.registration_study import (
    REASONS,
    StudyConfig,
    comparison_table,
    run_study,
)
from cogrsi_lib.loops.slot import PrincipleSystem
from cogrsi_lib.loops.symbolic import (
    BANK_BY_TEXT,
    BANK_RULES,
    SymbolicReader,
    bank_translators,
    item_views,
)
from cogrsi_lib.oracle.world import World
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.principles import format_rule_library, parse_rule_library

ITEMS = oracle_dev_items(40, seed=5)
VALID = [BANK_BY_TEXT[t] for t in (NOTHING_REACHED.text,)]


def lib(*texts: str) -> str:
    """A library principle from rule texts "When c: r"."""
    return format_rule_library(parse_rule_library(
        "\n".join(f"({i}) {t}" for i, t in enumerate(texts, 1))))


def world_item(world: dict, chain: list[str], item_id: str = "w-q0") -> ReaderItem:
    """A location question about a hand-made oracle world."""
    w = World.from_dict(world)
    return ReaderItem(item_id=item_id, context="(story)", question="Where?",
                      options=tuple(w.containers),
                      gold=None, story_id="w",
                      meta={"world_json": w.to_json(),
                            "question_json": json.dumps({"kind": "location", "chain": chain})})


ASLEEP_WORLD = {
    "agents": ["Anne", "Bob"], "containers": ["basket", "box", "tray"], "object": "marble",
    "initial": {"location": "basket"},
    "events": [{"type": "sleep", "agent": "Anne"},
               {"type": "move", "agent": "Bob", "to": "box"}],
}


def with_gold(item: ReaderItem, gold: str) -> ReaderItem:
    return replace(item, gold=gold)


def test_reader_is_a_principle_system() -> None:
    assert isinstance(SymbolicReader(), PrincipleSystem)


def test_default_answers_reality_or_initial() -> None:
    item = world_item(ASLEEP_WORLD, ["Anne"])
    real = SymbolicReader().with_principle("").answer_batch([item])[0]
    init = SymbolicReader(default="initial").with_principle("").answer_batch([item])[0]
    none = SymbolicReader(default="none").with_principle("").answer_batch([item])[0]
    assert (real.answer_text, init.answer_text, none.answer) == ("box", "basket", None)
    assert real.extra == {"entry": None, "default": True}
    with pytest.raises(ValueError):
        SymbolicReader(default="guess")


def test_first_applicable_entry_answers() -> None:
    item = with_gold(world_item(ASLEEP_WORLD, ["Anne"]), "basket")
    reader = SymbolicReader()
    # in_room (A) applies to Anne (in the room, asleep) and answers the true location
    first = reader.with_principle(lib(IN_ROOM.text, NOTHING_REACHED.text)).answer_batch([item])
    assert first[0].answer_text == "box" and first[0].extra["entry"] == 1
    assert first[0].correct is False
    second = reader.with_principle(lib(NOTHING_REACHED.text, IN_ROOM.text)).answer_batch([item])
    assert second[0].answer_text == "basket" and second[0].extra["entry"] == 1
    assert second[0].correct is True
    # a rule that does not apply is passed over: Bob saw the move, nothing_reached skips him
    bob = world_item(ASLEEP_WORLD, ["Bob"], "w-q1")
    rec = reader.with_principle(lib(NOTHING_REACHED.text, IN_ROOM.text)).answer_batch([bob])
    assert rec[0].answer_text == "box" and rec[0].extra["entry"] == 2
    rec = reader.with_principle(lib(NOTHING_REACHED.text)).answer_batch([bob])
    assert rec[0].extra == {"entry": None, "default": True}


def test_unknown_rule_texts_are_recorded_and_ignored() -> None:
    reader = SymbolicReader()
    unknown = "When the moon is full: everyone knows everything."
    item = world_item(ASLEEP_WORLD, ["Anne"])
    rec = reader.with_principle(lib(unknown, NOTHING_REACHED.text)).answer_batch([item])
    assert rec[0].answer_text == "basket" and rec[0].extra["entry"] == 2
    assert unknown in reader.unknown
    reader.with_principle("Think about who saw what.").answer_batch([item])
    assert "Think about who saw what." in reader.unknown
    assert all(t not in reader.unknown for t in BANK_BY_TEXT)


def test_items_carry_their_world() -> None:
    world, q = item_views(ITEMS[0])
    assert q.chain and q.kind in ("location", "property")
    assert set(world.containers) == set(ITEMS[0].options) or q.kind == "property"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), rule=st.sampled_from(VALID),
       default=st.sampled_from(["reality", "initial"]))
def test_a_valid_rule_is_right_wherever_both_readings_apply_and_agree(seed: int, rule,
                                                                       default: str) -> None:
    """Valid means no *shared* counterexample (CogRSI §4.3): where the two translations
    apply and give the same answer, that answer is the oracle's. One reading alone may be
    wrong where the other disagrees with it (e.g. a translation that ignores peeks)."""
    items = oracle_dev_items(4, seed=seed)
    runs = {r: SymbolicReader(reading=r, default=default).with_principle(lib(rule.text))
            .answer_batch(items) for r in ("A", "B")}
    shared = [a for a, b in zip(runs["A"], runs["B"], strict=True)
              if a.extra["entry"] and b.extra["entry"] and a.answer == b.answer]
    assert all(a.correct for a in shared)


def test_the_in_room_rule_lowers_accuracy_on_an_asleep_world() -> None:
    item = with_gold(world_item(ASLEEP_WORLD, ["Anne"]), "basket")  # the oracle's answer
    for reader, base in ((SymbolicReader(default="initial"), ""),
                         (SymbolicReader(), lib(NOTHING_REACHED.text))):
        before = reader.with_principle(base).answer_batch([item])[0]
        after = reader.with_principle(lib(IN_ROOM.text, *parse_texts(base))).answer_batch(
            [item])[0]
        assert before.correct is True and after.correct is False


def parse_texts(principle: str) -> list[str]:
    return [r.text() for r in parse_rule_library(principle)] if principle else []


def test_bank_translations_pass_the_sandbox_policy_and_reuse_the_audit_rules() -> None:
    assert BANK_BY_TEXT[MISSED_MOVE.text].code_a == MISSED_MOVE.code_a
    for role in ("A", "B"):
        reader = SymbolicReader(reading=role)
        for r in BANK_RULES:
            assert reader.compiled(r.text) is not None
    assert [t.name for t in bank_translators()] == ["A", "B"]


@pytest.fixture(scope="module")
def study():
    cfg = StudyConfig(seeds=(0, 1), rounds=3, dev_stories=120, final_size=60,
                      pairs={"gate_seed": 11, "eval_seed": 23, "n_gate_narrative": 8,
                             "n_gate_dialogue": 8, "n_eval_narrative": 8,
                             "n_eval_dialogue": 8})
    sample = sample_audit_worlds(200, 7)
    return run_study(cfg, sample, AuditConfig(workers=2))


def test_audit_arm_never_keeps_an_invalid_rule(study) -> None:
    audit = study.candidates.filter(pl.col("arm") == "audit_library")
    assert audit.filter(pl.col("admitted") & (pl.col("verdict") == "invalid")).height == 0
    kept = study.kept.filter(pl.col("arm") == "audit_library")
    assert "invalid" not in kept["verdict"].to_list()
    # the other arms do meet invalid rules, so the check is not empty
    assert study.candidates.filter(pl.col("verdict") == "invalid").height > 0


def test_comparison_counts_add_up(study) -> None:
    table = comparison_table(study)
    arms = table.filter(pl.col("proposals").is_not_null())
    assert arms.height == 3 * 3  # three arms, two seeds and the pooled row
    for row in arms.iter_rows(named=True):
        assert row["proposals"] == row["admissions"] + sum(row[f"rejected_{r}"]
                                                           for r in REASONS)
        assert row["counts_add_up"]
        assert row["kept_rules"] == sum(row[f"kept_{v}"] for v in
                                        ("valid", "invalid", "ambiguous", "vacuous"))
    pooled = arms.filter(pl.col("seed").is_null())
    per_seed = arms.filter(pl.col("seed").is_not_null())
    for arm in pooled["arm"]:
        assert pooled.filter(pl.col("arm") == arm)["proposals"][0] == \
            per_seed.filter(pl.col("arm") == arm)["proposals"].sum()
    assert not study.unknown


def test_a_run_that_kept_no_rule_has_typed_share_columns(study) -> None:
    table = comparison_table(replace(study, kept=study.kept.clear()))
    shares = [c for c in table.columns if c.startswith("kept_") and c.endswith("_share")]
    assert len(shares) == 4
    assert all(table[c].dtype == pl.Float64 and table[c].null_count() == table.height
               for c in shares)


def test_params_yaml_registration_setting_is_a_valid_config() -> None:
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    params = yaml.safe_load((root / "params.yaml").read_text())["audit"]["registration"]
    cfg = StudyConfig.from_params(params)
    assert set(cfg.arms) == {"accuracy_library", "gated_library", "audit_library"}
    with pytest.raises(ValueError):
        StudyConfig.from_params({"rounds": 2, "colour": "red"})
