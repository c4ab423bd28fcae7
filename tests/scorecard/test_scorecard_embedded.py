"""The scorecard on the embedded CPU model: the bare variant on two Suite A items, and every
variant through Suites A-D at a tiny size with a real cross-agent target.

They check that real replies go through the strict parsers and the accounting (a reply that
breaks the format is recorded as unparsed, with its reason, never mapped to an option), that
the variants share the bare prompt's replies through the completion cache, and that the
profile and the gates are computed from real runs; never accuracy: SmolLM2-135M is far too
weak for theory of mind.  Skipped, with the reason, when the ``embedded`` extra or the
weights package is not installed.
"""

from __future__ import annotations

import dataclasses

import pytest

from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.scorecard.answers import run_nested
from cogrsi_lib.scorecard.direct import DirectSystem

from .helpers import nested_items

OK, WHY = embedded_available()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}"),
]


@pytest.fixture(scope="module")
def model():
    """One loaded copy of the model for this module's tests (each wraps it in its own
    completion cache)."""
    from cogrsi_lib.llm.embedded import EmbeddedBackend

    m = EmbeddedBackend(max_batch=8)
    m.load()
    return m


def test_bare_variant_on_the_embedded_model(model, tmp_path) -> None:
    from cogrsi_lib.llm import CachedBackend

    backend = CachedBackend(model, tmp_path / "llm-cache")
    items = nested_items(5, 3)[:2]
    run = run_nested(DirectSystem(backend, max_tokens=16), items)
    assert len(run.records) == 2 and run.score.n == 2
    for rec, it in zip(run.records, items, strict=True):
        usage = rec.ledger.total()
        assert usage.calls == 1 and usage.prompt_tokens > 0
        assert rec.samples[0].status == ("ok" if rec.status == "ok" else "unparsed")
        if rec.status == "ok":
            assert rec.answer_text in it.options
        else:
            assert rec.answer is None and rec.extra["error"]
    assert run.score.n_unparsed == sum(r.status != "ok" for r in run.records)


def test_every_variant_through_every_suite_on_the_embedded_model(model, tmp_path) -> None:
    from cogrsi_lib.llm import CachedBackend
    from cogrsi_lib.scorecard import build_profile, scorecard_table, stage
    from cogrsi_lib.stage_params import load

    p = load("scorecard", {
        "model": "embedded", "alt_model": None,
        "n_per_cell": 1, "n_per_game": 1, "selfpred_test": 1, "observation_counts": [0, 2],
        "cross_model": "embedded", "cross_temperature": 1.0, "bootstrap_resamples": 50,
        "reply_caps": {"bare": 24, "perspective": 48, "store": 48},
    })
    frozen = stage.freeze(p)
    keep = [i for i in frozen.suites.nested if i.depth <= 2 and i.partition != "true_belief"]
    suites = dataclasses.replace(
        frozen.suites, nested=tuple(keep),
        applied=tuple(a for a in frozen.suites.applied if a.belief.id in {i.id for i in keep}),
        strategic=frozen.suites.strategic[:3], baselines=None)
    frozen = dataclasses.replace(frozen, suites=suites)
    backend = CachedBackend(model, tmp_path / "cache")
    # the cross-agent target is the predictor's own model, sampled: the stage reuses it
    frozen = stage.targets_for(p, frozen, backend)
    assert "SmolLM2" in frozen.suites.cross_targets[0].description
    variants = stage.variants_for(p)
    runs, new_calls = {}, {}
    for v in variants:
        before = len(backend.cache)  # one entry per sample the model generated
        runs[v] = stage.run_variants(backend, frozen.suites, [v], p.reply_caps.model_dump())[v]
        new_calls[v] = len(backend.cache) - before
    # the ablation repeats the store's requests; every variant reuses the bare replies of
    # the strategic and prediction suites
    assert new_calls["store_ablated"] == 0
    assert all(new_calls[v] < new_calls["bare"] for v in variants[1:])
    for run in runs.values():
        assert {r.status for r in run.task_records()} <= {"ok", "unparsed", "abstained"}
        unparsed = [r for r in run.nested.records if r.status == "unparsed"]
        assert all(r.answer is None and r.extra["error"] for r in unparsed)
        ledger = run.selfpred.ledger
        assert set(ledger["target"]) == {"self", "other"}
        assert (ledger["predicted_at"] < ledger["queried_at"]).all()
        assert set(ledger.filter(ledger["phase"] == "after_change")["target"]) == {"other"}
    profiles = [build_profile(runs[v], runs["bare"]) for v in variants]
    table = scorecard_table(profiles)
    assert table.columns[2:] == variants
    a = stage.check_gate_a(frozen, list(runs.values()))
    assert a.passed
    for name in p.interventions:
        d = stage.decide(name, runs, [], a, stage.gate_config(p))
        assert [o.gate for o in d.outcomes] == ["A", "B", "C", "D", "E"]
        # no replication was run: Gate D cannot pass, so nothing is kept
        checks = {c.check: c.status for c in d.outcomes[3].checks}
        assert checks["replication on new procedural seeds"] == "not_run"
        assert d.outcomes[3].status != "pass" and not d.keep
