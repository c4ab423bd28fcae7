"""Shared scoring rules and each benchmark's own rule on representative replies."""

from __future__ import annotations

import numpy as np
import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import scoring
from cogrsi_lib.bench.report import (
    constant_baselines,
    constant_reply,
    main_score,
    results_table,
    results_template,
)
from cogrsi_lib.bench.schema import Item

from .conftest import real

ABCD = (("A", "Backpack"), ("B", "Handbag"), ("C", "Tote bag"), ("D", "Briefcase"))


@pytest.mark.parametrize("reply, expected", [
    ("[[B]]", "B"), ("(c)", "C"), ("A) Backpack", "A"), ("D.", "D"), ("B", "B"),
    ("The answer is C.", "C"), ("Answer: (d)", "D"),
    ("I think it is in the handbag.", "B"),          # the text of exactly one option
    ("(A) or (B)", None),                            # two options named: malformed
    ("A man walks in", None),                        # a word, not a choice
    ("the answer is a bit unclear", None),
    ("", None),
])
def test_parse_option_is_strict(reply, expected):
    assert scoring.parse_option(reply, ABCD) == expected


def test_parse_option_prefers_the_longest_contained_option():
    opts = (("a", "box"), ("b", "red box"))
    assert scoring.parse_option("It is in the red box", opts) == "b"


def test_binary_and_list_rules_follow_fantom():
    assert scoring.binary_answer("Yes, she does.") == "yes"
    assert scoring.binary_answer("no") == "no"
    assert scoring.binary_answer("She does not know about it.") == "no"
    assert scoring.binary_answer("Maybe") is None
    assert scoring.list_answer_correct(["Ann", "Bo"], ["Cy"], "ann and bo")
    assert not scoring.list_answer_correct(["Ann", "Bo"], ["Cy"], "Ann, Bo, Cy")


def test_token_f1_all_star_and_f1_averages_known_values():
    assert scoring.token_f1("the cat sat", "the cat") == pytest.approx(0.8)
    assert scoring.token_f1("a", "b") == 0.0
    assert scoring.all_star(["s1", "s1", "s2", "s3"], [True, False, True, True]) == 2 / 3
    gold, pred = ["y", "y", "n", "n"], ["y", "n", "n", "none"]
    # F1(y) = 2*1/(2*1+0+1) = 2/3; F1(n) = 2*1/(2*1+1+1) = 1/2; "none" is only predicted and
    # counts as a class with F1 0, as in sklearn's macro average
    assert scoring.macro_f1(gold, pred) == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)
    assert scoring.weighted_f1(["y", "n", "n", "n"], ["y", "n", "n", "y"]) == pytest.approx(
        (1 * (2 / 3) + 3 * (4 / 5)) / 4)  # F1(y) = 2/3 with support 1, F1(n) = 4/5 with 3
    assert scoring.majority_vote(["B", "A", "A", "B", "C"]) == "B"  # tie: first seen


def test_tombench_extract_answer_rule():
    from cogrsi_lib.bench.tombench import extract_answer

    assert extract_answer("blah [[C]] blah [[A]]") == "A"   # [[A]] is checked first
    assert extract_answer("I pick [B]") == "B"
    assert extract_answer("Option D seems right") == "D"    # last capital A-D
    assert extract_answer("no letter here") is None         # the release would say "A"


def test_opentom_label_rules():
    from cogrsi_lib.bench import opentom

    assert opentom.coarse_location_labels("No, it is not.", "No") == ("no", "no")
    assert opentom.coarse_location_labels("Yes and no", "Yes") == ("yes", "?")
    assert opentom.fullness_labels("It becomes emptier.", "less full") == ("less full",
                                                                           "less full")
    assert opentom.attitude_labels("Answer: a", "positive") == ("positive", "positive")
    assert opentom.attitude_labels("positive or negative", "neutral")[1] == "?"
    assert opentom.fine_location_labels("in the red bucket", "bucket", "red bucket",
                                        "a donation bin") == ("?", "original")
    assert opentom.fine_location_labels("the donation bin", "a donation bin", "basket",
                                        "a donation bin") == ("moved", "moved")
    assert opentom.remove_determinant("attic") == "attic"  # the release's bug not copied


def test_tomi_rule_needs_exactly_the_gold_location():
    item = real("tomi")[1]  # Where will Aria look for the grapefruit? blue_container
    judge = bench.get("tomi").judge
    assert judge(item, "blue_container").correct
    assert judge(item, "She will look in the blue container.").correct
    assert not judge(item, "green_bucket").correct
    assert judge(item, "blue_container or green_bucket").malformed


def test_bigtom_and_hitom_option_match():
    items = real("bigtom")
    it = items[0]
    judge = bench.get("bigtom").judge
    assert judge(it, f"{it.gold}) {it.option_text(it.gold)}").correct
    assert judge(it, it.option_text(it.gold)).correct  # full option text, one option
    hi = real("hi-tom")[0]
    hj = bench.get("hi-tom").judge
    assert hj(hi, hi.option_text(hi.gold)).correct
    assert hj(hi, f"{hi.gold}.").correct


def test_constant_reply_picks_the_option_with_that_text():
    it = Item("x", "x/1", "x/s", "c", "q", "t", "B", options=(("A", "Yes"), ("B", "No")))
    assert constant_reply(it, "No") == "B)"
    assert constant_reply(it, "maybe") == "maybe"


def test_constant_baseline_on_tomi_is_the_commonest_container():
    items = real("tomi")
    table = constant_baselines("tomi", items)
    row = table.filter(table["metric"] == "score").row(0, named=True)
    golds = [it.gold for it in items]
    commonest = max(set(golds), key=golds.count)
    assert row["constant"] == commonest
    assert row["score"] == pytest.approx(golds.count(commonest) / len(golds))


def test_results_table_main_is_mean_over_the_eight():
    import polars as pl

    scores = pl.DataFrame({
        "system": ["S"] * 8 + ["T"] * 7,
        "benchmark": list(bench.MAIN_BENCHMARKS) + list(bench.MAIN_BENCHMARKS[:7]),
        "score": [0.1 * k for k in range(1, 9)] + [0.5] * 7,
    })
    table = results_table(scores)
    assert table.columns == ["system", "FANToM", "SimpleToM", "ExploreToM", "Hi-ToM",
                             "OpenToM", "ToMBench", "CogToM", "BigToM", "Main"]
    s = table.row(0, named=True)
    assert s["Main"] == pytest.approx(np.mean([0.1 * k for k in range(1, 9)]))
    assert table.row(1, named=True)["Main"] is None  # BigToM missing: no Main
    assert main_score({"fantom": 1.0}) != main_score({"fantom": 1.0})  # NaN
    empty = results_template(["CogRSI", "SC (k=9)"])
    assert empty.height == 2 and empty.drop("system").null_count().row(0) == (2,) * 9
