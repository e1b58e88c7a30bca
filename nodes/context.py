"""Run-time configuration of the agent (``context_schema``), and whose run it is.

Sent per run as ``context={...}`` (SDK / REST) or set on an assistant. Each
field is described once, in its :func:`setting`: the description LangGraph
Studio shows, the range a number is clamped to, and the README's
configuration table (:mod:`nodes.readme_table`). Every node
and tool gets the user of the run from :func:`current_user`, never from the model.
"""

from __future__ import annotations

import logging
import typing
from dataclasses import MISSING, InitVar, dataclass, field, fields
from functools import cache
from typing import Annotated, Any, Literal, cast

from langgraph.config import get_config
from langgraph.store.base import BaseStore
from pydantic import Field

from mnemo.app import (
    DEFAULT_MODEL,
    EPISODE_CHAR_BUDGET,
    EPISODE_LIMIT,
    EPISODE_MIN_SCORE,
    MEMORY_CHAR_BUDGET,
    RECALL_LIMIT,
    RECALL_MARGIN,
    RECENT_LIMIT,
    InvalidInputError,
    User,
    clamp,
    configured_extraction_model,
    configured_model,
    guarded,
    resolve_user,
    run_caller,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Knob:
    """The range of a number a run may set: clamped into it on the server."""

    lo: float
    hi: float
    integer: bool = False

    @property
    def shown(self) -> str:
        return f"{self.lo:g}-{self.hi:g}"


def setting(
    default: Any = MISSING,
    *,
    doc: str,
    knob: Knob | None = None,
    factory: typing.Callable[[], Any] | None = None,
    shown_default: str | None = None,
    shown_range: str | None = None,
) -> Any:
    """A :class:`Context` field, described once. ``doc`` (its first sentence is
    the README's "meaning") and the ``knob``'s range make the description
    Studio shows; ``shown_*`` say how the README shows a default or range that
    is not a plain value."""
    metadata = {
        "description": f"{doc} Range: {knob.shown}." if knob else doc,
        "knob": knob,
        "shown_default": shown_default,
        "shown_range": shown_range,
    }
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


@dataclass(kw_only=True)
class Context:
    """Who is talking, which model answers, and how memory is used."""

    user_id: str = setting(
        "",
        doc="Id of the end user whose memory this run reads and writes; a user token may only name "
        "itself, an admin token must name one. Required: a run without one fails (there is no shared "
        "default user).",
        shown_default="the token's user",
    )
    model: str = setting(
        factory=configured_model,
        doc="Chat model, ``provider:model`` for ``init_chat_model``. With ``OPENAI_BASE_URL`` set, "
        "``openai:<name>`` reaches any OpenAI-compatible server (DeepSeek, Qwen, vLLM, Ollama, llama.cpp). "
        "Only models on the operator's allow list (``MNEMO_ALLOWED_MODELS``; by default the configured "
        "``MNEMO_MODEL`` / ``MNEMO_EXTRACTION_MODEL``) may be chosen.",
        shown_default=f"``$MNEMO_MODEL`` or ``{DEFAULT_MODEL}``",
        shown_range="``MNEMO_ALLOWED_MODELS``",
    )
    extraction_model: str = setting(
        factory=configured_extraction_model,
        doc="Model for memory work: extraction, summaries, instruction rewrites; empty = same as ``model``.",
        shown_default="same as ``model``",
        shown_range="``MNEMO_ALLOWED_MODELS``",
    )
    extraction_timeout_s: float = setting(
        30.0,
        doc="Seconds the memory extractor may take; past that the messages stay pending (retried with "
        "the next turn in smaller batches, never given up for it), the reply is not held up. Slow "
        "local servers: docs/models.md.",
        knob=Knob(0.1, 120),
    )
    recall_limit: int = setting(
        RECALL_LIMIT,
        doc="How many notes relevant to the latest message are put in the prompt.",
        knob=Knob(0, 20, integer=True),
    )
    recent_limit: int = setting(
        RECENT_LIMIT,
        doc="How many of the most recent notes are put in the prompt as well.",
        knob=Knob(0, 20, integer=True),
    )
    recall_margin: float = setting(
        RECALL_MARGIN,
        doc="How far (cosine similarity) a note must score above the user's other notes in the same "
        "script (their median, for this message) to count as relevant; higher recalls fewer notes, 0 "
        "keeps the better half. Relative to the user's own notes, so a greeting lifts few of them, in "
        "any language. Chosen on LoCoMo for the bundled multilingual-e5-small (``python -m bench "
        "thresholds``, docs/thresholds.md); re-measure for another embedder.",
        knob=Knob(0, 0.2),
    )

    # Described where it is declared, as the settings are: not from a docstring, which pydantic
    # would find by reading this file's source on every run (the platform asks for the schema per run).
    recall_min_score: InitVar[
        Annotated[
            float | None,
            Field(
                description="Deprecated and ignored: the fixed similarity cut it set was replaced by "
                "``recall_margin``. Still accepted so that saved assistants keep running."
            ),
        ]
    ] = None

    memory_char_budget: int = setting(
        MEMORY_CHAR_BUDGET,
        doc="Upper bound, in characters, of the memory block in the prompt.",
        knob=Knob(200, 8000, integer=True),
    )
    episode_limit: int = setting(
        EPISODE_LIMIT,
        doc="How many similar past cases that went well are shown as examples (0: none).",
        knob=Knob(0, 5, integer=True),
    )
    episode_min_score: float = setting(
        EPISODE_MIN_SCORE,
        doc="Similarity a past case needs to be shown; below it, no example. Measured for the bundled "
        "embedder (docs/thresholds.md).",
        knob=Knob(0, 1),
    )
    episode_char_budget: int = setting(
        EPISODE_CHAR_BUDGET,
        doc="Upper bound, in characters, of the examples block in the prompt.",
        knob=Knob(0, 4000, integer=True),
    )
    memory_write_mode: Literal["hot", "after_turn", "background"] = setting(
        "after_turn",
        doc="When memories are extracted from what the user said: ``hot`` only through the tools, during "
        "the turn; ``after_turn`` by ``write_memory`` before the run ends (the reply is streamed first); "
        "``background`` by a ``memory_writer`` run the server starts ``memory_write_delay_s`` after the "
        "last turn of a burst (the run ends without waiting). Outside a LangGraph server, ``background`` "
        "falls back to ``after_turn`` (logged).",
    )
    history_token_budget: int = setting(
        6000,
        doc="Tokens (approximate) of conversation the model sees; past it, the oldest turns are "
        "summarised (or trimmed) before the model is called. The latest turn is always kept whole, tool "
        "calls with their results.",
        knob=Knob(200, 32000, integer=True),
    )
    history_strategy: Literal["summarize", "trim"] = setting(
        "summarize",
        doc="What happens to turns that leave the window: folded into a running summary kept in the "
        "thread (one model call per compaction), or dropped.",
    )
    memory_write_delay_s: int = setting(
        10,
        doc="``background`` only: seconds of quiet on a thread before its memories are extracted; a new "
        "turn within them postpones (and merges) the write.",
        knob=Knob(0, 600, integer=True),
    )

    def __post_init__(self, recall_min_score: float | None) -> None:
        if recall_min_score is not None:
            logger.warning("context recall_min_score is ignored: relevance is now set by recall_margin")
        # A client sets these per run: every number is clamped to its range
        # server-side, and a non-number is refused with its name.
        for name, knob in knobs().items():
            setattr(self, name, clamp(name, getattr(self, name), knob.lo, knob.hi, integer=knob.integer))
        # A choice (a ``Literal`` field) outside its values is refused with its name.
        for name, allowed in choices().items():
            if (value := getattr(self, name)) not in allowed:
                raise InvalidInputError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def knobs() -> dict[str, Knob]:
    """Context field -> its range, for every number a run may set."""
    return {f.name: f.metadata["knob"] for f in fields(Context) if f.metadata.get("knob")}


@cache
def choices() -> dict[str, tuple[Any, ...]]:
    """Context field -> its allowed values, for every ``Literal`` field."""
    hints = typing.get_type_hints(Context)
    return {
        f.name: typing.get_args(hints[f.name]) for f in fields(Context) if typing.get_origin(hints[f.name]) is Literal
    }


def current_user(context: Any, config: Any | None = None) -> User:
    """The user of this run: who the server authenticated acts for the
    ``user_id`` the context names (:func:`mnemo.app.resolve_user`). Raises
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
