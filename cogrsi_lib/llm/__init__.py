"""LLM backends behind one interface, with a completion cache and call accounting (CogRSI §5.1).

Importing this package never imports torch, transformers, openai or vllm: each backend
imports its runtime when it is built.
"""

from cogrsi_lib.llm.accounting import CallLedger, RoleUsage
from cogrsi_lib.llm.backend import Backend
from cogrsi_lib.llm.cache import CachedBackend, CompletionCache, cache_key
from cogrsi_lib.llm.config import build_backend, load_llm_params
from cogrsi_lib.llm.fake import ScriptedBackend
from cogrsi_lib.llm.parsing import ParsedAnswer
from cogrsi_lib.llm.reply_format import ReplyError, ReplyFormat
from cogrsi_lib.llm.tally import ReplyTally, open_tally, start_tally
from cogrsi_lib.llm.types import Completion, Job, Message, Request, SamplingParams

__all__ = [
    "Backend",
    "CachedBackend",
    "CallLedger",
    "Completion",
    "CompletionCache",
    "Job",
    "Message",
    "ParsedAnswer",
    "ReplyError",
    "ReplyFormat",
    "ReplyTally",
    "Request",
    "RoleUsage",
    "SamplingParams",
    "ScriptedBackend",
    "build_backend",
    "cache_key",
    "load_llm_params",
    "open_tally",
    "start_tally",
]
