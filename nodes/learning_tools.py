"""Tools through which the agent learns from a case: ``mark_resolved``
(episodic memory, ``mnemo.kinds.episodes``) and ``improve_instructions``
(procedural memory, ``mnemo.kinds.instructions``). Like every tool, neither takes a
user id: the user and the assistant come from the run, never from the model.
"""

from __future__ import annotations

from langchain_core.tools import tool
from langgraph.prebuilt import ToolRuntime

from mnemo import aget_profile
from mnemo.kinds import arecord_episode, arewrite_from_feedback, assistant_of, build_episode
from nodes.chat_models import aload_chat_model
from nodes.context import Context, current_user, memory_store


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


@tool
async def improve_instructions(feedback: str, runtime: ToolRuntime[Context]) -> str:
    """Call this when the user gives feedback about how you (the assistant)
    behave in general, for every customer, e.g. "your answers are too
    verbose" or "always greet in Chinese". A rewrite of your learned
    instructions is proposed and checked; it may be refused. Not for facts
    or preferences about the user themselves (those are remembered as notes).

    Args:
        feedback: the feedback, in the user's words.
    """
    user = current_user(runtime.context, runtime.config)
    profile = await aget_profile(memory_store(runtime), user)
    ctx = runtime.context
    result = await arewrite_from_feedback(
        memory_store(runtime),
        await aload_chat_model(ctx.extraction_model or ctx.model),
        assistant_of(runtime.config),
        feedback,
        author=f"user:{user.label}",
        personal=[user.id, user.label, *(entry["value"] for entry in profile.values())],
        timeout_s=ctx.extraction_timeout_s,
    )
    if result["status"] == "rejected":
        return f"The instructions were not changed: {result['rejection']['rejected_because']}"
    if result["status"] == "unchanged":
        return "The instructions already say this; nothing changed."
    return f"Instructions updated (version {result['version']['version']}); they apply from the next answer."


LEARNING_TOOLS = [mark_resolved, improve_instructions]
