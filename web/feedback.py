"""``POST /feedback``: the user says whether a thread's request was resolved, and
the thread becomes an episode (:func:`mnemo.episodes.build_episode`) the agent is
shown as an example later. The thread is the caller's own (an admin's: any
user's it names); anyone else's is "not found".
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo.app import DEFAULT_ASSISTANT, InvalidTokenError, MnemoError, arecord_episode, build_episode, resolve_user
from server.access import OWNER
from web import server_store
from web.caller import BodyError, json_body, verified_caller


async def feedback(request: Request) -> JSONResponse:
    from langchain_core.messages import convert_to_messages
    from langgraph_sdk import get_client

    try:
        who = verified_caller(request)  # the caller first: nothing of an unknown one's body is read
    except InvalidTokenError as exc:
        return JSONResponse({"error": str(exc)}, status_code=401)
    try:
        body = await json_body(request)
    except BodyError as exc:
        return JSONResponse({"error": f"send a JSON object: {{thread_id, user_id, outcome}} ({exc})"}, exc.status)
    outcome = body.get("outcome", "resolved")
    thread_id = str(body.get("thread_id") or "")
    if outcome not in ("resolved", "unresolved") or not thread_id:
        return JSONResponse(
            {"error": "thread_id is required and outcome is 'resolved' or 'unresolved'"}, status_code=400
        )
    try:
        user = resolve_user(who, body.get("user_id"))
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    # In-process, the server's own API answers without auth: the owner check
    # below is this route's, and a thread of someone else is "not found".
    client = get_client()
    try:
        thread = await client.threads.get(thread_id)
        state = await client.threads.get_state(thread_id)
    except Exception:
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    owner = (thread.get("metadata") or {}).get(OWNER)
    values = state["values"] if isinstance(state["values"], dict) else {}
    if values.get("owner") != user.label or (not who.admin and owner != user.id):
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    episode = build_episode(
        convert_to_messages(values.get("messages") or []),
        assistant_id=str((thread.get("metadata") or {}).get("assistant_id") or DEFAULT_ASSISTANT),
        thread_id=thread_id,
        outcome=outcome,
        source="feedback_route",
    )
    if episode is None:
        return JSONResponse({"error": "this thread has no answered request to keep"}, status_code=409)
    # Written through mnemo on the server's own store, as every /memory route writes.
    await arecord_episode(await server_store.get(), user, episode)
    return JSONResponse({"episode": episode})
