"""What a builder writes (cogrsi_lib/reader/text.py): one line, and the shown stories' names."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.text import clean, names_in, story_names

WORD = st.text(alphabet="abcdefghij", min_size=1, max_size=6)


@given(st.lists(WORD, min_size=1, max_size=6), st.lists(st.sampled_from([" ", "\n", "\t", "  "]),
                                                          min_size=6, max_size=6))
def test_clean_keeps_the_words_on_one_line(words: list[str], gaps: list[str]) -> None:
    text = gaps[0] + "".join(w + g for w, g in zip(words, gaps[1:] + gaps, strict=False))
    out = clean(text)
    assert out.split(" ") == words
    assert "\n" not in out and "\t" not in out


def test_story_names_are_the_characters_places_and_underscored_entities() -> None:
    item = ReaderItem(item_id="i", context="Sally put the ball in the front_yard. Then Anne left.",
                      question="Where will Sally look?", options=("front_yard", "box"),
                      gold="front_yard", character="Sally", meta={"places": ["garden"]})
    names = story_names([item])
    assert {"Sally", "Anne", "front_yard", "garden"} <= names
    assert "Then" not in names and "Where" not in names  # sentence openers


def test_a_name_is_found_as_a_whole_word_ignoring_case_and_underscores() -> None:
    names = {"Sally", "front_yard"}
    assert names_in("ask sally where it is", names) == ["Sally"]
    assert names_in("look in the Front Yard first", names) == ["front_yard"]
    assert names_in("Sallyanne and the yard", names) == []
