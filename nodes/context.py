"""Run-time configuration of the agent (``context_schema``), and whose run it is.

Sent per run as ``context={...}`` (SDK / REST) or set on an assistant; LangGraph
Studio shows each field with its docstring. Every node and tool gets the user
of the run from :func:`current_user`, never from the model.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from langgraph.config import get_config
from langgraph.store.base import BaseStore
from pydantic import ConfigDict

from mnemo import User, resolve_user
from mnemo.recall import RECALL_MIN_SCORE
from mnemo.snapshot import MEMORY_CHAR_BUDGET, RECALL_LIMIT, RECENT_LIMIT


@dataclass(kw_only=True)
class Context:
    """Who is talking, which model answers, and how memory is used."""

    # Makes the field docstrings below the descriptions of the JSON schema
    # that LangGraph Studio and the assistants API show.
    __pydantic_config__ = ConfigDict(use_attribute_docstrings=True)

    user_id: str = ""
    """Id of the end user whose memory this run reads and writes. Required:
    a run without one fails (there is no shared default user). When the server
    authenticates callers, a user's token decides (naming another user is
    refused) and an admin token acts for the user named here."""

    model: str = field(default_factory=lambda: os.environ.get("MNEMO_MODEL", "openai:gpt-4o-mini"))
    """Chat model as ``provider:model`` for ``init_chat_model``. With
    ``OPENAI_BASE_URL`` set, ``openai:<name>`` reaches any OpenAI-compatible
    server (DeepSeek, Qwen, vLLM, Ollama, llama.cpp)."""

    extraction_model: str = field(default_factory=lambda: os.environ.get("MNEMO_EXTRACTION_MODEL", ""))
    """Model for memory work: extracting memories, summarising the turns that
    leave a long thread's window, proposing instruction rewrites; empty =
    same as ``model``."""

    extraction_timeout_s: float = 30.0
    """Seconds the memory extractor may take; past that the write is skipped
    (and retried with the next turn), the reply is not held up."""

    recall_limit: int = RECALL_LIMIT
    """How many notes relevant to the latest message are put in the prompt."""

    recent_limit: int = RECENT_LIMIT
    """How many of the most recent notes are put in the prompt as well."""

    recall_min_score: float = RECALL_MIN_SCORE
    """Similarity (0-1) a note needs to count as relevant. Measured for the
    bundled multilingual-e5-small; re-measure for another embedder."""

    memory_char_budget: int = MEMORY_CHAR_BUDGET
    """Upper bound, in characters, of the memory block injected in the prompt."""

    episode_limit: int = 2
    """How many similar past cases that went well are shown as examples (0: none)."""

    episode_min_score: float = 0.88
    """Similarity (0-1) a past case needs to be shown; below it, no example.
    Measured for the bundled embedder (``python -m bench.episode_threshold``)."""

    episode_char_budget: int = 1200
    """Upper bound, in characters, of the examples block in the prompt."""

    memory_write_mode: Literal["hot", "after_turn", "background"] = "after_turn"
    """When memories are extracted from what the user said. ``hot``: only
    through the tools, during the turn. ``after_turn``: by ``write_memory``
    before the run ends (the reply is streamed first, the run ends after).
    ``background``: by a ``memory_writer`` run the server starts
    ``memory_write_delay_s`` after the last turn of a burst; the run ends
    without waiting. Outside a LangGraph server, ``background`` falls back
    to ``after_turn`` (logged)."""

    history_token_budget: int = 6000
    """Tokens (approximate) of conversation the model sees: past it, the
    oldest turns are summarised (or trimmed) before the model is called; the
    latest turn is always kept whole, tool calls with their results."""

    history_strategy: Literal["summarize", "trim"] = "summarize"
    """What happens to turns that leave the window: folded into a running
    summary kept in the thread (one model call per compaction), or dropped."""

    memory_write_delay_s: int = 10
    """``background`` only: seconds of quiet on a thread before its memories
    are extracted; a new turn within them postpones (and merges) the write."""


def current_user(context: Any, config: Any | None = None) -> User:
    """The user of this run (see :func:`mnemo.resolve_user`); raises
    :class:`mnemo.MissingUserError` when there is none."""
    return resolve_user(context, config if config is not None else get_config())


def memory_store(runtime: Any) -> BaseStore:
    """The store of the run (the platform's, or ``compile(store=...)``'s).
    LangGraph types it as optional; the graph is always run with one."""
    return cast(BaseStore, runtime.store)
