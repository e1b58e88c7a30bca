"""Graph state: the conversation plus what ``load_memory`` found for this turn;
and the background writer's own state.

The state's door: every write enters through a channel, whatever route it
came by (run input, ``command.update``, a state update, a route the platform
adds later). Messages that are plain data rather than message objects come
from outside the graph's code, so :func:`admit_messages` holds them to the
client's rule (``nodes.client_writes``); every other key is the graph's,
held to a size by :func:`bounded`. A write that breaks them is left out and
logged, not raised: LangGraph keeps a refused write as a pending write and
applies it again on every later read, which would break the thread (the
server refuses the same writes, with the reason, before they get here).
Why: ``docs/security.md``.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.channels import LastValue
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict  # pydantic reads the schemas (Python < 3.12)

from mnemo.app import (
    MAX_GRAPH_VALUE_BYTES,
    MAX_SUMMARY_CHARS,
    ClientWriteError,
    DeferredNote,
    InvalidInputError,
    json_size,
    queue_notes,
)
from nodes.client_writes import check_new_messages

logger = logging.getLogger(__name__)


def check_sent_messages(left: list[Any], sent: list[Any]) -> None:
    """Messages a client sent, to be added to ``left``: user messages within the
    bounds (the platform's A2A mark admitted, as the server admits it on A2A
    runs alone), with ids that replace none of the thread's messages.

    Raises:
        mnemo.core.InvalidInputError: they break the rule.
    """
    check_new_messages(sent, a2a=True)
    ids = {m.id for m in left if isinstance(m, BaseMessage)}
    if taken := [m["id"] for m in sent if isinstance(m, dict) and m.get("id") in ids]:
        raise ClientWriteError(f"a client's message may not replace the thread's message {taken[0]!r}")


def admit_messages(left: list[Any], right: Any) -> list[BaseMessage]:
    """``add_messages``, with what a client sent held to its rule.

    The graph's nodes write message objects; what arrives as plain data (a
    dict, a string, a ``(role, content)`` pair: JSON from a request) is a
    client's (:func:`check_sent_messages`); a write of them that breaks the
    rule is left out, all of it, and logged.
    """
    items = right if isinstance(right, list) else [right]
    sent = [m for m in items if not isinstance(m, BaseMessage)]
    if sent:
        try:
            check_sent_messages(left, sent)
        except InvalidInputError as exc:
            logger.warning("a client's messages were left out of the thread: %s", exc)
            items = [m for m in items if isinstance(m, BaseMessage)]
    return add_messages(left, items)  # type: ignore[return-value]


class _Bounded(LastValue[Any]):
    """A graph-owned key: its last value; a value past :attr:`max_size` is left out."""

    max_size = MAX_GRAPH_VALUE_BYTES

    def update(self, values: Any) -> bool:
        kept = []
        for value in values:
            size = len(value) if isinstance(value, str) else json_size(value)
            if size > self.max_size:
                logger.warning(
                    "a write of %d to %r was left out: the graph writes at most %d", size, self.key, self.max_size
                )
            else:
                kept.append(value)
        return super().update(kept)


def bounded(max_size: int) -> type[LastValue[Any]]:
    """The channel class of a graph-owned key, as ``Annotated[str, bounded(n)]``."""
    return type(f"Bounded{max_size}", (_Bounded,), {"max_size": max_size})


GraphOwned = bounded(MAX_GRAPH_VALUE_BYTES)


class Input(TypedDict):
    """What a run takes: new messages only. The rest of :class:`State` is
    mnemo's own, never a client's input (MCP and A2A list only this)."""

    messages: Annotated[list[AnyMessage], admit_messages]


class State(Input):
    memory: Annotated[NotRequired[str], GraphOwned]
    """The memory block ``load_memory`` built for this turn (prompt text)."""

    owner: Annotated[NotRequired[str], GraphOwned]
    """Namespace label of the user this thread belongs to, set by the first run.
    A thread holds one user's conversation: ``load_memory`` refuses a run by
    anyone else (whatever the server's thread permissions let through)."""

    memory_cursor: Annotated[NotRequired[int], GraphOwned]
    """Index in ``messages`` up to which user messages were turned into memory.
    Advanced only past what was written, so what failed is retried next turn."""

    memory_failures: Annotated[NotRequired[int], GraphOwned]
    """Extractor failures in a row on the user message at ``memory_cursor``
    (``mnemo.writing.pipeline.batch_size``)."""

    similar_notes: Annotated[NotRequired[list[dict[str, str]] | None], GraphOwned]
    """The user's notes (``id``, ``text``) nearest to the latest message, found
    by ``load_memory`` in its read and shown to this turn's extractor
    (``after_turn``); ``None``: not read this turn (the write reads them)."""

    blocks: Annotated[NotRequired[dict[str, str]], GraphOwned]
    """The prompt blocks the memory kinds render apart from the memory block, by
    slot (``examples``: similar past cases that went well), as prompt text
    (``load_memory``, ``mnemo.turn.render_blocks``)."""

    turn_at: Annotated[NotRequired[dict[str, list[list[str | None]]]], GraphOwned]
    """Where the last call put the turn part of the prompt: ``placed``, ``[anchor, text]``
    pairs (the id of the user message a text went before: the part, then its updates);
    the next call keeps them there while adding brings them up to date
    (``nodes.prompts.place_turn``)."""

    summary: Annotated[NotRequired[str], bounded(MAX_SUMMARY_CHARS)]
    """Running summary of the turns removed from ``messages`` (``mnemo.turn.history``).
    Thread state only: never long-term memory."""

    pending_notes: Annotated[NotRequired[list[DeferredNote]], queue_notes]
    """Where versions before the store queue kept the notes ``remember_note``
    queued; ``write_memory`` moves what it finds here to the queue in the store,
    which a rollback of the run does not touch (``mnemo.writing.deferred``)."""

    queued_notes: Annotated[NotRequired[int], GraphOwned]
    """How many notes waited in the user's queue in the store when ``load_memory``
    read (``mnemo.notes.queued``): ``write_memory`` reads the queue only when some
    did, or when this turn called ``remember_note``."""

    said_at: Annotated[NotRequired[dict[str, str]], GraphOwned]
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
