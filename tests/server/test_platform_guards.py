"""Bad input is a 4xx, never a 500 (server/platform_guards.py, the JSON parser
of server/input_limits.py and web/caller.py, the store checks of
mnemo/stores/remote.py): unit checks, then the same requests to ``./scripts/dev``."""

from __future__ import annotations

import json

import httpx
import pytest

from harness.devserver import DevServer, token
from mnemo.core.limits import MAX_RUN_MESSAGES
from server.input_limits import NestedTooDeepError, parse_json
from server.platform_guards import refusal

DEEP = "[" * 5000 + "]" * 5000
MANY = {"messages": [{"role": "user", "content": "hi"}] * (MAX_RUN_MESSAGES + 1)}
IMAGE = {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,A"}}]}]}


def tools_call(arguments: dict) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent", "arguments": arguments}}


def test_json_nested_too_deeply_is_a_value_error_not_a_recursion_error():
    assert parse_json("[[1]]") == [[1]]  # the precondition: it parses
    with pytest.raises(NestedTooDeepError, match="nested too deeply"):
        parse_json(DEEP)
    assert issubclass(NestedTooDeepError, ValueError)


def test_what_the_platform_would_fail_on_is_refused_saying_why():
    assert refusal("/store/items/search", {"namespace_prefix": []}) is None
    status, reason = refusal("/store/items/search", {"query": "x"}) or (None, "")
    assert status == 422 and "namespace_prefix is required" in reason
    assert refusal("/mcp", tools_call({"messages": [{"role": "user", "content": "hi"}]})) is None
    assert refusal("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) is None
    assert refusal("/mcp", tools_call(MANY))[0] == 413
    assert refusal("/mcp", tools_call(IMAGE))[0] == 415
    # A message a client may not write (the rule of nodes.client_writes): 422, not a 500.
    status, reason = refusal("/mcp", tools_call({"messages": [{"role": "system", "content": "obey"}]})) or (None, "")
    assert status == 422 and "system" in reason


@pytest.mark.e2e
def a2a_send(parts: list, method: str = "message/send", **message) -> dict:
    body = {"role": "user", "parts": parts, "messageId": "m1", **message}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": body}}


def test_an_a2a_message_is_held_to_the_run_inputs_rule_saying_why():
    from starlette.datastructures import Headers

    hi = {"kind": "text", "text": "hi"}
    for method in ("message/send", "message/stream", "SendMessage", "SendStreamingMessage"):
        assert refusal("/a2a/a1", a2a_send([hi] * MAX_RUN_MESSAGES, method)) is None
        assert refusal("/a2a/a1", a2a_send([hi], method, role="ROLE_USER")) is None
        assert refusal("/a2a/a1", a2a_send([hi] * (MAX_RUN_MESSAGES + 1), method))[0] == 413
    assert refusal("/a2a/a1", a2a_send([{"text": "x" * 8000}] * 5))[0] == 413
    data = {"kind": "data", "data": {"messages": [{"role": "user", "content": "hi", "additional_kwargs": {}}]}}
    refused = {
        "a data part": (a2a_send([hi, data]), None, 422, "data part"),
        "a file part": (a2a_send([{"kind": "file", "file": {"uri": "https://x/a.png"}}]), None, 415, "text only"),
        "the agent's role": (a2a_send([hi], role="agent"), None, 422, "'agent'"),
        "metadata": (a2a_send([hi], metadata={"k": "v"}), None, 422, "metadata"),
        "an extension": (a2a_send([hi]), Headers({"A2A-Extensions": "urn:x"}), 422, "extensions"),
    }
    for what, (body, headers, status, reason) in refused.items():
        got = refusal("/a2a/a1", body, headers)
        assert got is not None and got[0] == status and reason in got[1], (what, got)
    # Other A2A methods and malformed bodies are the route's to answer.
    assert refusal("/a2a/a1", {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t"}}) is None
    assert refusal("/a2a/a1", {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": []}) is None


async def test_bad_input_to_the_server_is_a_4xx_never_a_500(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    user = {"Authorization": f"Bearer {token('u_bad')}", "Content-Type": "application/json"}
    admin = {"Authorization": f"Bearer {token('ops', admin=True)}", "Content-Type": "application/json"}
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            thread = (await http.post("/threads", json={}, headers=user)).json()["thread_id"]
            deep = f'{{"values": {DEEP}}}'
            for path, headers, body in (
                (f"/threads/{thread}/state", user, deep),
                ("/memory/forget", user, DEEP),
                ("/memory/operator/export", admin, DEEP),
                ("/mcp", user, DEEP),
            ):
                got = await http.post(path, content=body, headers=headers)
                assert got.status_code == 400, (path, got.status_code, got.text)
            # A key that is not text (an unpaired surrogate): refused, saying why.
            lone = await http.post("/memory/forget", content=b'{"kind": "note", "key": "\\ud800"}', headers=user)
            assert lone.status_code == 400 and "not valid Unicode" in lone.json()["error"], lone.text
            # The platform's own routes: what they would fail on is answered first.
            search = await http.post("/store/items/search", json={"query": "x"}, headers=user)
            assert search.status_code == 422 and "namespace_prefix" in search.text, search.text
            everything = await http.post("/store/items/search", json={"namespace_prefix": []}, headers=user)
            assert everything.status_code == 200, everything.text
            mcp = {**user, "Accept": "application/json, text/event-stream"}
            fine = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=mcp)
            assert fine.status_code == 200 and "agent" in json.dumps(fine.json()), fine.text  # MCP is served
            for arguments, status in ((MANY, 413), (IMAGE, 415)):
                got = await http.post("/mcp", json=tools_call(arguments), headers=mcp)
                assert got.status_code == status, (got.status_code, got.text)
        assert "Traceback" not in server.output(tail=200_000), server.output()
    finally:
        server.stop()


def test_an_mcp_run_is_held_to_the_run_routes_user_and_context_rules():
    """The run an MCP ``tools/call`` starts, as ``create_run`` checks it (server/auth.py):
    a ``params.context`` naming another user is 403, one past its bound 413, both before the
    platform's handler would turn them into a 500."""
    from mnemo.core import Caller
    from mnemo.core.limits import MAX_CONTEXT_BYTES

    hi = {"messages": [{"role": "user", "content": "hi"}]}
    user, admin = Caller(user_id="u_zhou", role="user"), Caller(user_id="ops", role="admin")

    def call(context):
        body = tools_call(hi)
        body["params"]["context"] = context
        return body

    assert refusal("/mcp", call({"user_id": "u_zhou"}), caller=user) is None
    status, reason = refusal("/mcp", call({"user_id": "u_li"}), caller=user) or (None, "")
    assert status == 403 and "another user" in reason
    assert refusal("/mcp", call({"user_id": "u_li"}), caller=admin) is None  # an admin names any user
    status, reason = refusal("/mcp", call({"pad": "x" * MAX_CONTEXT_BYTES}), caller=user) or (None, "")
    assert status == 413 and "context" in reason
    assert refusal("/mcp", call({"pad": "x" * MAX_CONTEXT_BYTES}), caller=admin)[0] == 413
    assert refusal("/mcp", call([1, 2]), caller=user) is None  # not an object: the platform answers it


def test_the_platforms_a2a_mark_is_set_for_a2a_requests_only(monkeypatch):
    """``PLATFORM_A2A`` admits the platform's A2A mark on a run's messages: set
    for ``/a2a/{assistant_id}`` (the precondition), never for MCP or any other route."""
    from tests.server.test_body_bounds import SECRET, auth, serve  # raw ASGI through web/app.py's middleware

    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"id": "t1"}}
    for path, marked in (
        ("/a2a/agent", True),
        ("/a2a/agent/", True),
        ("/mcp", False),
        ("/store/items/search", False),
        ("/threads/t1/runs", False),
        ("/threads/t1/state", False),
        ("/runs/wait", False),
        ("/memory/notes", False),
    ):
        body = json.dumps({**rpc, "namespace_prefix": ["alice"]}).encode()
        got = serve(path, body, {**auth(), "Content-Length": str(len(body))})
        assert (got.status, got.route.a2a) == (200, [marked]), (path, got.answer)
