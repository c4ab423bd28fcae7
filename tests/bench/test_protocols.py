"""Every benchmark's two protocols, the registry's deviations table and its README copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogrsi_lib import bench
from cogrsi_lib.bench.cli import app
from cogrsi_lib.bench.protocol import PROTOCOLS, UNIFORM_PROMPT, Deviation, Protocol, view_of
from cogrsi_lib.bench.report import (
    constant_baselines,
    deviations_table,
    evaluate,
    readme_with_deviations,
)
from cogrsi_lib.bench.schema import Item
from cogrsi_lib.bench.scoring import judge_option

from .conftest import real

README = Path(bench.__file__).with_name("README.md")


@pytest.mark.parametrize("name", bench.names())
def test_every_benchmark_has_both_protocols_naming_their_release(name):
    b = bench.get(name)
    official, uniform = (b.protocol(p) for p in PROTOCOLS)
    assert official.name == "official" and uniform.name == "uniform"
    assert official.release or b.release, f"{name}: the official protocol names no release"
    assert UNIFORM_PROMPT in uniform.deviations
    assert official.deviations, f"{name}: an official protocol with no listed deviation"
    with pytest.raises(ValueError, match="unknown protocol"):
        b.protocol("paper")


def test_deviations_table_comes_from_the_registry():
    table = deviations_table()
    assert set(table["protocol"]) == set(PROTOCOLS)
    assert set(table["benchmark"]) == {bench.get(n).title for n in bench.names()}
    broken = table.filter(table["broken"])
    assert set(broken["benchmark"]) >= {"OpenToM", "ToMBench"}
    assert table.height == sum(len(bench.get(n).protocol(p).deviations)
                               for n in bench.names() for p in PROTOCOLS)


def test_readme_deviations_block_is_current_and_the_cli_checks_it():
    text = README.read_text(encoding="utf-8")
    assert readme_with_deviations(text) == text, "run `cogrsi bench deviations --update`"
    result = CliRunner().invoke(app, ["deviations", "--check"])
    assert result.exit_code == 0, result.output
    listed = CliRunner().invoke(app, ["deviations", "tombench"])
    assert "5 tries with shuffled options" in listed.output
    with pytest.raises(ValueError, match="no .* block"):
        readme_with_deviations("no markers here")


def test_views_relabel_options_and_map_answers_back():
    item = Item(benchmark="x", id="x/1", story_id="s", context="c", question="q?",
                question_type="t", gold="B", options=(("A", "cat"), ("B", "dog"), ("C", "owl")))
    view = view_of(item, [2, 0, 1], number=3)
    assert view.options == (("A", "owl"), ("B", "cat"), ("C", "dog"))
    assert view.gold == "C" and view.id == "x/1#v3"
    assert view.extra["view_of"] == {"A": "C", "B": "A", "C": "B"}
    with pytest.raises(ValueError):
        view_of(item, [0, 0, 1])
    proto = Protocol("official", judge_option, lambda i, j: {}, lambda i, j: None,
                     views=lambda it: [view], deviations=(Deviation("a", "b", "c"),))
    verdict = proto.score(item, "C)")
    assert verdict.correct and verdict.parsed == "B"  # shown C is the original B
    with pytest.raises(ValueError, match="2 replies for 1 views"):
        proto.score(item, ["A", "B"])


def test_evaluate_under_each_protocol_records_it():
    items = real("tombench")[:30]
    official = bench.get("tombench").protocol("official")
    replies = {it.id: [f"[[{v.gold}]]" for v in official.present(it)] for it in items}
    ev = evaluate("tombench", items, replies, protocol="official")
    assert ev.summary["accuracy"] == 1.0 and ev.protocol == "official"
    assert set(ev.records["protocol"]) == {"official"}
    uniform = evaluate("tombench", items, {it.id: f"[[{it.gold}]]" for it in items})
    assert uniform.summary["accuracy"] == 1.0 and uniform.protocol == "uniform"


def test_constant_baselines_differ_by_protocol_where_the_release_differs():
    items = real("bigtom")
    sample = [it for it in items if it.story_id in {f"bigtom/{k:03d}" for k in range(40)}]
    official = constant_baselines("bigtom", sample, 1, "official")
    uniform = constant_baselines("bigtom", sample, 1, "uniform")
    score = {t["protocol"][0]: t.filter(t["metric"] == "score")["score"][0]
             for t in (official, uniform)}
    # the release shows the true answer first for every condition of a template or for none,
    # so a constant letter's score moves in steps of whole templates
    true_first = sum(bench.bigtom.release_true_first(k) for k in range(40))
    assert score["official"] == pytest.approx(max(true_first, 40 - true_first) / 40)
    assert score["official"] != score["uniform"]


def test_ask_official_sends_every_view_as_the_release_prompt_and_scores_it():
    from cogrsi_lib.bench.runner import ask_official
    from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text

    items = real("tombench")[:6]
    backend = ScriptedBackend(lambda job: "The answer is [[B]]")
    run = ask_official("tombench", items, backend, max_tokens=16, batch_size=7)
    assert backend.calls == 5 * len(items) == run.views.height
    assert all("[[Answer Index]]" in prompt_text(j) for j in backend.jobs)
    assert all(j.request.params.temperature == 0.0 and j.request.constraint is None
               for j in backend.jobs)  # free text unless asked structured
    official = bench.get("tombench").protocol("official")
    expected = [official.score(it, ["[[B]]"] * 5).correct for it in items]
    assert run.evaluation.records["correct"].to_list() == expected
    with pytest.raises(ValueError, match="not reproduced"):
        ask_official("tomi", real("tomi")[:2], backend)


@pytest.mark.parametrize("name", ["opentom", "tomi"])
def test_closed_answer_sets_contain_the_gold_and_its_text_is_judged_right(name):
    from cogrsi_lib.reader.evaluate import _judge
    from cogrsi_lib.reader.items import from_bench_item

    items = real(name)
    with_choices = [it for it in items if it.choices]
    assert len(with_choices) >= len(items) - 2
    uniform = bench.get(name).protocol("uniform")
    for it in with_choices[::7]:
        if not uniform.score(it, it.gold).correct:
            continue  # "drawer" vs "another drawer": the release's overlap rule ties
        reader_item = from_bench_item(it)
        key = reader_item.gold_key()  # the gold is one of the choices
        assert reader_item.options == it.choices
        assert _judge(name, it, key).correct, it.id  # the letter is judged as its text
        wrong = next(c for c in it.choices if c.lower() != it.gold.lower())
        assert not uniform.score(it, wrong).correct, it.id


@pytest.mark.parametrize("name", ["tombench", "bigtom", "hi-tom", "opentom"])
def test_every_reply_the_answer_form_allows_is_read_by_the_official_rule(name):
    official = bench.get(name).protocol("official")
    assert any(d.aspect == "decoding" for d in official.deviations)
    checked = 0
    for it in real(name)[::97][:40]:
        for view in official.present(it):
            fmt = official.answer(view)
            if fmt is None:
                continue
            if fmt.kind == "choice":
                replies = fmt.choices()
            else:  # regex forms: one reply per label, in the form asked for
                replies = ([f"[[{lab}]]" for lab in view.labels] if name == "tombench" else
                           [f"Answer:{lab}) {text[:60]}" for lab, text in view.options])
            for reply in replies:
                fmt.parse(reply)  # the form accepts it
                j = official.judge(view, reply)
                assert not j.malformed, (view.id, reply)
                checked += 1
            right = [r for r in replies if official.judge(view, r).correct]
            gold_ok = official.judge(view, view.gold).correct if name == "opentom" else True
            assert len(right) == 1 or (name == "opentom" and not gold_ok), (view.id, right)
    assert checked > 40


def test_ask_official_structured_holds_replies_to_the_answer_form():
    from cogrsi_lib.bench.runner import ask_official
    from cogrsi_lib.llm.fake import ScriptedBackend

    items = real("bigtom")[:3]
    backend = ScriptedBackend(lambda job: "Answer:a) she thinks so")
    run = ask_official("bigtom", items, backend, structured=True)
    assert all(j.request.structured and j.request.reply.family == "bench.official.bigtom"
               for j in backend.jobs)
    assert run.views["structured"].all()
    assert run.evaluation.summary["score"] == pytest.approx(
        sum(bench.get("bigtom").protocol("official").present(it)[0].gold == "a"
            for it in items) / 3)


def test_ask_official_all_skips_benchmarks_without_a_released_prompt():
    from cogrsi_lib.bench.runner import ask_official_all
    from cogrsi_lib.llm.fake import ScriptedBackend

    loaded = {"hi-tom": real("hi-tom")[:2], "tomi": real("tomi")[:2]}
    backend = ScriptedBackend(lambda job: "A. x")
    scores, views, skipped = ask_official_all(loaded, backend)
    assert skipped == ["tomi"]
    assert scores["benchmark"].to_list() == ["hi-tom"] and scores["asks"][0] == 2
    assert views.height == 2 and set(views["benchmark"]) == {"hi-tom"}
