"""Stage tables: verdicts by arm, trial gains, known-verdict checks, rules sources."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cogrsi_lib.audit import (
    check_expected,
    expected_check,
    handwritten_rules,
    load_rules,
    read_rules,
    table1_with_invalid_share,
    trial_gain_bins,
    trial_gain_chart,
    trial_gain_table,
    verdicts_by_arm,
)
from cogrsi_lib.audit.report import ExpectedVerdictError
from cogrsi_lib.reports import save_chart


def verdict_rows(**cols):
    n = len(cols["verdict"])
    base = {"rule_id": [f"r{i}" for i in range(n)], "arm": ["x"] * n,
            "translation_a": ["ok"] * n, "translation_b": ["ok"] * n,
            "capped_a": [False] * n, "capped_b": [False] * n, "admitted": [None] * n,
            "outcome_a": ["ok"] * n, "outcome_b": ["ok"] * n,
            "trial_gain": [None] * n}
    base.update(cols)
    return pl.DataFrame(base, schema_overrides={"trial_gain": pl.Float64,
                                                "admitted": pl.Boolean})


def test_verdicts_by_arm_counts_shares_and_admissions():
    v = verdict_rows(
        arm=["a", "a", "a", "a", "b", "b"],
        verdict=["invalid", "invalid", "valid", "vacuous", "ambiguous", "ambiguous"],
        admitted=[True, False, True, None, True, False],
        translation_b=["ok", "ok", "ok", "ok", "capped", "ok"],
        outcome_b=["ok", "ok", "ok", "ok", "no_code", "memory"],
        capped_b=[False, False, False, False, True, False],
    )
    t = {r["arm"]: r for r in verdicts_by_arm(v).iter_rows(named=True)}
    assert (t["a"]["rules"], t["a"]["invalid"], t["a"]["valid"], t["a"]["decided"]) == (4, 2, 1, 3)
    assert t["a"]["invalid_of_decided"] == pytest.approx(2 / 3)
    assert t["a"]["invalid_of_all"] == pytest.approx(0.5)
    assert (t["a"]["admitted"], t["a"]["admitted_decided"], t["a"]["admitted_invalid"]) == (2, 2, 1)
    assert t["b"]["invalid_of_decided"] is None and t["b"]["without_code"] == 1
    assert t["b"]["capped"] == 1 and t["b"]["failed_run"] == 2 and t["a"]["failed_run"] == 0
    assert t["all"]["rules"] == 6 and t["all"]["invalid_of_decided"] == pytest.approx(2 / 3)


def test_table1_gets_each_arm_s_invalid_share_in_points(tmp_path):
    pl.DataFrame({"label": ["none", "expert", "a", "b", "c"], "dev": [1.0, 2.0, 3.0, 4.0, 5.0],
                  "invalid_rules": [None] * 5}, schema_overrides={"invalid_rules": pl.Utf8}
                 ).write_csv(tmp_path / "table1.csv")
    by_arm = verdicts_by_arm(verdict_rows(arm=["a", "a", "a", "a", "b", "b"],
                                          verdict=["invalid", "invalid", "valid", "vacuous",
                                                   "ambiguous", "ambiguous"]))
    t = table1_with_invalid_share(tmp_path, by_arm)
    assert t["label"].to_list() == ["none", "expert", "a", "b", "c"]
    assert t["invalid_rules"].to_list() == [None, None, 50.0, 0.0, None]
    # b's 0 is over no decided rule: the column beside it says so
    assert t["decided_rules"].to_list() == [None, None, 3, 0, None]
    assert t.columns[-2:] == ["invalid_rules", "decided_rules"]
    assert t["dev"].to_list() == [1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(FileNotFoundError, match="run the loops stage first"):
        table1_with_invalid_share(tmp_path / "nowhere", by_arm)


def test_trial_gain_table_difference_interval_and_tv():
    v = verdict_rows(verdict=["valid"] * 4 + ["invalid"] * 4 + ["ambiguous"],
                     trial_gain=[0.5, 0.5, 1.5, 1.5, 0.5, 0.5, 0.5, 0.5, 9.0])
    row = trial_gain_table(v).row(0, named=True)
    assert (row["n_valid"], row["n_invalid"]) == (4, 4)
    assert row["difference"] == pytest.approx(0.5)
    assert row["low"] <= 0.5 <= row["high"]
    assert row["tv_distance"] == pytest.approx(0.5)  # half the valid mass sits in another bin
    bins = trial_gain_bins(v)
    assert bins.filter(verdict="valid")["share"].to_list() == [0.5, 0.5]


def test_trial_gain_without_gains_is_empty_not_an_error(tmp_path):
    v = verdict_rows(verdict=["valid", "invalid"])
    row = trial_gain_table(v).row(0, named=True)
    assert row["n_valid"] == 0 and row["difference"] is None
    v2 = verdict_rows(verdict=["valid", "invalid"], trial_gain=[-1.0, 2.0])
    paths = save_chart(trial_gain_chart(v2), tmp_path / "gain")
    spec = json.loads(paths[1].read_text())
    assert spec["mark"]["type"] == "bar"


def test_expected_check_and_its_assertion():
    v = verdict_rows(verdict=["valid", "invalid"]).with_columns(
        expected=pl.Series(["valid", "valid"]), reason=pl.Series(["", ""]))
    table = expected_check(v)
    assert table["matches"].to_list() == [True, False]
    with pytest.raises(ExpectedVerdictError):
        check_expected(table)
    check_expected(table.head(1))


def test_rules_sources(tmp_path):
    hw = load_rules("handwritten")
    assert hw.equals(handwritten_rules()) and hw["expected"].null_count() == 0
    path = tmp_path / "cands.jsonl"
    path.write_text('{"rule_id": "c1", "text": "When A: B.", "arm": "gated", "trial_gain": -1.5}\n'
                    '{"rule_id": "c2", "text": "When C: D."}\n')
    df = load_rules("cands.jsonl", root=tmp_path)
    assert df["arm"].to_list() == ["gated", "unknown"]
    assert df["trial_gain"].to_list() == [-1.5, None] and df["expected"].null_count() == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"rule_id": "c1", "text": "x"}\n{"rule_id": "c1", "text": "y"}\n')
    with pytest.raises(ValueError, match="repeats"):
        read_rules(bad)
    with pytest.raises(ValueError, match="lacks"):
        (tmp_path / "nt.csv").write_text("rule_id\nx\n")
        read_rules(tmp_path / "nt.csv")
    # several sources: in order, each rule under its arm; the hand-written part picked out
    both = load_rules(["handwritten", "cands.jsonl"], root=tmp_path)
    assert both["rule_id"].to_list() == [*hw["rule_id"], "c1", "c2"]
    from cogrsi_lib.audit import handwritten_part

    assert handwritten_part(both).equals(hw)
    with pytest.raises(ValueError, match=r"more than one rules source: \['c1', 'c2'\]"):
        load_rules(["cands.jsonl", "cands.jsonl"], root=tmp_path)
    with pytest.raises(FileNotFoundError, match="the loops stage writes"):
        load_rules(["handwritten", "reports/loops/none.parquet"], root=tmp_path)


def test_why_a_run_has_no_counterexamples_or_trial_gain() -> None:
    import polars as pl

    from cogrsi_lib.audit import why_no_counterexamples, why_no_trial_gain

    v = pl.DataFrame({"rule_id": ["a", "b", "c"], "verdict": ["vacuous", "ambiguous", "vacuous"],
                      "trial_gain": [None, None, None]}, schema_overrides={"trial_gain":
                                                                           pl.Float64})
    assert "(1 ambiguous, 2 vacuous)" in why_no_counterexamples(v)
    assert "record no trial gain" in why_no_trial_gain(v)
    gains = v.with_columns(pl.Series("trial_gain", [1.0, 2.0, None]),
                           pl.Series("verdict", ["valid", "valid", "invalid"]))
    assert why_no_trial_gain(gains) == "no invalid rule among the 2 with a trial gain"
    both = gains.with_columns(pl.Series("trial_gain", [1.0, 2.0, 0.5]))
    assert why_no_trial_gain(both) is None


def test_the_verdict_table_keeps_its_declared_types_when_a_column_is_all_null(tiny_sample,
                                                                             translators):
    from cogrsi_lib.audit import Auditor, verdict_table

    rules = handwritten_rules()
    vacuous = rules.filter(pl.col("expected") == "vacuous").head(1)
    audits = Auditor(tiny_sample, translators).audit_many(
        list(zip(vacuous["rule_id"], vacuous["text"], strict=True)))
    table = verdict_table(audits, vacuous)
    assert table["verdict"].to_list() == ["vacuous"]
    for column in ("agreement", "agreement_either", "agreement_both"):
        assert table.schema[column] == pl.Float64, column  # null here, typed all the same
    assert table.schema["n_both"] == pl.Int64 and table.schema["decided"] == pl.Boolean
    assert verdict_table([], rules.head(0)).schema == table.schema
