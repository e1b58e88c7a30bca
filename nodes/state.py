"""Graph state: the conversation plus what ``load_memory`` found for this turn."""

from __future__ import annotations

from langgraph.graph import MessagesState
from typing import NotRequired


class State(MessagesState):
    memory: NotRequired[str]
    """The memory block ``load_memory`` built for this turn (prompt text)."""

    memory_cursor: NotRequired[int]
    """Index in ``messages`` up to which user messages were turned into memory.
    Advanced only when extraction ran, so a failed turn is retried next turn."""
