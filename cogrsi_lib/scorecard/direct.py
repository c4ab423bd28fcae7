"""The bare-model condition: minimal task instructions, one greedy JSON reply (plan §6.2, §4).

The prompt is Suite A's: the context, the question, the options and the reply format
``{"answer": ..., "confidence": ...}`` (family ``scorecard.bare``, or ``scorecard.number``
for a numeric answer; :func:`~cogrsi_lib.scorecard.answers.item_format`); no chain of
thought is asked for (plan §4: "Do not require chain-of-thought").  It is also the frozen
prompt under which a model is a self-prediction target (§19 Experiment 5) and the comparison
condition of the §10 prompt.
"""

from __future__ import annotations

from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.families import family_example
from cogrsi_lib.llm.flow import Flow
from cogrsi_lib.llm.types import Message, Request, SamplingParams
from cogrsi_lib.nested.reply import read_reply
from cogrsi_lib.reader.items import ReaderItem
from cogrsi_lib.reader.records import ItemRecord
from cogrsi_lib.reader.system import FlowSystem
from cogrsi_lib.scorecard.answers import (
    BARE_FAMILY,
    NUMBER_FAMILY,
    answer_format,
    item_format,
    json_record,
)

DEFAULT_MAX_TOKENS = 64


def direct_prompt(item: ReaderItem) -> str:
    """Context, question, options and the strict reply format."""
    options = f"\nOptions: {', '.join(item.options)}" if item.options else ""
    return f"{item.context.strip()}\n\n{item.question}{options}\n{answer_format(item)}"


class DirectSystem(FlowSystem):
    """One call per item (greedy unless ``temperature`` is set); the reply is parsed strictly
    (a :class:`System`)."""

    def __init__(
        self, backend: Backend, name: str = "bare", max_tokens: int = DEFAULT_MAX_TOKENS,
        seed: int = 0, temperature: float = 0.0, system: str | None = None,
        structured: bool = True,
    ) -> None:
        self.backend = backend
        self.name = name
        self.max_tokens = max_tokens
        self.seed = seed
        self.temperature = temperature
        self.system = system
        self.structured = structured

    def params(self) -> SamplingParams:
        return SamplingParams(n=1, temperature=self.temperature, max_tokens=self.max_tokens,
                              seed=self.seed)

    def messages(self, item: ReaderItem) -> tuple[Message, ...]:
        user = Message("user", direct_prompt(item))
        return (Message("system", self.system), user) if self.system else (user,)

    def request(self, item: ReaderItem) -> Request:
        return Request(self.messages(item), self.params(), item_format(item), self.structured)

    def flow(self, item: ReaderItem) -> Flow[ItemRecord]:
        r = self.request(item)
        [cs] = yield [r]
        return json_record(self.name, item, cs[0], read_reply(r.reply, cs[0].text), request=r)


@family_example(BARE_FAMILY)
def _bare_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): a nested question."""
    from cogrsi_lib.reader.example_items import NESTED

    return DirectSystem(None).request(NESTED)  # type: ignore[arg-type]  # requests only


@family_example(NUMBER_FAMILY)
def _number_example() -> Request:
    """The family's example request (cogrsi_lib/llm/families.py): a numeric question."""
    from cogrsi_lib.reader.example_items import NUMERIC

    return DirectSystem(None).request(NUMERIC)  # type: ignore[arg-type]  # requests only
