"""ATOMS constructs of the benchmarks' questions, by a fixed table (CogRSI App. E.3, Table 25).

CogRSI groups its test questions by the construct of the ATOMS taxonomy (Beaudoin et al.,
2020) they probe, read off each benchmark's own question type; no annotation of single
questions validates these labels. :func:`construct_of` is that table. Its choices, where a
benchmark's type does not name an ATOMS construct itself:

- questions about the world rather than a mind (ToMi's reality and memory, Hi-ToM's order 0,
  FANToM's fact questions, ExploreToM's questions of no ToM order) are ``other``;
- predicting an action from what a character believes (BigToM's forward action, SimpleToM's
  behaviour) is ``belief``, as ToMBench files "beliefs based action" under Belief;
- awareness and answerability (SimpleToM's mental-state questions, FANToM's answerability and
  information-accessibility questions) are ``knowledge``;
- BigToM's percept-to-belief questions are ``perception``; OpenToM's attitude questions
  ``emotion``; MMToM-QA's goal inference (types 2.x) ``desire``; MuMA-ToM's social goals
  ``intention``;
- a question that joins two constructs (MuMA-ToM's belief of a goal, SimpleToM's judgement of
  a behaviour) is ``mixed``.

A benchmark the table does not know reads ``unmapped``, never a guess.
"""

from __future__ import annotations

import re

import polars as pl

#: ATOMS's constructs as CogRSI Table 25 names them, plus the two catch-alls
CONSTRUCTS: tuple[str, ...] = ("belief", "knowledge", "intention", "desire", "emotion",
                               "perception", "non-literal", "mixed", "other")
UNMAPPED = "unmapped"

#: ToMBench's ability names (the text before ``:``) are ATOMS's own
_TOMBENCH = {"belief": "belief", "knowledge": "knowledge", "intention": "intention",
             "desire": "desire", "emotion": "emotion", "non-literal communication": "non-literal"}
_BY_KEYWORD = (("non-literal", "non-literal"), ("nonliteral", "non-literal"),
               ("belief", "belief"), ("knowledge", "knowledge"), ("intention", "intention"),
               ("desire", "desire"), ("goal", "desire"), ("emotion", "emotion"),
               ("percept", "perception"))


def _tomi(qtype: str) -> str:
    return "belief" if qtype.startswith(("first_order", "second_order")) else "other"


def _bigtom(qtype: str) -> str:
    variable = qtype.split(":", 1)[0]
    return "perception" if variable.startswith("percept") else "belief"


def _hitom(qtype: str) -> str:
    return "other" if qtype == "order_0" else "belief"


def _opentom(qtype: str) -> str:
    return "emotion" if qtype == "attitude" else "belief"


def _tombench(qtype: str) -> str:
    ability = qtype.split(":", 1)[0].strip().lower()
    return _TOMBENCH.get(ability, UNMAPPED)


def _fantom(qtype: str) -> str:
    if qtype == "fact":
        return "other"
    if qtype.startswith("tom:belief"):
        return "belief"
    return "knowledge" if qtype.startswith(("tom:answerability", "tom:info_accessibility")) \
        else UNMAPPED


def _simpletom(qtype: str) -> str:
    return {"mental-state": "knowledge", "behavior": "belief", "judgment": "mixed"}.get(
        qtype, UNMAPPED)


def _exploretom(qtype: str) -> str:
    m = re.match(r"order(-?\d+):", qtype)
    if m is None:
        return UNMAPPED
    return "belief" if int(m.group(1)) >= 1 else "other"


def _mmtom(qtype: str) -> str:
    return {"1": "belief", "2": "desire"}.get(qtype.split(".", 1)[0], UNMAPPED)


def _mumatom(qtype: str) -> str:
    return {"belief": "belief", "social_goal": "intention", "belief_of_goal": "mixed"}.get(
        qtype, UNMAPPED)


def _by_keyword(qtype: str) -> str:
    """CogToM's paradigms and dimensions are not known here: a paradigm whose name carries a
    construct's name maps to it, any other is ``unmapped``."""
    low = qtype.lower()
    return next((c for key, c in _BY_KEYWORD if key in low), UNMAPPED)


_TABLE = {"tomi": _tomi, "percept-tomi": _tomi, "bigtom": _bigtom, "hi-tom": _hitom,
          "opentom": _opentom, "tombench": _tombench, "fantom": _fantom,
          "simpletom": _simpletom, "exploretom": _exploretom, "mmtom-qa": _mmtom,
          "muma-tom": _mumatom, "cogtom": _by_keyword}


def construct_of(benchmark: str, question_type: str | None) -> str:
    """The ATOMS construct of a question of ``benchmark`` with type ``question_type``."""
    rule = _TABLE.get(benchmark)
    if rule is None or question_type is None:
        return UNMAPPED
    return rule(question_type)


def construct_rank(name: str) -> int:
    """A construct's place in tables: ATOMS order, then ``unmapped``, then ``all``."""
    order = (*CONSTRUCTS, UNMAPPED, "all")
    return order.index(name) if name in order else len(order)


def sort_constructs(table: pl.DataFrame, *first: str) -> pl.DataFrame:
    """``table`` sorted by ``first`` columns, then its ``construct`` column by
    :func:`construct_rank` (the rows' order otherwise kept)."""
    rank = pl.col("construct").map_elements(construct_rank, return_dtype=pl.Int64)
    return (table.with_columns(rank.alias("_rank"))
            .sort(*first, "_rank", maintain_order=True).drop("_rank"))


def with_constructs(records: pl.DataFrame) -> pl.DataFrame:
    """The benchmark records of ``records`` (a stage's per-question records, with
    ``benchmark`` and ``question_type``) with a ``construct`` column; records of no benchmark
    (the oracle's pairs) are left out."""
    rows = records.filter(pl.col("benchmark").is_not_null())
    return rows.with_columns(construct=pl.struct("benchmark", "question_type").map_elements(
        lambda r: construct_of(r["benchmark"], r["question_type"]), return_dtype=pl.Utf8))
