"""The control layer: per-item gate over paths (eq. 3), validator with one repair (§5.7.0.2)
and the offline optimizer of the gate policy (eq. 10)."""

from __future__ import annotations

import re

import pytest

from cogrsi_lib.harness.control import PATHS, Policy, gate, optimize, trace_loss, validate
from cogrsi_lib.harness.runtime import HarnessConfig, HarnessSystem, tracked_state
from cogrsi_lib.llm.fake import ScriptedBackend, json_reply, prompt_text
from cogrsi_lib.loops.devdata import oracle_dev_items
from cogrsi_lib.reader.items import ReaderItem


def test_the_gate_picks_a_path_from_evidence_and_the_asked_perspective():
    p = Policy()
    assert gate(("Anne",), {"state": False, "retrieval": False}, p).path == "direct"
    one = gate(("Anne",), {"state": True, "retrieval": False}, p)
    assert (one.path, one.opened) == ("augment", ("state",))
    two = gate(("Anne", "Bob"), {"state": True}, p)
    assert two.path == "staged" and "staged" in two.offered
    shut = gate(("Anne",), {"state": True}, Policy(gates={"state": 0.2}))
    assert shut.path == "direct" and shut.opened == ()
    prefers_direct = Policy(paths={"direct": 2.0, "augment": 1.0, "staged": 1.5})
    assert gate(("Anne", "Bob"), {"state": True}, prefers_direct).opened == ()


def test_the_validator_names_each_failure_mode():
    assert validate("box", (), None, "basket").flags == ("over_mentalising",)
    assert validate("the basket", (), None, "basket").flags == ()
    assert validate("basket", ("Anne",), "box", "basket").flags == ("perspective_drift",)
    assert validate("box", ("Anne",), "box", "basket").flags == ()
    assert validate("tray", ("Anne",), "box", "basket", ["retrieval"]).flags == (
        "norm_override",)
    assert validate("tray", ("Anne",), "box", "basket", ["state"]).flags == ()
    assert validate("tray", ("Anne",), None, "basket").flags == ()  # nothing tracked
    assert validate("box", None, None, None).flags == ()            # not a belief question
    assert validate("green drawer", (), None, "green_drawer").flags == ()


def _items() -> list[ReaderItem]:
    """A false first-order belief, a false second-order one and a question Starling can't read."""
    pool = oracle_dev_items(40, 3)
    pick = []
    for depth in (1, 2):
        for it in pool:
            k = tracked_state(it)
            if (it.meta["depth"] == depth and k is not None and k.view and k.reality
                    and k.view != k.reality and it.meta["kind"] == "location"):
                pick.append(it)
                break
    assert len(pick) == 2
    odd = ReaderItem(item_id="why", story_id="why", context=pick[0].context,
                     question="Why did everyone stay calm?", options=("luck", "habit"),
                     gold="A")
    return [*pick, odd]


class RealityModel:
    """Answers with reality (from the story's tracked state), except under a repair block,
    where it follows the value the block states."""

    def __init__(self, items: list[ReaderItem]) -> None:
        self.items = items
        self.prompts: list[str] = []

    def __call__(self, job) -> str:
        t = prompt_text(job)
        self.prompts.append(t)
        it = next(i for i in self.items if i.question in t)
        m = re.search(r"that is: ([^.(]+?)(?: \(option \w+\))?\.", t)
        k = tracked_state(it)
        want = m.group(1) if m else (k.reality if k else None)
        label = next((lab for lab, text in zip(it.labels, it.options, strict=True)
                      if text == want), it.labels[0])
        return json_reply(job, {"answer": label})


def test_flagged_drafts_are_redrafted_once_and_each_path_is_traced():
    items = _items()
    model = RealityModel(items)
    system = HarnessSystem(ScriptedBackend(model),
                           HarnessConfig(modules=("state",), control=True))
    recs = system.answer_batch(items)
    ctl = [r.extra["control"] for r in recs]
    assert [c["path"] for c in ctl] == ["augment", "staged", "direct"]
    # first order: the state block is in the prompt; the reality answer drifts; one repair
    assert ctl[0]["first"]["flags"] == ["perspective_drift"] and ctl[0]["redraft"] == "repair"
    assert ctl[0]["final"]["flags"] == []
    assert recs[0].answer_text == tracked_state(items[0]).view
    # second order, staged: a direct draft first, then the held-back evidence
    assert ctl[1]["first"]["flags"] == ["perspective_drift"] and ctl[1]["redraft"] == "evidence"
    # nothing to check: one draft, no redraft
    assert ctl[2]["first"]["flags"] == [] and ctl[2]["redrafted"] is False
    calls = [r.ledger.total().calls for r in recs]
    assert calls == [2, 2, 1]
    repaired = [p for p in model.prompts if "Check before answering" in p]
    assert len(repaired) == 1
    label = next(lab for lab, text in zip(items[0].labels, items[0].options, strict=True)
                 if text == tracked_state(items[0]).view)
    assert f"(option {label})" in repaired[0]


def test_the_full_ablation_is_controlled_and_full_ungated_is_not():
    from cogrsi_lib.harness.runtime import ABLATIONS, CONTROLLED

    assert "full" in CONTROLLED and "full_ungated" not in CONTROLLED
    assert ABLATIONS["full"] == ABLATIONS["full_ungated"]


def test_the_optimizer_demotes_what_went_with_errors():
    traces = [
        {"correct": False, "path": "staged", "opened": ["retrieval"], "flags": []},
        {"correct": False, "path": "staged", "opened": ["retrieval", "state"], "flags": []},
        {"correct": True, "path": "augment", "opened": ["state"], "flags": []},
        {"correct": True, "path": "direct", "opened": [], "flags": ["perspective_drift"]},
    ]
    before = Policy()
    after, credit = optimize(traces, before, lr=0.5)
    assert after.paths["staged"] < before.paths["staged"]
    assert after.paths["augment"] > before.paths["augment"]
    assert after.gates["retrieval"] < before.gates["retrieval"]
    assert after.gates["state"] > after.gates["retrieval"]
    assert after.gates["skills"] == before.gates["skills"]  # never used: unchanged
    assert credit["path:staged"]["loss"] == 1.0 and credit["all"]["traces"] == 4
    # the losses of eq. 10: a wrong answer costs far more than a flagged trace
    assert trace_loss(False, []) > 5 * trace_loss(True, ["norm_override"]) > 0
    same, _ = optimize([{**t, "correct": True, "flags": []} for t in traces], before)
    assert same.paths == before.paths and same.gates == before.gates
    assert Policy.from_json(after.to_json()) == after
    assert set(after.paths) == set(PATHS)


@pytest.mark.parametrize("chain", [None, ()])
def test_no_evidence_means_direct_whatever_the_chain(chain):
    assert gate(chain, {}, Policy()).path == "direct"
