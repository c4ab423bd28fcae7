"""The reader's component ablations (cogrsi_lib/baselines/ablations.py, CogRSI Table 2): what
each takes away, and Table 2's rows against the full reader."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.baselines import make_system
from cogrsi_lib.baselines.ablations import ABLATIONS, ablation_table
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.pairs import generate_split, to_frame
from cogrsi_lib.reader import EXPERT_PRINCIPLE, ReaderConfig
from cogrsi_lib.reader import evaluate as ev

from .helpers import Script, narrative
from .test_reader_evaluate import BENCH, CONFIG, responder


@pytest.fixture(scope="module")
def records() -> pl.DataFrame:
    return ev.select_pairs(to_frame(generate_split("eval", 23, 16, 12)), 4)


#: the readings disagree four to two: the full reader arbitrates
SPLIT = dict(annotated="Aiden left.\nAnswer: A", plain="Answer: B", arbitration="Answer: 2")


def answer(name: str, script: Script):
    backend = ScriptedBackend(script)
    return make_system(name, backend, ReaderConfig(), "expert").answer(narrative()), backend


def test_each_ablation_takes_away_its_part_and_nothing_else() -> None:
    full, _ = answer("cogrsi", Script(**SPLIT))
    assert full.arbitration.ran and full.answer == "B"

    noarb, _ = answer("cogrsi_noarb", s := Script(**SPLIT))
    assert not noarb.arbitration.ran and noarb.answer == "A"  # the vote's leader, 4 to 2
    assert s.count("perception") == 1 and s.count("annotated") == 4 and s.count("plain") == 2

    plain, _ = answer("cogrsi_plain", s := Script(**SPLIT))
    assert s.count("perception") == 0 and s.count("annotated") == 0 and s.count("plain") == 6
    assert plain.answer == "B" and plain.perception.status == "none"

    annotated, _ = answer("cogrsi_annotated", s := Script(**SPLIT))
    assert s.count("perception") == 1 and s.count("annotated") == 6 and s.count("plain") == 0
    assert annotated.answer == "A"

    _, backend = answer("cogrsi_noprinciple", Script(**SPLIT))
    assert not any(EXPERT_PRINCIPLE[:60] in prompt_text(j) for j in backend.jobs)
    _, backend = answer("cogrsi", Script(**SPLIT))
    assert any(EXPERT_PRINCIPLE[:60] in prompt_text(j) for j in backend.jobs)


def test_an_ablation_shares_the_full_reader_s_requests(tmp_path) -> None:
    """The plain-only reader's first two plain samples are the full reader's, from the
    cache: an ablation pays only for what it asks anew."""
    from cogrsi_lib.llm import CachedBackend

    inner = ScriptedBackend(Script(**SPLIT))
    make_system("cogrsi", CachedBackend(inner, tmp_path), ReaderConfig(), "expert"
                ).answer(narrative())
    before = inner.calls
    rec = make_system("cogrsi_plain", CachedBackend(inner, tmp_path), ReaderConfig(),
                      "expert").answer(narrative())
    assert inner.calls - before == 4 and rec.ledger.total().cached_calls == 2


def test_table2_rows_against_the_full_reader(records: pl.DataFrame) -> None:
    backend = ScriptedBackend(responder(records))
    systems = [make_system(n, backend, CONFIG) for n in ABLATIONS]
    runs = ev.ReaderRuns([("m", ev.evaluate(systems, records, BENCH))])
    t = ablation_table(runs)
    assert t["system"].to_list() == list(ABLATIONS)
    assert t["stage"].to_list() == ["3", "2", "3", "3", "3"]
    full = t.filter(pl.col("system") == "cogrsi").row(0, named=True)
    assert full["difference"] == 0.0 and full["questions"] == len(records) + 2
    items = runs.items
    for row in t.iter_rows(named=True):
        mine = items.filter(pl.col("system") == row["system"])["score"]
        assert row["score"] == pytest.approx(mine.mean())
        if row["system"] != "cogrsi":
            ref = items.filter(pl.col("system") == "cogrsi")["score"]
            assert row["difference"] == pytest.approx(mine.mean() - ref.mean())
            assert row["low"] <= row["difference"] <= row["high"]
    # without the full reader there is no Table 2
    only = ev.ReaderRuns([("m", ev.evaluate(systems[1:2], records, BENCH))])
    assert ablation_table(only).height == 0
