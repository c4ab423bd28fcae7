"""Bad data gives a BenchmarkFormatError naming the file and the record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cogrsi_lib import bench
from cogrsi_lib.bench import tombench
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / src.name
    shutil.copytree(src, dest)
    return dest


def test_error_message_names_file_and_record():
    err = BenchmarkFormatError("data/x.jsonl", "line 12", "missing field 'answer'")
    assert str(err) == "data/x.jsonl, record line 12: missing field 'answer'"
    assert err.file == "data/x.jsonl" and err.record == "line 12"


def test_duplicate_ids_are_refused():
    a = Item("b", "b/1", "s", "ctx", "q?", "t", "x", source="f.json:[0]")
    b = Item("b", "b/1", "s", "ctx", "q?", "t", "y", source="f.json:[7]")
    with pytest.raises(BenchmarkFormatError, match=r"f\.json, record f\.json:\[7\]: duplicate "
                                                   r"id 'b/1' \(first at record f\.json:\[0\]\)"):
        validate_items([a, b], "f.json")


def test_empty_option_and_gold_outside_options_are_refused():
    empty = Item("b", "b/1", "s", "ctx", "q?", "t", "A", options=(("A", "x"), ("B", " ")))
    with pytest.raises(BenchmarkFormatError, match="option 'B' has empty text"):
        validate_items([empty], "f")
    outside = Item("b", "b/1", "s", "ctx", "q?", "t", "C", options=(("A", "x"), ("B", "y")))
    with pytest.raises(BenchmarkFormatError, match="gold answer 'C' is not one of the options"):
        validate_items([outside], "f")


def test_tombench_missing_field_names_file_and_line(tmp_path):
    root = tmp_path / "tombench"
    (root / "data").mkdir(parents=True)
    good = {"能力\nABILITY": "Belief", "序号\nINDEX": 1, "STORY": "s", "QUESTION": "q?",
            "OPTION-A": "x", "OPTION-B": "y", "OPTION-C": float("nan"), "OPTION-D": float("nan"),
            "答案\nANSWER": "A"}
    bad = {k: v for k, v in good.items() if k != "QUESTION"}
    path = root / "data" / "False Belief Task.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    assert "NaN" in path.read_text(encoding="utf-8")  # the release's bare token
    with pytest.raises(BenchmarkFormatError, match=r"False Belief Task\.jsonl, record line 2: "
                                                   r"missing field 'QUESTION'"):
        tombench.load_task(path)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    (item,) = tombench.load_task(path)
    assert item.labels == ("A", "B")  # NaN options removed, as in CogRSI App. E.2


def test_tombench_answer_must_be_a_letter(tmp_path):
    path = tmp_path / "Moral Emotions.jsonl"
    rec = {"能力\nABILITY": "E", "序号\nINDEX": 1, "STORY": "s", "QUESTION": "q?",
           "OPTION-A": "x", "OPTION-B": "y", "答案\nANSWER": "E"}
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"record line 1: answer 'E' is not A-D"):
        tombench.load_task(path)


def test_hitom_answer_not_in_choices(tmp_path):
    src = bench.get("hi-tom").root() / "Hi-ToM_data.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    data["data"] = data["data"][:3]
    data["data"][2]["answer"] = "purple_igloo"
    root = tmp_path / "hi-tom"
    root.mkdir()
    (root / "Hi-ToM_data.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"Hi-ToM_data\.json, record data\[2\]: answer "
                                                   r"'purple_igloo' is not exactly one"):
        bench.get("hi-tom").load(root, prompting_type="all")


def test_fantom_missing_field(fixtures, tmp_path):
    root = _copy(fixtures / "fantom", tmp_path)
    sets = json.loads((root / "fantom_v1.json").read_text(encoding="utf-8"))
    del sets[1]["beliefQAs"][0]["wrong_answer"]
    (root / "fantom_v1.json").write_text(json.dumps(sets), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"fantom_v1\.json, record set 1 beliefQAs\[0\]:"
                                                   r" missing field\(s\) wrong_answer"):
        bench.load("fantom", root)


def test_simpletom_bad_choices(fixtures, tmp_path):
    root = _copy(fixtures / "simpletom", tmp_path)
    path = root / "judgment-qa" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[2]["choices"]["label"] = ["A"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"judgment-qa.test\.jsonl, record line 3"):
        bench.load("simpletom", root)


def test_cogtom_duplicate_id_and_empty_option(fixtures, tmp_path):
    root = _copy(fixtures / "cogtom", tmp_path)
    path = root / "data" / "hidden_emotion.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[1]["id"] = rows[0]["id"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"hidden_emotion\.jsonl:line 2: duplicate id "
                                                   r"'cogtom/em-001'"):
        bench.load("cogtom", root)
    rows[1]["id"] = "em-002"
    rows[1]["options"][2] = ""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match="option 'C' has empty text"):
        bench.load("cogtom", root)


def test_exploretom_missing_column(fixtures, tmp_path):
    root = _copy(fixtures / "exploretom", tmp_path)
    path = root / "ExploreToM-data-sample.csv"
    text = path.read_text(encoding="utf-8").replace("expected_answer", "answer", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BenchmarkFormatError, match=r"record header: missing column\(s\) "
                                                   r"expected_answer"):
        bench.load("exploretom", root)


def test_missing_release_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"cogrsi bench fetch fantom"):
        bench.load("fantom", tmp_path)
