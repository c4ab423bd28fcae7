"""reader.evaluate with the scripted fake backend: adapter, pair validity, unparsed, tables."""

from __future__ import annotations

import polars as pl
import pytest

from cogrsi_lib.baselines import make_system
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.llm.types import Job
from cogrsi_lib.pairs import generate_split, pair_validity, to_frame
from cogrsi_lib.reader import ReaderConfig
from cogrsi_lib.reader import evaluate as ev

from .helpers import as_reply

CONFIG = ReaderConfig(sample_max_tokens=32, perception_max_tokens=64)


@pytest.fixture(scope="module")
def split() -> pl.DataFrame:
    return to_frame(generate_split("eval", 23, 16, 12))


@pytest.fixture(scope="module")
def records(split: pl.DataFrame) -> pl.DataFrame:
    return ev.select_pairs(split, 4)


def tombench_item(item_id: str, question: str, gold: str) -> Item:
    return Item(
        benchmark="tombench", id=item_id, story_id=f"s-{item_id}",
        context="Anna put the cake in the fridge. Anna left. Ben ate the cake.",
        question=question, question_type="belief", gold=gold,
        options=(("A", "fridge"), ("B", "table"), ("C", "oven"), ("D", "bin")),
        extra={"task": "false-belief"},
    )


BENCH = {"tombench": [tombench_item("t1", "Where does Anna think the cake is?", "A"),
                      tombench_item("t2", "Where is the plate now?", "B")]}


def responder(records: pl.DataFrame, side_a_only: bool = False):
    """Answer each pair version with its gold container (on side b, with a wrong option when
    ``side_a_only``); the version is the one whose story appears verbatim in the prompt
    (the longest, if several do). Benchmark items: ``A`` (right on t1, wrong on t2)."""
    rows = list(records.iter_rows(named=True))

    def reply(job: Job) -> str:
        text = prompt_text(job)
        if "cake" in text or "plate" in text:
            return as_reply(job, "Answer: A")
        hits = [r for r in rows if r["story"].strip() in text]
        if not hits:
            return "I cannot tell."
        r = max(hits, key=lambda r: len(r["story"]))
        pick = r["gold"]
        if side_a_only and r["side"] == "b":
            pick = next(o for o in r["options"] if o != r["gold"])
        return as_reply(job, f"Answer: {chr(65 + list(r['options']).index(pick))}")

    return reply


def zero_shot(backend: ScriptedBackend, name: str):
    system = make_system("zero_shot", backend, CONFIG)
    system.name = name
    return system


def test_pair_items_map_fields(records: pl.DataFrame) -> None:
    items = ev.pair_items(records)
    assert len(items) == records.height
    forms = set()
    for item, row in zip(items, records.iter_rows(named=True), strict=True):
        forms.add(row["form"])
        assert item.item_id == f"{row['pair_id']}/{row['side']}"
        assert item.story_id == row["pair_id"] and item.story == row["pair_id"]
        assert item.context == row["story"] and item.question == row["question"]
        assert item.options == tuple(row["options"])
        assert item.option_text(item.gold_key()) == row["gold"]
        assert item.meta["source"] == ev.PAIRS and item.meta["side"] == row["side"]
        if row["form"] == "dialogue":
            assert item.kind == "conversation" and item.character == row["target"]
        else:
            assert item.kind == "narrative" and item.character is None
    assert forms == {"narrative", "dialogue"}  # select_pairs alternates forms


def test_select_pairs_keeps_both_versions(split: pl.DataFrame) -> None:
    picked = ev.select_pairs(split, 5)
    assert picked.height == 10
    assert picked.group_by("pair_id").len()["len"].to_list() == [2] * 5
    assert ev.select_pairs(split, 0).height == 0
    assert picked["variant"].n_unique() == 5  # one pair per variant first


