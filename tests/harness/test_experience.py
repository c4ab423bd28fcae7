"""SAGE experience memory: entries and store, selective activation (eq. 8), the Reflector's
strict replies, the Curator, distillation and the predicted dimension."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.embedding import ScriptedEmbedder
from cogrsi_lib.harness.curator import curate, prune
from cogrsi_lib.harness.dimension import predict_dimension, unparsed_count
from cogrsi_lib.harness.distil import distil
from cogrsi_lib.harness.experience_store import Entry, ExperienceStore, Provenance, StoreError
from cogrsi_lib.harness.reflector import REFLECTOR_MARKER, Reflection
from cogrsi_lib.harness.scaffold import GENERIC_SCAFFOLD
from cogrsi_lib.harness.selector import Activation, Selector, coverage, query_text
from cogrsi_lib.harness.taxonomy import DIMENSIONS
from cogrsi_lib.llm.accounting import CallLedger
from cogrsi_lib.llm.fake import ScriptedBackend, prompt_text
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord, new_record

FB_STORY = (
    "Sally put the marble in the basket. Sally left the room. "
    "Anne moved the marble to the box. Sally came back."
)


def item(
    i: int,
    question: str = "Where will Sally look for the marble?",
    options: tuple[str, ...] = ("basket", "box"),
    gold: str = "A",
    qtype: str = "Belief: Location false beliefs",
) -> ReaderItem:
    return ReaderItem(
        f"q{i}",
        FB_STORY,
        question,
        options,
        gold,
        meta={"benchmark": "tombench", "question_type": qtype},
    )


def entry(
    eid: str,
    dim: str = "Belief",
    use: str = "u",
    helped: int = 0,
    harmed: int = 0,
    strategy: str | None = None,
    boundary: str = "b",
) -> Entry:
    return Entry(
        eid,
        dim,
        strategy or f"strategy {eid}",
        use,
        boundary,
        helped,
        harmed,
        (Provenance("added", "dev0"),),
    )


def axis(j: int, dim: int = 4) -> list[float]:
    v = [0.0] * dim
    v[j] = 1.0
    return v


# ---------------------------------------------------------------- store


def test_store_json_round_trip(tmp_path) -> None:
    e1 = Entry(
        "m1",
        "Belief",
        "Keep the last seen state.",
        "absent during a move",
        "the character watched",
        3,
        1,
        (Provenance("added", "d1", 1, "x"), Provenance("merged", "d7", 2, "y")),
    )
    e2 = entry("m4", "Emotion", helped=2)
    store = ExperienceStore([e1, e2], budget=5)
    path = tmp_path / "sage.json"
    store.to_json(path)
    back = ExperienceStore.from_json(path)
    assert back.entries == store.entries and back.budget == 5
    assert back.bucket("Emotion") == (e2,) and back.bucket("Desire") == ()
    # ids are never reused: the next new entry follows the highest id
    new = back.add("Desire", "s", "u", "b", Provenance("added", "d9"))
    assert new.entry_id == "m5"


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d["entries"][1].update(dimension="Mood"), "entry 1 ('m2')"),
        (lambda d: d["entries"][0].update(helped=-1), "entry 0 ('m1')"),
        (lambda d: d["entries"][1].pop("strategy"), "'strategy'"),
        (lambda d: d["entries"][1]["provenance"][0].update(op="deleted"), "provenance 0"),
        (lambda d: d["entries"][1].update(id="m1"), "duplicate id"),
        (lambda d: d["entries"][0].update(colour="red"), "unknown field"),
        (lambda d: d.update(budget=1), "exceed the budget"),
    ],
)
def test_malformed_store_file_names_file_and_entry(tmp_path, mutate, needle) -> None:
    data = ExperienceStore([entry("m1"), entry("m2")], budget=4).to_dict()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(StoreError) as err:
        ExperienceStore.from_json(path)
    assert str(path) in str(err.value) and needle in str(err.value)


def test_store_file_that_is_not_json(tmp_path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(StoreError, match="broken.json: not JSON"):
        ExperienceStore.from_json(path)


def test_unknown_bucket_and_bad_budget() -> None:
    with pytest.raises(ValueError):
        ExperienceStore([], budget=0)
    with pytest.raises(ValueError, match="unknown dimension"):
        ExperienceStore([]).bucket("Mood")


# ---------------------------------------------------------------- selective activation


def selector_for(
    entries: Sequence[Entry],
    use_vectors: dict[str, list[float]],
    query: list[float],
    k: int = 2,
    threshold: float = 0.5,
    **kw,
) -> tuple[Selector, ReaderItem]:
    it = item(0)
    vectors = {e.use: use_vectors[e.entry_id] for e in entries}
    vectors[query_text(it)] = query
    # boundaries: the last axis, orthogonal to the queries of the tests that use the veto
    emb = ScriptedEmbedder(vectors, default=axis(len(query) - 1, len(query)))
    return Selector(ExperienceStore(entries), emb, k=k, exact_threshold=threshold, **kw), it


def test_exact_recall_ranks_by_similarity_then_helpfulness() -> None:
    es = [
        entry("m1", use="u1", helped=5),
        entry("m2", use="u2"),
        entry("m3", use="u3"),
        entry("m4", use="u4", helped=9, dim="Emotion"),
    ]
    vecs = {"m1": [0.8, 0.6, 0, 0], "m2": [1, 0, 0, 0], "m3": [0.8, 0.6, 0, 0], "m4": [0, 1, 0, 0]}
    sel, it = selector_for(es, vecs, [1, 0, 0, 0], k=2, threshold=0.7)
    act = sel.select(it, "Emotion")
    assert act.level == "exact"
    # m2 is the most similar; m1 and m3 tie on similarity, m1 has the better h+ - h-
    assert [e.entry_id for e in act.entries] == ["m2", "m1"]
    assert act.scores[0] == pytest.approx(1.0) and act.scores[1] == pytest.approx(0.8)
    assert "strategy m2" in act.text and "strategy m3" not in act.text


def test_exact_recall_includes_the_threshold_itself() -> None:
    sel, it = selector_for([entry("m1", use="u1")], {"m1": axis(0)}, axis(0), threshold=1.0)
    assert sel.select(it, None).level == "exact"


def test_dimension_fallback_when_exact_recall_is_empty() -> None:
    es = [
        entry("m1", "Belief", "u1", helped=1),
        entry("m2", "Belief", "u2", helped=4),
        entry("m3", "Belief", "u3", harmed=2),
        entry("m4", "Emotion", "u4", helped=9),
    ]
    vecs = {f"m{i}": axis(1) for i in range(1, 5)}
    sel, it = selector_for(es, vecs, axis(0), k=2)
    act = sel.select(it, "Belief")
    assert act.level == "dimension"
    assert [e.entry_id for e in act.entries] == ["m2", "m1"]  # best h+ - h- of the bucket


def test_scaffold_when_bucket_is_empty_or_dimension_unknown() -> None:
    sel, it = selector_for([entry("m1", "Emotion", "u1")], {"m1": axis(1)}, axis(0))
    for dim in ("Belief", None):
        act = sel.select(it, dim)
        assert act.level == "scaffold" and act.entries == ()
        assert GENERIC_SCAFFOLD in act.text
    empty = Selector(ExperienceStore(), ScriptedEmbedder({}, default=axis(0)))
    assert empty.select(it, "Belief").level == "scaffold"


def test_boundary_veto() -> None:
    it = item(0)
    e = entry("m1", use="u1", boundary="b1")
    emb = ScriptedEmbedder({"u1": [1, 1, 0], "b1": [1, 0, 0], query_text(it): [1, 0, 0]})
    store = ExperienceStore([e])
    assert Selector(store, emb, exact_threshold=0.5).select(it, None).level == "scaffold"
    vetoless = Selector(store, emb, exact_threshold=0.5, boundary_veto=False)
    assert vetoless.select(it, None).level == "exact"


def test_ablation_modes() -> None:
    es = [entry("m1", "Belief", "u1"), entry("m2", "Emotion", "u2"), entry("m3", "Emotion", "u3")]
    vecs = {"m1": axis(0), "m2": axis(1), "m3": axis(1)}
    for mode, dim, level, ids in [
        ("exact_only", "Emotion", "exact", ["m1"]),
        ("dimension_only", "Emotion", "dimension", ["m2", "m3"]),  # ignores the exact hit
        ("store", None, "store", ["m1", "m2", "m3"]),
        ("cascade", "Emotion", "exact", ["m1"]),
    ]:
        sel, it = selector_for(es, vecs, axis(0), mode=mode)
        act = sel.select(it, dim)
        assert (act.level, [e.entry_id for e in act.entries]) == (level, ids), mode
    miss, it = selector_for(es, vecs, axis(2), mode="exact_only")
    assert miss.select(it, "Emotion").level == "none" and miss.select(it, "Emotion").text == ""
    route, it = selector_for(es, vecs, axis(0), mode="dimension_only")
    assert route.select(it, "Desire").level == "none"


@settings(max_examples=60, deadline=None)
@given(
    uses=st.lists(
        st.tuples(
            st.sampled_from(["Belief", "Emotion", "Desire"]),
            st.lists(st.floats(-1, 1), min_size=3, max_size=3),
        ),
        max_size=6,
    ),
    query=st.lists(st.floats(-1, 1), min_size=3, max_size=3),
    threshold=st.floats(-0.5, 1.0),
    predicted=st.sampled_from(["Belief", "Emotion", "Knowledge", None]),
    k=st.integers(1, 3),
)
def test_cascade_follows_eq_8(uses, query, threshold, predicted, k) -> None:
    q = np.asarray(query, dtype=np.float32)
    if np.linalg.norm(q) < 1e-3 or any(np.linalg.norm(v) < 1e-3 for _, v in uses):
        return
    es = [entry(f"m{i}", d, f"u{i}") for i, (d, _) in enumerate(uses, 1)]
    vecs = {f"m{i}": v for i, (_, v) in enumerate(uses, 1)}
    sel, it = selector_for(es, vecs, query, k=k, threshold=threshold, boundary_veto=False)
    act = sel.select(it, predicted)
    qn = q / np.linalg.norm(q)
    sims = [float(qn @ (np.asarray(v) / np.linalg.norm(v))) for _, v in uses]
    exact = {f"m{i}" for i, s in enumerate(sims, 1) if s >= threshold + 1e-5}
    maybe = {f"m{i}" for i, s in enumerate(sims, 1) if s >= threshold - 1e-5}
    bucket = {e.entry_id for e in es if e.dimension == predicted}
    got = {e.entry_id for e in act.entries}
    assert len(got) <= k
    if exact:
        assert act.level == "exact" and got <= maybe
        assert min(k, len(exact)) <= len(got) <= min(k, len(maybe))
    elif not maybe and bucket:
        assert act.level == "dimension" and got <= bucket and len(got) == min(k, len(bucket))
    elif not maybe:
        assert act.level == "scaffold" and not got


def act_of(level: str) -> Activation:
    return Activation("x", level, (), (), None, "")


def test_coverage_arithmetic() -> None:
    acts = [act_of(lv) for lv in ["exact"] * 3 + ["dimension"] * 4 + ["scaffold"]]
    cov = coverage(acts)
    assert cov.n == 8 and cov.exact == pytest.approx(3 / 8)
    assert cov.shares["dimension"] == pytest.approx(0.5)
    assert cov.shares["scaffold"] == pytest.approx(1 / 8) and cov.shares["none"] == 0
    assert sum(cov.shares.values()) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        coverage([])


# ---------------------------------------------------------------- Curator


def kw_embedder(table: dict[str, list[float]], default: list[float]) -> ScriptedEmbedder:
    """A vector per keyword: the first keyword found in a text decides its vector."""

    def vec(text: str) -> list[float]:
        for kw, v in table.items():
            if kw in text:
                return v
        return default

    return ScriptedEmbedder(vec)


def test_labels_update_helped_and_harmed() -> None:
    store = ExperienceStore([entry("m1", helped=1), entry("m2"), entry("m3", harmed=1)])
    emb = ScriptedEmbedder({}, default=axis(0))
    refl = Reflection({"m1": "helpful", "m2": "harmful", "m3": "neutral"})
    cur = curate(store, refl, "d1", emb)
    assert cur.action == "labels" and cur.applied == refl.labels
    assert [(e.helped, e.harmed) for e in store] == [(2, 0), (0, 1), (0, 1)]


@pytest.mark.parametrize(("threshold", "action"), [(0.85, "merged"), (0.95, "added")])
def test_merge_or_add_by_threshold(threshold: float, action: str) -> None:
    # cos(new, old) = 0.9
    emb = kw_embedder(
        {
            "old": [1, 0, 0],
            "new": [0.9, np.sqrt(1 - 0.81), 0],
            "other": [0.9, np.sqrt(1 - 0.81), 0],
        },
        axis(2, 3),
    )
    store = ExperienceStore(
        [entry("m1", strategy="old rule"), entry("m2", "Emotion", strategy="other rule")]
    )
    refl = Reflection({}, "Belief", "new rule", "when x", "not when y")
    cur = curate(store, refl, "d5", emb, merge_threshold=threshold, round_=2)
    assert cur.action == action and cur.similarity == pytest.approx(0.9, abs=1e-5)
    if action == "merged":
        assert len(store) == 2 and cur.entry_id == "m1"
        assert store.get("m1").provenance[-1] == Provenance("merged", "d5", 2, "new rule")
        assert store.get("m1").strategy == "old rule"
    else:
        assert len(store) == 3 and store.get(cur.entry_id).provenance == (
            Provenance("added", "d5", 2, "new rule"),
        )


def test_merge_only_within_the_dimension() -> None:
    emb = kw_embedder({"rule": [1, 0]}, [0, 1])
    store = ExperienceStore([entry("m1", "Emotion", strategy="old rule")])
    cur = curate(store, Reflection({}, "Belief", "new rule", "u", "b"), "d1", emb)
    assert cur.action == "added" and cur.similarity is None


def test_revise_rewrites_a_shown_entry() -> None:
    store = ExperienceStore([entry("m1", strategy="vague")])
    emb = ScriptedEmbedder({}, default=axis(0))
    cur = curate(store, Reflection({}, "Belief", "sharper", "u2", "b2", revise="m1"), "d3", emb)
    e = store.get("m1")
    assert cur.action == "revised" and e.strategy == "sharper" and e.use == "u2"
    assert e.provenance[-1].op == "revised" and e.provenance[-1].item_id == "d3"


def test_prune_worst_net_then_most_redundant() -> None:
    emb = kw_embedder(
        {"alpha": [1, 0, 0], "beta": [0.99, 0.141, 0], "gamma": [0, 1, 0], "delta": [0, 0, 1]},
        [0, 0, 1],
    )
    store = ExperienceStore(
        [
            entry("m1", strategy="alpha", helped=1),
            entry("m2", strategy="beta"),
            entry("m3", strategy="gamma", harmed=2, helped=1),
            entry("m4", strategy="delta"),
        ],
        budget=4,
    )
    cur = curate(store, Reflection({}, "Emotion", "delta two", "u", "b"), "d1", emb)
    assert cur.pruned == ("m3",)  # h- - h+ = 1 is the worst
    store.budget = 3
    # all left have h- - h+ = 0 except m1 (-1): of m2, m4 and the new entry (same vector
    # as m4: cosine 1) the most redundant go first, the newest on a tie
    assert prune(store, emb) == [cur.entry_id]
    store.budget = 2
    assert prune(store, emb) == ["m2"]  # cosine 0.99 with m1 beats m4's, now unique
    assert [e.entry_id for e in store] == ["m1", "m4"]


# ---------------------------------------------------------------- distillation

GOOD = {
    "dimension": "Belief",
    "strategy": "When a character misses a change, keep the last state they observed.",
    "use": "a character was away while something changed",
    "boundary": "the character saw the change",
    "labels": {},
    "revise": None,
}


def answer_with(correct_when_guided: bool = True):
    """A Generator: right exactly when given at least one entry (or never)."""
    calls: list[list[list[str]]] = []

    def fn(items: Sequence[ReaderItem], guidance: list[list[Entry]]) -> list[ItemRecord]:
        calls.append([[e.entry_id for e in g] for g in guidance])
        out = []
        for it, g in zip(items, guidance, strict=True):
            rec = new_record("gen", it)
            rec.answer = it.gold_key() if (g and correct_when_guided) else "B"
            rec.answer_text = it.option_text(rec.answer)
            rec.status = "ok"
            out.append(rec)
        return out

    fn.calls = calls  # type: ignore[attr-defined]
    return fn


def reply_json(**over) -> str:
    return json.dumps({**GOOD, **over})


def test_distil_adds_then_recalls_then_labels() -> None:
    items = [item(i) for i in range(3)]
    emb = kw_embedder(
        {"misses a change": [1, 0, 0], "away while": [0, 1, 0], "Where will": [0, 1, 0]}, [0, 0, 1]
    )

    def responder(job) -> str:
        text = prompt_text(job)
        assert REFLECTOR_MARKER in text
        if "- m1:" in text:
            return reply_json(strategy=None, labels={"m1": "helpful"})
        return reply_json()

    backend = ScriptedBackend(responder)
    gen = answer_with()
    store, log = distil(
        ExperienceStore(budget=4),
        items,
        gen,
        backend,
        emb,
        rounds=2,
        k=2,
        test_ids={"t1"},
        exact_threshold=0.9,
        merge_threshold=0.9,
    )
    # round 1: empty store, all wrong: three reflections, one add and two merges
    assert [r.action for r in log.reflections[:3]] == ["added", "merged", "merged"]
    assert len(store) == 1
    e = store.get("m1")
    assert [p.op for p in e.provenance] == ["added", "merged", "merged"]
    assert [p.item_id for p in e.provenance] == ["q0", "q1", "q2"]
    # round 2: exact recall of m1 for every item, all right, each reflection labels it
    assert gen.calls[1] == [["m1"]] * 3
    assert log.rounds[1].coverage["exact"] == 1.0 and log.rounds[1].n_correct == 3
    assert store.get("m1").helped == 3 and store.get("m1").harmed == 0
    assert backend.batches == [3, 3] and log.ledger.total().calls == 6


def test_distil_does_not_change_the_input_store() -> None:
    start = ExperienceStore([entry("m1")])
    emb = ScriptedEmbedder({}, default=axis(0))
    distil(start, [item(0)], answer_with(False), ScriptedBackend(reply_json()), emb)
    assert [e.entry_id for e in start] == ["m1"]


def m1_json(**over) -> str:
    """A reply to a prompt that showed entry m1."""
    return reply_json(**{"labels": {"m1": "neutral"}, **over})


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Sure! Here is my reflection.", "malformed_json"),
        ("[1, 2]", "malformed_json"),
        (m1_json(dimension="Mood"), "malformed_json"),
        (m1_json(strategy="Pick basket when unsure."), "names_gold"),
        (m1_json(strategy="Sally keeps her belief while away."), "names_story"),
        (m1_json(use=None), "missing_field"),
        (m1_json(use="  "), "missing_field"),
        (m1_json(dimension=None), "missing_field"),
        (m1_json(boundary=7), "malformed_json"),
        (m1_json(labels={"m9": "helpful"}), "malformed_json"),
        (m1_json(labels={"m1": "great"}), "malformed_json"),
        (m1_json(labels={}), "malformed_json"),
        (m1_json(revise="m9"), "malformed_json"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "labels"}), "malformed_json"),
    ],
)
def test_rejected_reflector_replies_are_logged(reply: str, reason: str) -> None:
    start = ExperienceStore([entry("m1", use="u1")])
    emb = ScriptedEmbedder({}, default=axis(0))  # everything recalls m1 exactly
    store, log = distil(start, [item(0)], answer_with(False), ScriptedBackend(reply), emb)
    (r,) = log.reflections
    assert r.status == "rejected" and r.reason == reason and r.text == reply and r.detail
    assert r.shown == ("m1",)
    assert log.rejections() == {reason: 1} and log.rounds[0].n_rejected == 1
    assert store.entries == start.entries


def test_fenced_reply_is_accepted() -> None:
    emb = ScriptedEmbedder({}, default=axis(0))
    reply = "```json\n" + reply_json() + "\n```"
    store, log = distil(
        ExperienceStore(), [item(0)], answer_with(False), ScriptedBackend(reply), emb
    )
    assert log.reflections[0].status == "ok" and len(store) == 1


def test_right_answers_without_guidance_are_not_reflected() -> None:
    emb = ScriptedEmbedder({}, default=axis(0))

    def always_right(items, guidance):
        out = []
        for it in items:
            rec = new_record("gen", it)
            rec.answer, rec.status = it.gold_key(), "ok"
            out.append(rec)
        return out

    backend = ScriptedBackend(reply_json())
    _, log = distil(ExperienceStore(), [item(0), item(1)], always_right, backend, emb)
    assert backend.calls == 0 and log.rounds[0].n_reflected == 0


def test_dev_test_overlap_raises() -> None:
    emb = ScriptedEmbedder({}, default=axis(0))
    backend = ScriptedBackend(reply_json())
    with pytest.raises(ValueError, match="q1"):
        distil(
            ExperienceStore(),
            [item(0), item(1)],
            answer_with(),
            backend,
            emb,
            test_ids=frozenset({"q1", "q7"}),
        )
    assert backend.calls == 0


# ---------------------------------------------------------------- predicted dimension


def test_predict_dimension_strict_and_batched() -> None:
    items = [item(0), item(1, "How does Sally feel?"), item(2, "Why?"), item(3, "Who?")]
    replies = {
        "Where will": '{"dimension":"Belief"}',
        "feel": '{"dimension": "Emotion"}',
        "Why?": '{"dimension": "Mood"}',
        "Who?": "Dimension: Belief",
    }

    def responder(job) -> str:
        question = next(ln for ln in prompt_text(job).splitlines() if ln.startswith("Question:"))
        return next(r for key, r in replies.items() if key in question)

    backend = ScriptedBackend(responder)
    ledgers = [CallLedger() for _ in items]
    preds = predict_dimension(items, backend, ledgers=ledgers)
    assert [p.dimension for p in preds] == ["Belief", "Emotion", None, None]
    assert [p.status for p in preds] == ["ok", "ok", "unparsed", "unparsed"]
    assert preds[2].raw == '{"dimension": "Mood"}' and unparsed_count(preds) == 2
    assert backend.batches == [4]
    assert all(lg.roles["dimension"].calls == 1 for lg in ledgers)
    assert backend.jobs[0].request.reply.schema()["properties"]["dimension"]["enum"] == list(
        DIMENSIONS)
    dim, status, raw = preds[0]
    assert (dim, status, raw) == ("Belief", "ok", '{"dimension":"Belief"}')


def test_every_dimension_name_parses() -> None:
    backend = ScriptedBackend(
        lambda job: json.dumps({"dimension": DIMENSIONS[int(job.seed) % 7]}))
    preds = predict_dimension([item(i) for i in range(20)], backend)
    assert all(p.dimension in DIMENSIONS for p in preds)


# ---------------------------------------------------------------- the real embedder

#: all-MiniLM-L6-v2 cosines of the entry's ``use`` with question + options, measured: false
#: belief 0.33-0.42 (Max 0.333 is the lowest), emotion 0.15-0.26 except the one that shares the
#: marble story (0.36, but 0.41 with the boundary, so the veto removes it). 0.28 leaves a margin
#: of 0.05 under the weakest false-belief question and 0.02 over the strongest plain emotion one.
MINILM_THRESHOLD = 0.28


def test_minilm_recalls_absent_character_strategy_for_false_belief_only() -> None:
    from cogrsi_lib.embedding import MiniLMEmbedder

    absent = Entry(
        "m1",
        "Belief",
        "When a character misses a state change, preserve the last state that character saw.",
        "Where will a character look for something, or where do they think it is, after it "
        "was moved while they were away?",
        "How does a character feel about what happened?",
    )
    store = ExperienceStore([absent])
    emb = MiniLMEmbedder()
    sel = Selector(store, emb, k=2, exact_threshold=MINILM_THRESHOLD)
    false_belief = [
        item(0),
        ReaderItem(
            "fb2",
            "x",
            "Where will Max look for the chocolate when he returns?",
            ("the green cupboard", "the blue cupboard"),
            "A",
        ),
        ReaderItem(
            "fb3",
            "x",
            "After coming back, where does Emma think the keys are?",
            ("in the drawer", "on the table"),
            "A",
        ),
        ReaderItem(
            "fb4",
            "x",
            "Where does Anne think Sally will search for the ball?",
            ("the crate", "the bag"),
            "A",
        ),
    ]
    emotion = [
        ReaderItem(
            "em1",
            "x",
            "How does Sally feel when she gets a present?",
            ("happy", "sad", "angry"),
            "A",
        ),
        ReaderItem(
            "em2",
            "x",
            "What emotion does Tom feel after losing the game?",
            ("disappointed", "excited", "proud"),
            "A",
        ),
        ReaderItem(
            "em3",
            FB_STORY,
            "How does Sally feel when she finds the marble is gone?",
            ("surprised", "happy", "bored"),
            "A",
        ),
    ]
    fb = sel.select_batch(false_belief, ["Belief"] * 4)
    em = sel.select_batch(emotion, ["Emotion"] * 3)
    assert all(a.level == "exact" and a.entries == (absent,) for a in fb), [a.scores for a in fb]
    assert min(a.scores[0] for a in fb) >= MINILM_THRESHOLD
    assert all(a.level == "scaffold" and a.entries == () for a in em)
    assert coverage(fb + em).exact == pytest.approx(4 / 7)
    # the two plain emotion questions fall under the threshold on their own; the one about the
    # marble story passes it and is kept out by the entry's boundary
    no_veto = Selector(store, emb, k=2, exact_threshold=MINILM_THRESHOLD, boundary_veto=False)
    assert [a.level for a in no_veto.select_batch(emotion, [None] * 3)] == [
        "scaffold",
        "scaffold",
        "exact",
    ]
