"""Bounds on what a caller can make mnemo (and the server) spend.

Every text reaching the embedder or the lexical ranker is cut here, a user message
past :data:`MAX_MESSAGE_CHARS` is refused before any work, client numbers are
clamped (:func:`clamp`), and every size a client can send is bounded here (applied
by ``nodes.client_writes``, ``server/`` and ``nodes/state.py``). The
measurements behind the bounds: ``docs/design.md``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from mnemo.core.errors import InvalidInputError, MessageTooLongError, ValueTooLargeError

#: Longest user message accepted, in characters (a long complaint with a pasted
#: e-mail fits; a document does not). Refused by the server before the run
#: starts (``server/auth.py``) and by ``load_memory`` before any work.
MAX_MESSAGE_CHARS = 8000
#: Longest search text embedded or ranked (the start of a longer one is used):
#: a search is about what the text starts with, and this is under 0.5 s of CPU.
MAX_QUERY_CHARS = 1000
#: Longest text the bundled embedder embeds (the start of a longer one): notes
#: (at most 1000 characters), past cases and policies fit.
MAX_EMBED_CHARS = 2000


def check_message(text: str) -> None:
    """Raises :class:`MessageTooLongError` for a message past :data:`MAX_MESSAGE_CHARS`."""
    if len(text) > MAX_MESSAGE_CHARS:
        raise MessageTooLongError(
            f"The message has {len(text)} characters; mnemo accepts at most {MAX_MESSAGE_CHARS} per message. "
            "Send it in shorter parts, or summarise it."
        )


#: Most messages one run (or one state update) may add to a thread.
MAX_RUN_MESSAGES = 20
#: Most characters the messages one run adds may carry together.
MAX_RUN_CHARS = 4 * MAX_MESSAGE_CHARS
#: Content block types the agent reads; any other is refused.
TEXT_BLOCK_TYPES = frozenset({"text"})
#: Longest ``name`` of a client's message (OpenAI's own limit on a message name).
MAX_NAME_CHARS = 64
#: Longest ``id`` of a client's message (a UUID is 36).
MAX_ID_CHARS = 128
#: Largest ``metadata`` of a thread, run or cron, in bytes of JSON: labels for
#: the application (``owner`` is mnemo's), not a document store.
MAX_METADATA_BYTES = 16_000
#: Largest ``context`` of a run, in bytes of JSON (mnemo's settings are a few hundred).
MAX_CONTEXT_BYTES = 16_000
#: Largest value of a store item a client writes (``(user, "app")``), in bytes of JSON:
#: memory is not the business database.
MAX_APP_ITEM_BYTES = 64_000
#: Largest value of any graph-owned state key (``nodes/state.py``) other than the
#: summary, in bytes of JSON: the largest the graph writes is the 8,000-character
#: memory block.
MAX_GRAPH_VALUE_BYTES = 64_000


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (anything not JSON counted by its ``str``)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8", "replace"))


def check_json_size(what: str, value: Any, max_bytes: int) -> None:
    """Raises :class:`ValueTooLargeError` when ``value`` is over ``max_bytes`` of JSON."""
    size = json_size(value)
    if size > max_bytes:
        raise ValueTooLargeError(f"{what} has {size} bytes of JSON; mnemo accepts at most {max_bytes}.")


def check_app_item(value: Any, what: str = "The store item's value") -> None:
    """An application's store item (``(user, "app")``), however it is written
    (the store API, an import), within :data:`MAX_APP_ITEM_BYTES`.

    Raises:
        ValueTooLargeError: past the bound.
    """
    check_json_size(what, value, MAX_APP_ITEM_BYTES)


def bounded_query(text: str) -> str:
    """The part of ``text`` a search embeds and ranks (its first :data:`MAX_QUERY_CHARS` characters)."""
    return text[:MAX_QUERY_CHARS]


#: Integers the checkpointer (msgpack) can store.
INT64_MAX = 2**63 - 1


def bounded_ints(value: Any) -> Any:
    """``value`` (JSON-like) with every integer clamped to the 64-bit range.

    A model's tool call such as ``recall_notes(limit=10**30)`` is kept in the
    thread: msgpack cannot store the number, and the whole run failed. The tool
    clamps the argument to its own range afterwards."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return min(max(value, -INT64_MAX - 1), INT64_MAX)
    if isinstance(value, dict):
        return {k: bounded_ints(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded_ints(v) for v in value]
    return value


def clamp(name: str, value: object, lo: float, hi: float, *, integer: bool = False) -> float:
    """``value`` as a number within ``[lo, hi]`` (an int if ``integer``).

    Raises:
        InvalidInputError: ``value`` is not a finite number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise InvalidInputError(f"{name} must be a number, got {type(value).__name__}")
    try:
        number = float(value)
    except ValueError:
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be a finite number, got {value!r}")
    number = float(min(max(number, lo), hi))  # a bound may be an int: the result is still a float
    return int(number) if integer else number


#: Largest body of a ``/memory`` write route (a note, a profile patch), in bytes:
#: a note at its longest, in any script, JSON-escaped, with its details.
MAX_MEMORY_BODY_BYTES = 16 * 1024
#: Largest body of ``POST /memory/operator/<name>`` (an import carries a whole
#: export: thousands of notes with their history), in bytes.
MAX_OPERATOR_BODY_BYTES = 64 * 1024 * 1024