def test_bench_items_source_and_labels() -> None:
    items = ev.bench_items(BENCH["tombench"], "tombench")
    assert [i.meta["source"] for i in items] == ["tombench", "tombench"]
    assert items[0].labels == ("A", "B", "C", "D") and items[1].gold_key() == "B"


def test_pair_validity_per_system_from_records(records: pl.DataFrame) -> None:
    right = ScriptedBackend(responder(records))
    half = ScriptedBackend(responder(records, side_a_only=True))
    result = ev.evaluate([zero_shot(right, "right"), zero_shot(half, "half")], records)
    assert set(result.items["system"]) == {"right", "half"}
    pv = result.pair_validity()
    overall = {s: v.overall.row(0, named=True) for s, v in pv.items()}
    n_pairs = records["pair_id"].n_unique()
    assert overall["right"]["pair_validity"] == 1.0
    assert overall["right"]["valid_pairs"] == n_pairs
    assert overall["half"]["item_accuracy"] == 0.5
    assert overall["half"]["pair_validity"] == 0.0
    # the same as scoring the answers directly
    direct = {(r["pair_id"], r["side"]): (r["gold"] if r["side"] == "a" else "nowhere")
              for r in records.iter_rows(named=True)}
    assert pair_validity(records, direct).overall["valid_pairs"][0] == 0
    table = result.pair_validity_table()
    overall_rows = table.filter((pl.col("form") == "all") & (pl.col("variant") == "all"))
    assert dict(zip(overall_rows["system"], overall_rows["pair_validity"], strict=True)) == {
        "right": 1.0, "half": 0.0}


def test_unparsed_answers_count_as_wrong(records: pl.DataFrame) -> None:
    mute = ScriptedBackend("I cannot tell.")
    result = ev.evaluate([zero_shot(mute, "mute")], records, BENCH)
    items = result.items
    assert (items["parse_status"] == "unparsed").all()
    assert items["answer"].is_null().all()
    assert (~items["correct"]).all() and (items["score"] == 0.0).all()
    acc = result.accuracy_table()
    assert acc["unparsed_answers"].to_list() == acc["questions"].to_list()
    assert (acc["accuracy"] == 0.0).all()
    v = result.pair_validity()["mute"].overall.row(0, named=True)
    assert v["n_unparsed"] == records.height and v["pair_validity"] == 0.0
    b = result.bench_table()
    assert b["score"].to_list() == [0.0] and b["malformed"].to_list() == [2]


def test_tables_have_expected_rows(records: pl.DataFrame) -> None:
    backend = ScriptedBackend(responder(records))
    systems = [make_system(n, backend, CONFIG) for n in ("zero_shot", "sc6", "cogrsi")]
    result = ev.evaluate(systems, records, BENCH)
    n_q = records.height + 2
    assert result.items.height == 3 * n_q
    assert result.systems == ["zero_shot", "sc6", "cogrsi"]
    acc = result.accuracy_table()
    assert sorted(zip(acc["source"], acc["system"], strict=True)) == sorted(
        (src, s) for src in ("pairs", "tombench") for s in result.systems)
    # tombench: "A" is right on t1 only, by the benchmark's own rule
    tb = acc.filter(pl.col("source") == "tombench")
    assert tb["score"].to_list() == [0.5] * 3
    pairs_acc = acc.filter((pl.col("source") == "pairs") & (pl.col("system") == "zero_shot"))
    assert pairs_acc["accuracy"][0] == 1.0
    bench_t = result.bench_table()
    assert bench_t.height == 3 and set(bench_t["score"]) == {0.5}
    cost = result.cost_table()
    assert cost.height == 3 * 3  # all, pairs, tombench
    sc6 = cost.filter((pl.col("system") == "sc6") & (pl.col("source") == "all")).row(
        0, named=True)
    assert sc6["calls_per_q"] == 6.0 and sc6["token_ratio_vs_sc6"] == 1.0
    zs = cost.filter((pl.col("system") == "zero_shot") & (pl.col("source") == "all"))
    assert zs["calls_per_q"][0] == 1.0
    assert cost.filter(pl.col("system") == "cogrsi")["calls_per_q"].min() >= 7.0
    thr = result.throughput_table()
    assert thr.height == 3 and thr["calls"].sum() == result.items["calls"].sum()
    pv = result.pair_validity_table()
    assert pv.filter(pl.col("form") == "all").height == 3
    chart = result.cost_accuracy_chart().to_dict()
    assert len(ev.ReaderEval(result.items, records).cost_accuracy()) == 6
    marks = [layer["mark"]["type"] for layer in chart["layer"]]
    assert marks == ["rule", "text", "rule", "point"]  # chance, its label, intervals, systems
    points = [v for v in chart["datasets"].values() if v and "tokens_per_q" in v[0]]
    assert points and {r["system"] for r in points[0]} == set(result.systems)


