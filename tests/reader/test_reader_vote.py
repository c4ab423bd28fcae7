"""The vote and arbitration rule, including Proposition 3 as a property over all sample sets."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from cogrsi_lib.reader.vote import decide, majority, ranked, settle

ANSWER = st.one_of(st.none(), st.sampled_from(["A", "B", "C", "D"]))


def test_supermajority_is_never_arbitrated() -> None:
    o = decide(["A", "A", "A", "A"], ["A", "B"])
    assert (o.leader, o.arbitrate, o.reason) == ("A", False, "supermajority")
    # five of six even though the plain reading is split and the margin is large
    o = decide(["A", "A", "A", "B"], ["A", "A"])
    assert not o.arbitrate and o.leader == "A"


def test_four_two_conflict_is_arbitrated_between_the_two_readings() -> None:
    o = decide(["A", "A", "A", "A"], ["B", "B"])
    assert o.arbitrate and o.reason == "conflict" and o.candidates == ("A", "B")
    assert settle(o, "B") == "B"  # four is not five: the arbiter may overturn it


def test_close_split_three_three_and_three_two_one() -> None:
    o = decide(["A", "A", "B", "B"], ["A", "B"])
    assert o.arbitrate and o.reason == "close_split" and set(o.candidates) == {"A", "B"}
    o = decide(["A", "A", "B", "C"], ["A", "B"])  # A3 B2 C1, plain tie: no conflict
    assert o.reason == "close_split" and o.candidates == ("A", "B")


def test_clear_vote_without_conflict_needs_no_call() -> None:
    o = decide(["A", "A", "A", "B"], ["A", "C"])  # A4 B1 C1, plain tie
    assert not o.arbitrate and o.reason == "clear" and o.leader == "A"


def test_close_split_can_be_switched_off_for_dialogue() -> None:
    o = decide(["A", "A", "B", "B"], ["A", "B"], close_split=False)
    assert not o.arbitrate
    o = decide(["A", "A", "A", "B"], ["B", "B"], close_split=False)  # conflict still counts
    assert o.arbitrate and o.reason == "conflict"


def test_unparsed_samples_do_not_vote() -> None:
    o = decide([None, None, "A", None], [None, "B"])
    assert o.unparsed == 4 and o.reason == "conflict" and o.candidates == ("A", "B")
    o = decide([None, "A", None, "B"], [None, None])
    assert o.unparsed == 4 and o.reason == "close_split"
    o = decide([None] * 4, [None, None])
    assert o.leader is None and not o.arbitrate and o.reason == "no_parsed_sample"
    assert settle(o, "A") is None


def test_tie_break_prefers_annotated_votes_then_first_seen() -> None:
    assert ranked(["B", "A"], ["A", "C"])[0] == ("A", 2)
    assert ranked(["B", "B", "A"], ["A"])[0] == ("B", 2)  # equal totals, B has more annotated
    assert ranked(["C", "D"], [])[0] == ("C", 1)
    assert majority(["A", "B"]) is None and majority(["A", "A", "B"]) == "A"


def test_settle_ignores_an_off_list_or_missing_choice() -> None:
    o = decide(["A", "A", "B", "B"], ["C", "C"])
    assert settle(o, "Z") == o.leader and settle(o, None) == o.leader


@settings(max_examples=3000, deadline=None)
@given(
    annotated=st.lists(ANSWER, min_size=0, max_size=4),
    plain=st.lists(ANSWER, min_size=0, max_size=2),
    choice=ANSWER,
    close_split=st.booleans(),
)
def test_proposition_3_never_overturns_five_or_six(annotated, plain, choice, close_split) -> None:
    """Proposition 3: whatever the samples and whatever the arbiter answers, an answer held by
    five or six of the six samples is the final answer, and no arbitration call is made."""
    o = decide(annotated, plain, close_split=close_split)
    votes = Counter(a for a in [*annotated, *plain] if a is not None)
    strong = [a for a, n in votes.items() if n >= 5]
    final = settle(o, choice)
    if strong:
        assert not o.arbitrate
        assert final == strong[0] == o.leader
    # arbitration only ever chooses between two distinct answers that some sample gave
    if o.arbitrate:
        assert o.candidates is not None and o.candidates[0] != o.candidates[1]
        assert set(o.candidates) <= set(votes)
        assert final in o.candidates
    else:
        assert final == o.leader
    # the final answer is always one that some sample gave (or none if none parsed)
    assert final is None if not votes else final in votes
    # the leader has the most votes
    if votes:
        assert votes[o.leader] == max(votes.values())


@settings(max_examples=2000, deadline=None)
@given(
    annotated=st.lists(ANSWER, min_size=4, max_size=4),
    plain=st.lists(ANSWER, min_size=2, max_size=2),
)
def test_arbitration_triggers_exactly_on_conflict_or_close_split(annotated, plain) -> None:
    o = decide(annotated, plain)
    votes = Counter(a for a in [*annotated, *plain] if a is not None).most_common()
    a_maj, p_maj = majority(annotated), majority(plain)
    if not votes or votes[0][1] >= 5:
        expected = False
    else:
        conflict = a_maj is not None and p_maj is not None and a_maj != p_maj
        close = len(votes) > 1 and votes[0][1] - votes[1][1] <= 1
        expected = conflict or close
    assert o.arbitrate == expected


REPLY = st.sampled_from(
    ["Answer: A", "Answer: B", "Answer: green_bucket", "Answer: C", "no idea", ""]
)


@settings(max_examples=300, deadline=None)
@given(
    annotated=st.lists(REPLY, min_size=4, max_size=4),
    plain=st.lists(REPLY, min_size=2, max_size=2),
    arbiter=st.sampled_from(["Answer: 1", "Answer: 2", "Answer: 3", "garbage"]),
    conversation_item=st.booleans(),
)
def test_proposition_3_holds_for_the_whole_reader(
    annotated, plain, arbiter, conversation_item
) -> None:
    """The same property through the reader, its parser and an adversarial arbiter."""
    from cogrsi_lib.llm import ScriptedBackend
    from cogrsi_lib.reader import GroundedReader

    from .helpers import CONV_PERCEPTION, Script, conversation, narrative

    if conversation_item:
        item = conversation(options=("green_bucket", "blue_container"), gold="A")
        script = Script(
            perception=CONV_PERCEPTION, annotated=annotated, plain=plain, arbitration=arbiter
        )
    else:
        item = narrative()
        script = Script(annotated=annotated, plain=plain, arbitration=arbiter)
    rec = GroundedReader(ScriptedBackend(script), "expert").answer(item)
    keys = [s.answer for s in rec.samples]
    votes = Counter(k for k in keys if k is not None)
    strong = [a for a, n in votes.items() if n >= 5]
    if strong:
        assert rec.answer == strong[0]
        assert script.count("arbitration") == 0 and not rec.arbitration.ran
    assert script.count("arbitration") == int(rec.arbitration.ran)
    assert rec.ledger.total().calls == 7 + int(rec.arbitration.ran)
    assert rec.answer is None or rec.answer in votes
