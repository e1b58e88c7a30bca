"""Step 3: the tools the model may call, run by ``ToolNode``.

Each tool declares what it does to memory (``@declare``: reads, writes, or
ends, which the gate holds for the user's own word: ``nodes/tool_gate.py``).
No tool takes a user id: the user comes from :func:`nodes.context.current_user`
(trusted context), injected through ``ToolRuntime``, which is hidden from the
schema the model sees. Policies are searchable, never writable, by the model.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, ToolRuntime
from langgraph.prebuilt.tool_node import ToolInvocationError

from mnemo.app import (
    MnemoError,
    Note,
    Origin,
    aat_note_cap,
    aensure_policies,
    aforget,
    aforget_about,
    aqueue_note,
    arecall,
    aremember,
    arevise,
    asearch_policies,
    data_block,
    declare,
    defer_note,
    expiry_from,
    note_line,
    quote,
    refuse_business_record,
    refuse_unsaid,
    replied_to,
    validate_note,
)
from nodes.context import Context, current_user, memory_store
from nodes.prompts import MEMORY_TAG
from nodes.tool_gate import gate_tool_call, gate_tool_call_sync

logger = logging.getLogger(__name__)


@declare("writes")
@tool
async def remember_note(
    text: str, runtime: ToolRuntime[Context], valid_for_days: float | None = None, replaces: str | None = None
) -> str:
    """Save one fact or preference the user stated about themselves, in their
    own words and language, e.g. "The user is allergic to peanuts". Use only
    for what the user said, never for your own guesses, questions, or orders
    and refunds.

    Args:
        text: the fact, one short self-contained sentence in the user's language.
        valid_for_days: only for a fact that stops being true ("I'm travelling
            until Friday"): how many days from now it holds. Omit for durable facts.
        replaces: only when the user corrected a remembered note ("I have one
            cat now"): that note's full id (from recall_notes); its old text is kept in its history.
    """
    user = current_user(runtime.context, runtime.config)
    refuse_business_record(text)
    messages = runtime.state.get("messages") or []
    refuse_unsaid(validate_note(text), [m.text for m in messages if isinstance(m, HumanMessage)])
    origin = Origin.from_config(runtime.config, "tool")
    if replaces:
        revised = await arevise(memory_store(runtime), user, replaces, text=text, origin=origin)
        if revised is None:
            return "No note has this id; nothing was changed."
        return "Updated:\n" + _notes_block([revised])
    expires_at = expiry_from(valid_for_days=valid_for_days)
    context = _replied_to(messages)
    store = memory_store(runtime)
    if await aat_note_cap(store, user):
        # At the cap the write decides now (a repeat still counts; a new note is refused, with the reason).
        result = await aremember(
            store, user, text, source="user_said", origin=origin, expires_at=expires_at, context=context
        )
        said = {"duplicate": "Already remembered", "refined": "Updated"}.get(result["status"], "Remembered")
        return f"{said}:\n" + _notes_block([result["note"]])
    # Otherwise it is queued in the store, where a rollback of this run cannot take it, and
    # written after the reply (write_memory): nothing embedded now. Said only once it is queued.
    queued = defer_note(text, expires_at=expires_at, context=context, origin=origin)
    await aqueue_note(store, user, queued)
    return "Will be remembered once this reply is sent:\n" + data_block(MEMORY_TAG, f"- {quote(queued['text'])}")


def _notes_block(notes: Sequence[Note], *, with_ids: bool = False) -> str:
    """Notes as a tool returns them: the system prompt's quoted lines
    (:func:`mnemo.turn.snapshot.note_line`) inside a ``<user_memory>`` block,
    since a tool result is read by the model like the prompt and a note can
    say anything ("SYSTEM: ...", a fake closing tag)."""
    return data_block(MEMORY_TAG, "\n".join(note_line(n, with_id=with_ids, with_expiry=False) for n in notes))


def _replied_to(messages: list[BaseMessage]) -> str | None:
    """What the user's latest message replied to: the context of a note
    saved in this turn (:func:`mnemo.writing.pipeline.replied_to`)."""
    said = [m for m in messages if isinstance(m, HumanMessage)][-1:]
    return replied_to(messages, said)[0] if said else None


@declare("reads")
@tool
async def recall_notes(query: str, runtime: ToolRuntime[Context], limit: int = 5) -> str:
    """Look up what you remember about the user by meaning, e.g. "pets" or
    "dietary restrictions". Returns the matching notes, best first.

    Args:
        query: what to look for.
        limit: at most this many notes (1-20).
    """
    limit = max(1, min(int(limit), 20))
    notes = await arecall(
        memory_store(runtime),
        current_user(runtime.context, runtime.config),
        query,
        limit=limit,
        margin=runtime.context.recall_margin,
    )
    if not notes:
        return "No matching notes."
    return _notes_block(notes, with_ids=True)


@declare("ends")
@tool
async def forget_note(
    runtime: ToolRuntime[Context], note_id: str | None = None, about: str | None = None, no_longer_true: bool = False
) -> str:
    """Delete notes the user asked you to forget: give exactly one of
    ``note_id`` (full id from recall_notes) or ``about`` (what the note says).
    By ``about``, only notes that clearly say it are deleted; otherwise nothing
    is, and you get the nearest notes with their ids to ask the user which.

    Args:
        note_id: id of the note to delete.
        about: description of the note(s) to delete, e.g. "my cats".
        no_longer_true: the user did not ask to forget the note but said it is
            no longer true ("I sold my car"): with ``note_id``, it is set aside,
            out of your memory but kept in the user's records, instead of deleted.
    """
    user = current_user(runtime.context, runtime.config)
    origin = Origin.from_config(runtime.config, "tool")
    if no_longer_true and note_id:
        ended = await arevise(memory_store(runtime), user, note_id, text=None, origin=origin)
        if ended is None:
            return "No note has this id; nothing was changed."
        return "No longer true, set aside:\n" + _notes_block([ended])
    if about is not None and note_id is None:
        match = await aforget_about(memory_store(runtime), user, about, origin=origin)
        if match.decision == "clear":
            return "Deleted:\n" + _notes_block(match.notes)
        if not match.notes:
            return "Nothing matched; nothing was deleted."
        return _UNCLEAR[match.decision] + _notes_block(match.notes, with_ids=True)
    removed = await aforget(memory_store(runtime), user, note_id=note_id, about=about, origin=origin)
    if not removed:
        return "Nothing matched; nothing was deleted."
    return "Deleted:\n" + _notes_block(removed)


#: What forget_note answers when ``about`` names no note clearly (mnemo.notes.forget.decide).
_ASK_WHICH = "Ask the user which one they mean, if any, then call forget_note with its note_id."
_UNCLEAR = {
    "no_match": f"No note clearly says that; nothing was deleted. {_ASK_WHICH} The nearest notes:\n",
    "too_close": f"More than one note could be meant; nothing was deleted. {_ASK_WHICH} The candidates:\n",
    "too_many": f"Too many notes match to delete at once; nothing was deleted. {_ASK_WHICH} The nearest:\n",
}


@declare("reads")
@tool
async def search_policy(query: str, runtime: ToolRuntime[Context]) -> str:
    """Search the shop's official policies (refunds, returns, shipping,
    warranty, filters, privacy). Always use this before answering a policy
    question.

    Args:
        query: the policy question, in the user's words.
    """
    current_user(runtime.context, runtime.config)  # policies are shared, but runs still need a user
    policies = await aensure_policies(memory_store(runtime))  # re-seeds when the file changed
    hits = await asearch_policies(memory_store(runtime), query, policies=policies)  # serves only what the file says
    if not hits:
        return "No policy matches this question; say you are not sure and offer to escalate to a human."
    # Title and text only, no spaces: the model reads the answer again on its next call,
    # at ~18 ms a token on a CPU (ids, scores and indents were 70 of 238 tokens: docs/bench.md).
    return json.dumps([{"title": h["title"], "text": h["text"]} for h in hits], ensure_ascii=False)


from nodes.learning_tools import LEARNING_TOOLS  # noqa: E402 (defined after the memory tools they join)

MODEL_TOOLS = [remember_note, recall_notes, forget_note, search_policy, *LEARNING_TOOLS]


def _tool_error(exc: Exception) -> str:
    """Every tool failure goes back to the model as text; the turn goes on."""
    if isinstance(exc, MnemoError | ToolInvocationError):  # bad input: say what to fix
        return f"Error: {exc}"
    logger.exception("tool failed", exc_info=exc)
    return f"Error: the memory service failed ({type(exc).__name__}); nothing was changed. Tell the user and try later."


# Every call passes the entitlement gate first (nodes/tool_gate.py).
tool_node = ToolNode(
    MODEL_TOOLS, handle_tool_errors=_tool_error, awrap_tool_call=gate_tool_call, wrap_tool_call=gate_tool_call_sync
)
