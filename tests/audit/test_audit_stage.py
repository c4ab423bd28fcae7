"""The stage helpers, and one real translation on the embedded CPU model.

The embedded test checks records only (SmolLM2-135M cannot translate rules); it is skipped,
with the reason, when the ``embedded`` extra or the weights package is not installed.
"""

from __future__ import annotations

import pytest

from cogrsi_lib.audit import (
    Auditor,
    audit_config,
    build_translators,
    replay_answerer,
    summary,
    timings,
)
from cogrsi_lib.audit.handwritten import IN_ROOM, fenced
from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.reports import write_json

from .conftest import SCRIPTED


def test_audit_config_from_stage_parameters():
    cfg = audit_config(0.01, 0.9, "both", {"wall_s": 5, "cpu_s": 2, "memory_mb": 256}, 4096, 1)
    assert (cfg.verdict.vacuous_threshold, cfg.verdict.agreement_threshold,
            cfg.verdict.agreement_over) == (0.01, 0.9, "both")
    assert (cfg.limits.wall_s, cfg.limits.cpu_s, cfg.limits.memory_mb) == (5, 2, 256)
    assert (cfg.recompile_max_tokens, cfg.workers) == (4096, 1)
    with pytest.raises(ValueError, match="bogus"):
        audit_config(limits={"bogus": 1})
    with pytest.raises(ValueError):
        audit_config(agreement_over="some")


def test_summary_says_when_one_model_plays_both_roles(tiny_sample, tmp_path):
    spec = {"backend": "fake", "reply": fenced(IN_ROOM.code_a)}
    shared = build_translators([{"name": "A", "model": spec}, {"name": "B", "model": spec}])
    auditor = Auditor(tiny_sample, shared)
    audits = auditor.audit_many([("r", IN_ROOM.text)])
    s = summary(auditor, audits, extra_key=1)
    assert s["one_model_both_roles"] and s["n_rules"] == 1 and s["extra_key"] == 1
    assert s["n_questions"] == tiny_sample.n_questions and "max_rule_pair_s" not in s
    assert timings(auditor, audits)["max_rule_pair_s"] > 0
    assert audits[0].verdict.verdict == "invalid"  # identical code agrees with itself
    write_json(s, tmp_path / "summary.json")
    scripted = Auditor(tiny_sample, build_translators(SCRIPTED))
    assert not summary(scripted, [])["one_model_both_roles"]


def test_replay_answerer_builds_the_reader_from_params():
    answer, identity = replay_answerer({"backend": "fake",
                                        "reply": '{"reasoning": "", "answer": "B"}'},
                                       {"use_perception": False})
    from cogrsi_lib.reader import ReaderItem

    item = ReaderItem("i", "1 Anne is in the room.", "Where?", ("box", "tray"), gold="A")
    assert identity == "fake:scripted" and answer([item], "") == ["B"]


OK, WHY = embedded_available()


@pytest.mark.model
@pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}")
def test_embedded_translation_is_recorded_even_when_cut_off(tiny_sample):
    specs = [{"name": "A", "model": {"backend": "embedded"}, "prompt": "literal", "seed": 0},
             {"name": "B", "model": {"backend": "embedded"}, "prompt": "plain", "seed": 1}]
    trs = build_translators(specs, max_tokens=24)
    assert trs[0].backend is trs[1].backend
    audit = Auditor(tiny_sample, trs).audit(IN_ROOM.text, "in_room")
    for t in audit.translations:
        assert "SmolLM2" in t.model and t.prompt_tokens > 500
        assert t.completion_tokens <= 24
        if t.finish_reason == "length":
            assert t.capped and t.status in ("capped", "ok")
    assert audit.verdict.verdict in ("invalid", "valid", "vacuous", "ambiguous")
    rows = audit.translation_rows()
    assert {r["translator"] for r in rows} == {"A", "B"}
