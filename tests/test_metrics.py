"""Headline metrics: flat numbers that ``dvc metrics show`` and ``dvc metrics diff`` read."""

from __future__ import annotations

import json

from cogrsi_lib.metrics import headline, write_metrics

SUMMARY = {
    "backend": "embedded", "questions": 40, "structured": True, "nan": float("nan"),
    "replies": {"reader.sample": {"calls": 10, "parse_rate": 1.0}},
    "worlds_by_condition": {"no_lie": 5, "revealed": 2},
    "systems": ["zero_shot", "cogrsi"],
    "chance": [{"system": "zero_shot", "accuracy": 0.2, "low": 0.1, "high": 0.3, "items": 40,
                "verdict": "near chance"},
               {"system": "cogrsi", "accuracy": 0.25, "low": 0.1, "high": 0.4, "items": 40}],
    "official_scores": [{"benchmark": "tomi", "protocol": "official", "score": 0.5,
                         "questions": 4}],
    "comparison": [{"set": "tomi", "stratum": "all", "base": 0.4, "trained": 0.5, "diff": 0.1,
                    "low": -0.1, "high": 0.3, "n": 20},
                   {"set": "tomi", "stratum": "depth 1", "base": 0.0, "trained": 1.0,
                    "diff": 1.0, "low": 1.0, "high": 1.0, "n": 2}],
    "reference_verdicts": {"a": "valid", "b": "invalid", "c": "invalid"},
}


def test_headline_keeps_numbers_and_labels_rows() -> None:
    h = headline(SUMMARY)
    assert h["questions"] == 40 and h["worlds_by_condition"] == {"no_lie": 5, "revealed": 2}
    assert h["systems"]["cogrsi"] == {"accuracy": 0.25, "ci_low": 0.1, "ci_high": 0.4, "n": 40}
    assert h["official"] == {"tomi/official": {"score": 0.5, "n": 4}}
    assert h["base_vs_trained"] == {"tomi": {"base": 0.4, "trained": 0.5, "diff": 0.1,
                                             "diff_low": -0.1, "diff_high": 0.3, "n": 20}}
    assert h["verdicts"] == {"invalid": 2, "valid": 1}
    for gone in ("backend", "structured", "nan", "replies"):
        assert gone not in h


def test_every_leaf_is_a_number(tmp_path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps(SUMMARY))
    path = write_metrics(tmp_path)

    def leaves(x):
        if isinstance(x, dict):
            for v in x.values():
                yield from leaves(v)
        else:
            yield x

    values = list(leaves(json.loads(path.read_text())))
    assert values and all(isinstance(v, int | float) and not isinstance(v, bool)
                          for v in values)
    assert write_metrics(tmp_path / "none") is None
