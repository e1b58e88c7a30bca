"""What a client may write into a thread's state: user messages, within bounds.

One rule for every way in (run input, ``command.update``, ``POST
/threads/{id}/state``, supersteps, crons, MCP, A2A): a client adds messages of
its own role only (``user``; no system message, no assistant tool call, no
tool result), text only, within :mod:`mnemo.core.limits`; every other state key
is the graph's; a client sends no ``goto``, ``resume`` or ``as_node`` (the agent
never interrupts). The rule of the graph's input, so it lives beside the graph's
state: the server applies it before a run exists (``server/``); the graph applies
it again where the write enters the state (``nodes/state.py``).
Why both: ``docs/security.md``. The one thing a message may carry that the
client did not write is the platform's A2A mark (:func:`is_a2a_mark`), admitted
only where the caller says the platform added it (``a2a=True``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mnemo.app import (
    MAX_ID_CHARS,
    MAX_NAME_CHARS,
    MAX_RUN_CHARS,
    MAX_RUN_MESSAGES,
    TEXT_BLOCK_TYPES,
    ClientWriteError,
    MessageTooLongError,
    UnsupportedContentError,
    check_message,
)

#: Roles a client's message may have (LangChain's two names for the user).
CLIENT_ROLES = frozenset({"user", "human"})
#: The only state key a client writes.
CLIENT_KEY = "messages"
_MESSAGE_KEYS = frozenset({"role", "type", "content", "id", "name"})
_BLOCK_KEYS = frozenset({"type", "text", "id"})
#: What the platform's A2A route puts in ``additional_kwargs["a2a"]`` of each
#: message it makes of a client's text: its own task ids (the A2A message's
#: ``metadata`` and extensions would go there too; ``server/platform_guards.py`` refuses them).
A2A_MARK_KEYS = frozenset({"task_id", "task_start_id"})
_ONLY_USER = "a client adds user messages only (role 'user'): system, assistant and tool messages are mnemo's"


def _extra(value: Mapping[str, Any], allowed: frozenset[str]) -> list[str]:
    """Keys of ``value`` outside ``allowed`` that carry something (SDKs send empty ones)."""
    return sorted(str(k)[:40] for k, v in value.items() if k not in allowed and v not in (None, "", [], {}, False))


def _short_text(name: str, value: Any, limit: int) -> None:
    if value is not None and (not isinstance(value, str) or len(value) > limit):
        raise ClientWriteError(f"a message's {name} is a string of at most {limit} characters")


def is_a2a_mark(additional_kwargs: Any) -> bool:
    """``additional_kwargs`` is the platform's A2A mark and nothing else:
    ``{"a2a": {...}}`` holding one or both of :data:`A2A_MARK_KEYS`, each an id."""
    if not isinstance(additional_kwargs, Mapping) or set(additional_kwargs) != {"a2a"}:
        return False
    mark = additional_kwargs["a2a"]
    return (
        isinstance(mark, Mapping)
        and bool(mark)
        and set(mark) <= A2A_MARK_KEYS
        and all(isinstance(v, str) and len(v) <= MAX_ID_CHARS for v in mark.values())
    )


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, Mapping) or "type" not in block:
        raise UnsupportedContentError("every content block names its type; mnemo reads {'type': 'text', 'text': ...}")
    if block["type"] not in TEXT_BLOCK_TYPES:
        raise UnsupportedContentError(
            f"mnemo reads text only: a content block of type {str(block['type'])[:40]!r} is not accepted"
        )
    if extra := _extra(block, _BLOCK_KEYS):
        raise UnsupportedContentError(f"a text block carries type, text and id only, not {extra}")
    if not isinstance(block.get("text", ""), str):
        raise UnsupportedContentError("a text block's text is a string")
    return block.get("text", "")


def client_message_text(message: Any, *, a2a: bool = False) -> str:
    """The text of one message a client sends (a string, a ``(role, content)``
    pair or a message object as JSON), after checking it is the user's; with
    ``a2a``, a message object may also carry the platform's A2A mark (:func:`is_a2a_mark`).

    Raises:
        ClientWriteError: not a user message, or a field mnemo does not take.
        UnsupportedContentError: a content block that is not text.
        MessageTooLongError: past :data:`mnemo.core.limits.MAX_MESSAGE_CHARS`.
    """
    if isinstance(message, str):
        role, content = "user", message
    elif isinstance(message, list | tuple) and len(message) == 2:
        role, content = message
    elif isinstance(message, Mapping):
        role, content = message.get("role", message.get("type")), message.get("content", "")
        marked = a2a and is_a2a_mark(message.get("additional_kwargs"))
        if extra := _extra(message, _MESSAGE_KEYS | {"additional_kwargs"} if marked else _MESSAGE_KEYS):
            raise ClientWriteError(f"a user message carries role, content, id and name only, not {extra}")
        _short_text("name", message.get("name"), MAX_NAME_CHARS)
        _short_text("id", message.get("id"), MAX_ID_CHARS)
    else:
        kind = type(message).__name__
        raise ClientWriteError(f"a message is a string or an object with role and content, not {kind}")
    if role not in CLIENT_ROLES:
        raise ClientWriteError(f"a message of role {str(role)[:40]!r} was sent; {_ONLY_USER}")
    if isinstance(content, list):
        text = "".join(_block_text(block) for block in content)
    elif isinstance(content, str):
        text = content
    else:
        raise ClientWriteError("a message's content is a string or a list of text blocks")
    check_message(text)
    return text


def check_new_messages(messages: Any, *, a2a: bool = False) -> None:
    """What one run or state update adds: at most :data:`MAX_RUN_MESSAGES`
    user messages (:func:`client_message_text`, ``a2a`` passed on), :data:`MAX_RUN_CHARS` in all.

    Raises:
        MessageTooLongError: too many messages, one too long, or too much text.
        UnsupportedContentError: a block that is not text.
        ClientWriteError: a message that is not the user's.
    """
    if messages is None:
        return
    if isinstance(messages, Mapping | str):
        messages = [messages]
    if not isinstance(messages, list):
        raise ClientWriteError("messages is a list of messages")
    if len(messages) > MAX_RUN_MESSAGES:
        raise MessageTooLongError(
            f"{len(messages)} messages in one run; mnemo accepts at most {MAX_RUN_MESSAGES} (send several turns)."
        )
    total = sum(len(client_message_text(message, a2a=a2a)) for message in messages)
    if total > MAX_RUN_CHARS:
        raise MessageTooLongError(
            f"The messages of one run carry {total} characters; mnemo accepts at most {MAX_RUN_CHARS} in all."
        )


def _pairs(update: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(update, Mapping):
        yield from update.items()
    elif isinstance(update, list | tuple):  # the platform's [[key, value], ...] form
        for pair in update:
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise ClientWriteError("a state update is an object, or a list of [key, value] pairs")
            yield pair[0], pair[1]
    elif update is not None:
        raise ClientWriteError("a state update is an object, or a list of [key, value] pairs")


def check_client_update(update: Any) -> None:
    """A client's write of state keys (``command.update``, a state update's
    ``values``, a run's ``input``): ``messages`` only, as :func:`check_new_messages`.

    Raises:
        ClientWriteError: another key, or a message that is not the user's.
        MessageTooLongError, UnsupportedContentError: as :func:`check_new_messages`.
    """
    added: list[Any] = []
    for key, value in _pairs(update):
        if key != CLIENT_KEY:
            raise ClientWriteError(f"{str(key)[:40]!r} is written by mnemo's graph alone; a client writes 'messages'")
        if value is not None:
            added.extend(value if isinstance(value, list) else [value])
    check_new_messages(added)


def check_command(command: Any) -> None:
    """A run's ``command``: an ``update`` as :func:`check_client_update`; no
    ``goto`` and no ``resume`` (the agent never interrupts, so nothing waits for one).

    Raises:
        ClientWriteError: a ``goto`` or ``resume``, or an update a client may not make.
    """
    if command is None:
        return
    if not isinstance(command, Mapping):
        raise ClientWriteError("command is an object")
    for key in ("goto", "resume"):
        if command.get(key) not in (None, [], ""):
            raise ClientWriteError(
                f"command.{key} is refused: mnemo's agent never interrupts, and a run starts where the graph does"
            )
    check_client_update(command.get("update"))