def test_runs_reseed_sampled_calls_only_and_models_stay_apart(records: pl.DataFrame) -> None:
    """reader_eval's models × runs: run r seeds every sampled call anew (so SC's votes can
    change) and asks each greedy call as in run 0; scores come per run and over runs."""
    def by_seed(job: Job) -> str:  # sampled calls: an answer that follows the sample's seed
        if job.request.params.temperature > 0:
            return as_reply(job, f"Answer: {'AB'[job.seed % 2]}")
        return responder(records)(job)

    backends = {"m1": ScriptedBackend(by_seed, model="m1"),
                "m2": ScriptedBackend(responder(records), model="m2")}
    cells = []
    for model, backend in backends.items():
        for run in (0, 1):
            config = CONFIG.model_copy(update={"run": run})
            systems = [make_system(n, backend, config) for n in ("zero_shot", "sc6")]
            cells.append((model, ev.evaluate(systems, records, BENCH, run=run)))
    runs = ev.ReaderRuns(cells)

    jobs = backends["m1"].jobs
    greedy = [j for j in jobs if j.request.params.temperature == 0]
    sampled = [j for j in jobs if j.request.params.temperature > 0]
    assert len({j.seed for j in greedy}) < len(greedy)  # the same greedy requests twice
    assert {j.request.params.seed for j in greedy} == {CONFIG.seed}
    assert {j.request.params.seed for j in sampled} == {CONFIG.seed, CONFIG.seed + 1}

    items = runs.items
    assert items.group_by("model", "run", "system").len().height == 2 * 2 * 2
    assert set(items["model"]) == {"m1", "m2"} and set(items["run"]) == {0, 1}
    per_run = runs.per_run(ev.ReaderEval.accuracy_table)
    acc = runs.accuracy_table()
    assert acc.height * 2 == per_run.height and set(acc["runs"]) == {2}
    for row in acc.iter_rows(named=True):
        both = per_run.filter((pl.col("model") == row["model"]) & (pl.col("source") ==
                              row["source"]) & (pl.col("system") == row["system"]))["score"]
        assert row["score"] == pytest.approx(both.mean())
        assert row["score_sd"] == pytest.approx(both.std(ddof=1))
        assert (row["score_min"], row["score_max"]) == (both.min(), both.max())
    # greedy zero-shot and the scripted model's SC repeat themselves; m1's SC votes by seed
    assert (acc.filter(pl.col("model") == "m2")["score_sd"] == 0).all()
    assert (acc.filter(pl.col("system") == "zero_shot")["score_sd"] == 0).all()
    # pooled over runs, per model: each run's item paired with the same run's reference
    paired = runs.paired_table("sc6")
    assert set(paired["model"]) == {"m1", "m2"}
    assert (paired["items"] == items.filter((pl.col("model") == "m1")
                                            & (pl.col("system") == "sc6")).height).all()
    chance = runs.chance_table()
    assert chance.group_by("model").len()["len"].to_list() == [2, 2]
    assert set(runs.bench_table()["runs"]) == {2}
    assert runs.cost_accuracy_chart() is not None
