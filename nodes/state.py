"""Graph state: the conversation plus what ``load_memory`` found for this turn."""

from __future__ import annotations

from langgraph.graph import MessagesState
from typing import NotRequired


class State(MessagesState):
    memory: NotRequired[str]
    """The memory block ``load_memory`` built for this turn (prompt text)."""

    owner: NotRequired[str]
    """Namespace label of the user this thread belongs to, set by the first run.
    A thread holds one user's conversation: ``load_memory`` refuses a run by
    anyone else (whatever the server's thread permissions let through)."""

    memory_cursor: NotRequired[int]
    """Index in ``messages`` up to which user messages were turned into memory.
    Advanced only when extraction ran, so a failed turn is retried next turn."""
