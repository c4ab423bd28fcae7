"""Vote keys: option labels and the normalisation of free-text answers."""

from __future__ import annotations

import pytest

from cogrsi_lib.llm.parsing import normalise_free_text, option_letters


@pytest.mark.parametrize("text,key", [
    ("  An  Apple! ", "apple"),
    ("The green_bucket.", "green bucket"),
    ("green bucket", "green bucket"),
    ('"the Kitchen"', "kitchen"),
])
def test_free_text_is_normalised_not_interpreted(text: str, key: str) -> None:
    assert normalise_free_text(text) == key


def test_option_letters() -> None:
    assert option_letters(3) == ["A", "B", "C"]
    with pytest.raises(ValueError):
        option_letters(27)
