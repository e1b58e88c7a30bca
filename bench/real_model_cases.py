"""The other memory calls of ``python -m bench real-model`` (issue 42 point 4),
each a short case against the same ``./scripts/dev`` and model server:

* ``consolidate``: a user's notes, some saying the same thing and two
  contradicting each other, written through the operator route; then
  ``python -m mnemo consolidate <user> --url <server>`` as an operator runs it
  (the server's model, through the recording proxy). Reported: what it merged
  and listed, the notes afterwards, the model's requests and seconds.
* ``rewrite``: an instruction rewrite from feedback, twice. Through the agent
  ("Feedback for me: ..."), which has to call ``improve_instructions``; and
  the same feedback given to ``mnemo.instructions.alearn_for_user`` (what that tool
  runs) with the model built by mnemo against the proxy, so the rewrite
  itself is tried even when the model does not call the tool. Reported: the
  tool calls, the user's instructions afterwards, the rewrite's status.

Also :func:`tool_call_examples`: a few of the agent's requests that offered
tools, as sent, and what came back (issue 42: does the model call them?).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench.model_probe import answer_of, fenced_json, json_object
from bench.model_proxy import run_to_end
from bench.provenance import load_average
from bench.real_model_report import request_summary

CONSOLIDATE_USER = "real-model-consolidate"
#: Two pairs that say the same thing, one contradiction, one note apart.
SEED_NOTES = (
    "Is allergic to peanuts.",
    "Has a peanut allergy and avoids anything with peanuts.",
    "Has two cats.",
    "Has one cat.",
    "Prefers to be contacted by email.",
    "Prefers email to phone calls.",
    "Lives in Lisbon.",
)
REWRITE_USER = "real-model-rewrite"
FEEDBACK = "Feedback for me: keep your answers to two sentences, please."
#: What the rewrite is given directly (the tool's ``feedback`` argument: the user's words).
FEEDBACK_TEXT = "keep your answers to two sentences, please"


async def timed_turn(
    client: Any, thread_id: str, text: str, context: dict[str, Any], *, user_id: str
) -> dict[str, Any]:
    """One run of ``text`` as ``user_id`` to its end: its status, seconds, the load and the reply's start."""
    started = time.monotonic()
    status = await run_to_end(client, thread_id, text, {**context, "user_id": user_id})
    seconds = time.monotonic() - started
    messages = ((await client.threads.get_state(thread_id)).get("values") or {}).get("messages") or []
    reply = messages[-1].get("content") if messages else None
    reply = str(reply)[:200]
    return {"said": text, "status": status, "seconds": round(seconds, 1), "load": load_average(), "reply": reply}


def _requests(proxy: Any, since: float) -> list[dict[str, Any]]:

    return [request_summary(r) for r in proxy.records if r["started"] >= since and r["path"].endswith("/completions")]


def _export(server: Any, user_id: str) -> dict[str, Any]:
    from harness.devserver import token

    res = httpx.get(f"{server.url}/memory/export", headers={"Authorization": f"Bearer {token(user_id)}"}, timeout=120)
    return res.json() if res.status_code == 200 else {"error": res.text[:300]}


def _notes(export: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: n[k] for k in ("text", "merged_into") if n.get(k) is not None} for n in export.get("notes", [])]


