"""Tools through which the agent learns from a case: ``mark_resolved``
(episodic memory, ``mnemo.episodes.cases``) and ``improve_instructions``
(procedural memory: the user's own, ``mnemo.instructions.own``, or a proposal
for everyone, ``mnemo.instructions.proposals``). Like every tool, neither takes a user id:
the user and the assistant come from the run, never from the model.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime

from mnemo.app import (
    Origin,
    aget_profile,
    alearn_for_user,
    apropose,
    arecord_episode,
    assistant_of,
    build_episode,
    declare,
)
from nodes.chat_models import aload_memory_model
from nodes.context import Context, current_user, memory_store


@declare("writes")
@tool
async def mark_resolved(how: str, runtime: ToolRuntime[Context]) -> str:
    """Call this once when the user says explicitly that their problem is
    solved or thanks you for solving it ("thanks, that fixed it"). It keeps
    this case as an example for similar cases later. Do not call it for a
    polite "thanks" in the middle of an open case.

    Args:
        how: one sentence on what solved the problem, without personal details.
    """
    user = current_user(runtime.context, runtime.config)
    thread_id = str((runtime.config.get("configurable") or {}).get("thread_id", ""))
    episode = build_episode(
        runtime.state["messages"],
        assistant_id=assistant_of(runtime.config),
        thread_id=thread_id,
        source="user_thanks",
        resolution=how,
    )
    if episode is None:
        return "Nothing to keep: this case has no request with an answer yet."
    await arecord_episode(memory_store(runtime), user, episode)
    return "Kept this case as an example of a resolved case."


@declare("writes")
@tool
async def improve_instructions(feedback: str, scope: Literal["me", "everyone"], runtime: ToolRuntime[Context]) -> str:
    """Call this when the user gives feedback about how you (the assistant)
    behave. ``scope="me"`` when it is about how you treat this user ("shorter
    answers for me", "call me by my first name"): it applies to their
    conversations at once. ``scope="everyone"`` when they say how you should
    behave for every customer ("your answers are too verbose for everyone"):
    it is sent to an administrator, who decides. Not for facts about the user
    (those are remembered as notes).

    Args:
        feedback: the feedback, in the user's words.
        scope: "me" (this user only) or "everyone" (every customer, after an administrator's approval).
    """
    user = current_user(runtime.context, runtime.config)
    store, ctx = memory_store(runtime), runtime.context
    model = await aload_memory_model(ctx)
    origin = Origin.from_config(runtime.config, "tool")
    if scope == "me":
        mine = await alearn_for_user(store, model, user, feedback, origin=origin, timeout_s=ctx.extraction_timeout_s)
        if mine["status"] == "rejected":
            return f"Your instructions were not changed: {mine['rejected_because']}"
        if mine["status"] == "unchanged":
            return "Your instructions already say this; nothing changed."
        return "Noted for you: this applies to your conversations from the next answer."
    if scope != "everyone":
        return 'scope is "me" or "everyone"; nothing was changed.'
    profile = await aget_profile(store, user)
    proposal = await apropose(
        store,
        model,
        user,
        assistant_of(runtime.config),
        feedback,
        origin=origin,
        personal=[entry["value"] for entry in profile.values()],
        timeout_s=ctx.extraction_timeout_s,
    )
    if proposal["status"] == "refused":
        return f"Not sent for review: {proposal['refused_because']}"
    return (
        "Sent to an administrator for review; nothing changes for anyone until they approve it. "
        "It is kept with your data (your export shows it)."
    )


LEARNING_TOOLS = [mark_resolved, improve_instructions]
