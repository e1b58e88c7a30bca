"""Graph state: the conversation plus what ``load_memory`` found for this turn;
and the background writer's own state."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from langgraph.graph import MessagesState


class Input(MessagesState):
    """What a run takes: new messages only. The rest of :class:`State` is
    mnemo's own, never a client's input (MCP and A2A list only this)."""


class State(MessagesState):
    memory: NotRequired[str]
    """The memory block ``load_memory`` built for this turn (prompt text)."""

    owner: NotRequired[str]
    """Namespace label of the user this thread belongs to, set by the first run.
    A thread holds one user's conversation: ``load_memory`` refuses a run by
    anyone else (whatever the server's thread permissions let through)."""

    memory_cursor: NotRequired[int]
    """Index in ``messages`` up to which user messages were turned into memory.
    Advanced only past what was written, so what failed is retried next turn."""

    memory_failures: NotRequired[int]
    """Extractor failures in a row on the user message at ``memory_cursor``
    (``mnemo.writing.pipeline.batch_size``)."""

    similar_notes: NotRequired[list[dict[str, str]] | None]
    """The user's notes (``id``, ``text``) nearest to the latest message, found
    by ``load_memory`` in its read and shown to this turn's extractor
    (``after_turn``); ``None``: not read this turn (the write reads them)."""

    examples: NotRequired[str]
    """Similar past cases that went well, as prompt text (``load_memory``)."""

    summary: NotRequired[str]
    """Running summary of the turns removed from ``messages`` (``mnemo.turn.history``).
    Thread state only: never long-term memory."""

    said_at: NotRequired[dict[str, str]]
    """User message id -> UTC ISO time it arrived (``mnemo.writing.pipeline``): a late
    extraction never overwrites a field changed after these words were said."""


class WriterState(TypedDict):
    thread_id: str
    """The conversation thread to read (set by ``write_memory``)."""

    extracted_through: NotRequired[str]
    """Id of the last conversation message this writer turned into memory."""

    failures: NotRequired[int]
    """Extractor failures in a row on the user message with id ``failing``."""

    failing: NotRequired[str]
    """Id of the first user message this writer has not written yet, when
    ``failures`` is not 0 (ids, not indexes: compaction shifts indexes)."""