def consolidate(server: Any, proxy: Any, workdir: Path, settings: dict[str, str], context: dict[str, Any]) -> dict:
    """The ``consolidate`` case (module docstring)."""
    from harness.devserver import server_environment, token

    admin = {"Authorization": f"Bearer {token('ops', admin=True)}"}
    seeded = []
    for text in SEED_NOTES:
        res = httpx.post(
            f"{server.url}/memory/operator/remember",
            json={"user_id": CONSOLIDATE_USER, "text": text},
            headers=admin,
            timeout=300,
        )
        answer = json_object(res.text) or {}
        seeded.append({"text": text, "http": res.status_code, "status": answer.get("status", res.text[:120])})
    since, started = time.time(), time.monotonic()
    env = {**server_environment(), "MNEMO_TOKEN": token("ops", admin=True)}
    python = str(workdir / ".venv" / "bin" / "python")
    done = subprocess.run(
        [python, "-m", "mnemo", "consolidate", CONSOLIDATE_USER, "--url", server.url],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    return {
        "seeded": seeded,
        "exit_code": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "load": load_average(),
        "result": json_object(done.stdout),
        "stderr": done.stderr[-1500:],
        "notes_after": _notes(_export(server, CONSOLIDATE_USER)),
        "requests": _requests(proxy, since),
    }


def rewrite(server: Any, proxy: Any, workdir: Path, settings: dict[str, str], context: dict[str, Any]) -> dict:
    """The ``rewrite`` case (module docstring)."""
    from harness.devserver import client as signed_in

    async def through_agent() -> dict[str, Any]:
        user = signed_in(server, REWRITE_USER)
        thread = (await user.threads.create())["thread_id"]
        since = time.time()
        turn = await timed_turn(user, thread, FEEDBACK, context, user_id=REWRITE_USER)
        state = (await user.threads.get_state(thread)).get("values") or {}
        tools = [str(m.get("content"))[:300] for m in state.get("messages") or [] if m.get("type") == "tool"]
        return {"turn": turn, "tool_results": tools, "requests": _requests(proxy, since)}

    agent = asyncio.run(through_agent())
    agent["instructions_after"] = _export(server, REWRITE_USER).get("other", {}).get("instructions", [])
    return {"through_agent": agent, "direct": _rewrite_directly(proxy, settings, context)}


def _rewrite_directly(proxy: Any, settings: dict[str, str], context: dict[str, Any]) -> dict[str, Any]:
    """``alearn_for_user`` with mnemo's own model building, pointed at the proxy
    as the server's ``.env`` points it (in this process, on an in-memory store)."""
    from langgraph.store.memory import InMemoryStore

    from mnemo.audit import Origin
    from mnemo.core import InvalidInputError, User
    from mnemo.instructions import alearn_for_user
    from mnemo.models import aload_chat_model

    saved = {k: os.environ.get(k) for k in (*settings, "OPENAI_BASE_URL")}
    os.environ.update({**settings, "OPENAI_BASE_URL": proxy.base_url})
    timeout_s = float(context.get("extraction_timeout_s", 30))  # the tool's deadline: the run's
    since, started = time.time(), time.monotonic()

    async def learn() -> dict[str, Any]:
        model = await aload_chat_model(settings["MNEMO_MODEL"], memory=True)
        user, store = User.of(REWRITE_USER), InMemoryStore()
        origin = Origin(source="admin", actor="bench:real-model")
        try:
            result: dict[str, Any] = dict(
                await alearn_for_user(store, model, user, FEEDBACK_TEXT, origin=origin, timeout_s=timeout_s)
            )
        except InvalidInputError as exc:
            return {"status": "no rewrite", "error": str(exc)}
        return result

    try:
        found = asyncio.run(learn())
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return {
        "feedback": FEEDBACK_TEXT,
        "timeout_s": timeout_s,
        "result": found,
        "seconds": round(time.monotonic() - started, 1),
        "load": load_average(),
        "requests": _requests(proxy, since),
    }


CASES: dict[str, Callable[..., dict[str, Any]]] = {"consolidate": consolidate, "rewrite": rewrite}


def tool_call_examples(records: list[dict[str, Any]], most: int = 3) -> list[dict[str, Any]]:
    """Up to ``most`` of the agent's requests that offered tools (no tool forced): the
    request as sent, the answer re-assembled (a stream's chunks joined) with its first
    raw chunks, and whether it called a tool, wrote a fenced JSON block, or neither."""
    found = []
    for r in records:
        body = r["body"]
        if not body.get("tools") or body.get("tool_choice") not in (None, "auto") or body.get("response_format"):
            continue
        stream = bool(body.get("stream"))
        got = answer_of(r["answer"], stream=stream) if r["status"] == 200 else {}
        found.append(
            {
                "request": body,
                "status": r["status"],
                "seconds": round(r["ended"] - r["started"], 1),
                "answer": {k: got.get(k) for k in ("content", "tool_calls", "finish_reason", "completion_tokens")},
                "answer_raw_start": r["answer"][:1500],
                "called_a_tool": bool(got.get("tool_calls")),
                "fenced_json_in_text": fenced_json(got.get("content") or ""),
            }
        )
    # The ones that show the issue first: a call written as text, then real calls.
    found.sort(key=lambda e: (e["fenced_json_in_text"] is None, not e["called_a_tool"]))
    return found[:most]
