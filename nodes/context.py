"""Run-time configuration of the agent (``context_schema``), and whose run it is.

Sent per run as ``context={...}`` (SDK / REST) or set on an assistant; LangGraph
Studio shows each field with its docstring. Every node and tool gets the user
of the run from :func:`current_user`, never from the model.
"""

from __future__ import annotations

import logging
import os
from dataclasses import InitVar, dataclass, field
from typing import Any, Literal, cast

from langgraph.config import get_config
from langgraph.store.base import BaseStore
from pydantic import ConfigDict

from mnemo import User, resolve_user
from mnemo.core import clamp, run_caller
from mnemo.notes import RECALL_MARGIN
from mnemo.stores import guarded
from mnemo.turn import MEMORY_CHAR_BUDGET, RECALL_LIMIT, RECENT_LIMIT

logger = logging.getLogger(__name__)

#: Context field -> (lowest, highest, integer): what a run may set (clamped).
KNOB_RANGES: dict[str, tuple[float, float, bool]] = {
    "extraction_timeout_s": (0.1, 120, False),
    "recall_limit": (0, 20, True),
    "recent_limit": (0, 20, True),
    "recall_margin": (0, 0.2, False),
    "memory_char_budget": (200, 8000, True),
    "episode_limit": (0, 5, True),
    "episode_min_score": (0, 1, False),
    "episode_char_budget": (0, 4000, True),
    "history_token_budget": (200, 32000, True),
    "memory_write_delay_s": (0, 600, True),
}


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
    server (DeepSeek, Qwen, vLLM, Ollama, llama.cpp). Only models on the
    operator's allow list (``MNEMO_ALLOWED_MODELS``; by default the
    configured ``MNEMO_MODEL`` / ``MNEMO_EXTRACTION_MODEL``) may be chosen."""

    extraction_model: str = field(default_factory=lambda: os.environ.get("MNEMO_EXTRACTION_MODEL", ""))
    """Model for memory work: extracting memories, summarising the turns that
    leave a long thread's window, proposing instruction rewrites; empty =
    same as ``model``."""

    extraction_timeout_s: float = 30.0
    """Seconds the memory extractor may take; past that the write is skipped
    (and retried with the next turn), the reply is not held up. 0.1-120."""

    recall_limit: int = RECALL_LIMIT
    """How many notes relevant to the latest message are put in the prompt. 0-20."""

    recent_limit: int = RECENT_LIMIT
    """How many of the most recent notes are put in the prompt as well. 0-20."""

    recall_margin: float = RECALL_MARGIN
    """How far (cosine similarity) a note must score above the user's other
    notes in the same script (their median, for this message) to count as
    relevant: higher recalls fewer notes; 0 keeps the better half. Relative
    to the user's own notes, so a greeting lifts few of them, in any
    language. Chosen on LoCoMo for the bundled multilingual-e5-small
    (``python -m bench thresholds``); re-measure for another embedder. 0-0.2."""

    recall_min_score: InitVar[float | None] = None
    """Deprecated and ignored: the fixed similarity cut it set was replaced by
    ``recall_margin``. Still accepted so that saved assistants keep running."""

    memory_char_budget: int = MEMORY_CHAR_BUDGET
    """Upper bound, in characters, of the memory block injected in the prompt. 200-8000."""

    episode_limit: int = 2
    """How many similar past cases that went well are shown as examples (0: none). 0-5."""

    episode_min_score: float = 0.88
    """Similarity (0-1) a past case needs to be shown; below it, no example.
    Measured for the bundled embedder (``python -m bench.episode_threshold``). 0-1."""

    episode_char_budget: int = 1200
    """Upper bound, in characters, of the examples block in the prompt. 0-4000."""

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
    latest turn is always kept whole, tool calls with their results. 200-32000."""

    history_strategy: Literal["summarize", "trim"] = "summarize"
    """What happens to turns that leave the window: folded into a running
    summary kept in the thread (one model call per compaction), or dropped."""

    memory_write_delay_s: int = 10
    """``background`` only: seconds of quiet on a thread before its memories
    are extracted; a new turn within them postpones (and merges) the write. 0-600."""

    def __post_init__(self, recall_min_score: float | None) -> None:
        if recall_min_score is not None:
            logger.warning("context recall_min_score is ignored: relevance is now set by recall_margin")
        # A client sets these per run: every number is clamped to its
        # documented range server-side (recent_limit=1e6 once gave a 12 kB
        # memory block), and a non-number is refused with its name.
        for name, (lo, hi, integer) in KNOB_RANGES.items():
            setattr(self, name, clamp(name, getattr(self, name), lo, hi, integer=integer))


def current_user(context: Any, config: Any | None = None) -> User:
    """The user of this run: who the server authenticated acts for the
    ``user_id`` the context names (:func:`mnemo.resolve_user`). Raises
    :class:`mnemo.MissingUserError` when there is none."""
    caller = run_caller(config if config is not None else get_config())
    named = context.get("user_id") if isinstance(context, dict) else getattr(context, "user_id", None)
    return resolve_user(caller, named)


def memory_store(runtime: Any) -> BaseStore:
    """The store of the run (the platform's, or ``compile(store=...)``'s),
    behind :class:`mnemo.stores.guard.GuardedStore` (the platform store
    fails whole batches that put one text twice, langgraph#8822). LangGraph
    types it as optional; the graph is always run with one."""
    return guarded(cast(BaseStore, runtime.store))
