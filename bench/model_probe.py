"""What an OpenAI-compatible model server answers to mnemo's kinds of request.

:func:`probe` asks the server directly what mnemo's model calls depend on
(forced tool calls, response formats, streaming, the output cap), so the stub
profiles of the tests can be compared with what a real server does;
:func:`answer_of` reads a chat completion's body (a JSON document or an SSE
stream), :func:`json_object` and :func:`fenced_json` the JSON a model wrote.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx

_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
    "required": ["name", "city"],
}
_TOOL = {
    "type": "function",
    "function": {"name": "Profile", "description": "The user's name and city.", "parameters": _SCHEMA},
}
_REMEMBER = {
    "type": "function",
    "function": {
        "name": "remember_note",
        "description": "Keep a fact the user asks you to remember.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
}
_ASK = [
    {"role": "system", "content": "Extract the user's name and city."},
    {"role": "user", "content": "Hi, I'm Ingrid and I live in Lisbon."},
]

#: What mnemo's model calls may send, one request each (issue 29).
PROBES: dict[str, dict[str, Any]] = {
    "named tool_choice": {"tools": [_TOOL], "tool_choice": {"type": "function", "function": {"name": "Profile"}}},
    'tool_choice "required"': {"tools": [_TOOL], "tool_choice": "required"},
    "response_format json_schema": {
        "response_format": {"type": "json_schema", "json_schema": {"name": "Profile", "schema": _SCHEMA}}
    },
    "response_format json_object": {"response_format": {"type": "json_object"}},
    "plain stream": {"stream": True},
    # An agent's turn (issue 42): a tool offered, the model free to call it or not.
    "tool offered (auto)": {
        "tools": [_REMEMBER],
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. Call remember_note to keep what users ask."},
            {"role": "user", "content": "Please remember that I'm allergic to peanuts."},
        ],
    },
    "max_tokens 16": {
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "Count from 1 to 200, one number a line."}],
    },
}


def answer_of(raw: str, *, stream: bool) -> dict[str, Any]:
    """``{content, tool_calls: [(name, arguments)], finish_reason, completion_tokens, chunks}``
    of a chat completion's body (a JSON document, or an SSE stream re-assembled)."""
    content, finish, tokens, chunks = "", None, None, 0
    calls: dict[int, tuple[str, str]] = {}
    if stream:
        for line in raw.splitlines():
            if not line.startswith("data: ") or line.strip() == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            chunks += 1
            tokens = (event.get("usage") or {}).get("completion_tokens", tokens)
            for choice in event.get("choices") or []:
                delta = choice.get("delta") or {}
                content += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    name, args = calls.get(call.get("index", 0), ("", ""))
                    fn = call.get("function") or {}
                    calls[call.get("index", 0)] = (name + (fn.get("name") or ""), args + (fn.get("arguments") or ""))
                finish = choice.get("finish_reason") or finish
    else:
        doc = json.loads(raw)
        tokens = (doc.get("usage") or {}).get("completion_tokens")
        choice = (doc.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        content, finish = message.get("content") or "", choice.get("finish_reason")
        for i, call in enumerate(message.get("tool_calls") or []):
            calls[i] = (call["function"].get("name", ""), call["function"].get("arguments") or "")
    return {
        "content": content,
        "tool_calls": [calls[i] for i in sorted(calls)],
        "finish_reason": finish,
        "completion_tokens": tokens,
        "chunks": chunks,
    }


def json_object(text: str) -> dict | None:
    """``text`` as a JSON object, or None."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def fenced_json(text: str) -> dict | None:
    """The JSON object of the first fenced block (```json ... ```) in ``text``, or None:
    how a model that does not use the server's tool-call format writes a call in its answer."""
    m = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.DOTALL)
    return json_object(m.group(1)) if m else None


def probe(base_url: str, alias: str, log: Path | None = None) -> dict[str, dict[str, Any]]:
    """Each of :data:`PROBES` sent to ``base_url``: what came back, and the server's log lines about it."""
    results = {}
    for label, extra in PROBES.items():
        body = {"model": alias, "messages": _ASK, "max_tokens": 256, "temperature": 0, **extra}
        seen = len(log.read_text(errors="replace")) if log else 0
        started = time.monotonic()
        resp = httpx.post(f"{base_url}/chat/completions", json=body, timeout=600)
        got = answer_of(resp.text, stream=bool(body.get("stream"))) if resp.status_code == 200 else {}
        calls = got.get("tool_calls", [])
        results[label] = {
            "status": resp.status_code,
            "seconds": round(time.monotonic() - started, 2),
            "finish_reason": got.get("finish_reason"),
            "completion_tokens": got.get("completion_tokens"),
            "tool_calls": [name for name, _ in calls],
            "call_args_json": bool(calls) and all(json_object(args) is not None for _, args in calls),
            "content_json": json_object(got.get("content", "")) is not None,
            "content_fenced_json": fenced_json(got.get("content", "")) is not None,
            "content": (got["content"] if resp.status_code == 200 else resp.text)[:300],
            "stream_chunks": got.get("chunks"),
            "server_said": _notable(log.read_text(errors="replace")[seen:]) if log else [],
        }
    return results


def _notable(log_text: str) -> list[str]:
    return [
        line.strip()[:200]
        for line in log_text.splitlines()
        if re.search(r"warn|error|tool_choice|Wrong type|grammar|schema", line, re.IGNORECASE)
    ][:5]
