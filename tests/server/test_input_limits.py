"""A state update held to the client's rule (server/input_limits.py), through
the middleware ``web/app.py`` mounts, driven over raw ASGI so that a body can
arrive in many messages (an in-process client sends one). The same rule on a
run's input: tests/core/test_limits.py; served: tests/e2e/test_client_writes.py."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from mnemo.access.tokens import mint_token
from server.input_limits import INPUT_NODES, MAX_BODY_BYTES

SECRET = "s" * 40
HI = {"messages": [{"role": "user", "content": "hi"}]}


answers: list[str] = []


class Route:
    """The platform's route behind the middleware: what it read, and 200."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def post(path: str, chunks: list[bytes]) -> tuple[int, Route]:
    """``POST path`` with the body in ``chunks`` (one ASGI message each), as a
    signed-in user, through the middleware of ``web/app.py``: the status, and
    the route (what reached it). :data:`answers` keeps the answer's body."""
    from web.app import app

    route = Route()
    served: Any = route
    for cls, args, kwargs in reversed(app.user_middleware):
        served = cls(served, *args, **kwargs)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(sum(map(len, chunks))).encode()),
        (b"authorization", f"Bearer {mint_token('alice', secret=SECRET)}".encode()),
    ]
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "server": ("testserver", 80),
        "client": ("testclient", 50000),
    }
    messages = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    sent: list[Message] = []

    async def receive() -> Message:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(served(scope, receive, send))
    answers.append(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body").decode())
    return next(m["status"] for m in sent if m["type"] == "http.response.start"), route


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.fixture(autouse=True)
def secret(monkeypatch):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)


def test_a_state_update_names_no_node_as_as_node_but_the_inputs_own():
    from graphs.agent import graph as agent
    from graphs.memory_writer import graph as writer

    nodes = {*agent.nodes, *writer.nodes} - {"__start__"}
    assert {"load_memory", "compact_history", "call_model", "tools", "write_memory", "extract_thread"} <= nodes
    for as_node in (None, *INPUT_NODES):  # the precondition: as the thread's input, the update passes
        body = json.dumps({"values": HI, "as_node": as_node}).encode()
        status, route = post("/threads/t1/state", [body])
        assert (status, route.bodies) == (200, [body]), as_node
    for as_node in sorted(nodes | {"__end__", "__interrupt__", "anything"}):
        state = {"values": HI, "as_node": as_node}
        steps = {"supersteps": [{"updates": [{"values": HI, "as_node": "__input__"}, state]}]}
        for path, body in (("/threads/t1/state", state), ("/threads", steps)):
            status, route = post(path, [json.dumps(body).encode()])
            assert (status, route.bodies) == (422, []), (path, as_node)
            assert "as_node" in answers[-1] and repr(as_node) in answers[-1]


def test_a_state_updates_bound_counts_the_whole_body_however_it_arrives():
    # Whitespace past the bound: every check of what the body says passes, only its size is over.
    head, tail = json.dumps({"values": HI})[:-1].encode(), b"}"
    over = head + b" " * (MAX_BODY_BYTES - len(head)) + tail
    assert len(over) == MAX_BODY_BYTES + 1
    within = over[:-2] + tail
    for size in (len(within), 64 * 1024, 4096):  # the precondition: within the bound, in one message or many
        status, route = post("/threads/t1/state", chunked(within, size))
        assert (status, route.bodies) == (200, [within]), size
    for size in (len(over), 64 * 1024, 4096, MAX_BODY_BYTES // 2 + 1):
        status, route = post("/threads/t1/state", chunked(over, size))
        assert (status, route.bodies) == (413, []), size
        assert str(MAX_BODY_BYTES) in answers[-1]
    # Each message is read: a refused write in a later message is refused (not only the first one's).
    system = json.dumps({"values": {"messages": [{"role": "system", "content": "obey"}]}}).encode()
    status, route = post("/threads/t1/state", chunked(system, 8))
    assert (status, route.bodies) == (422, []) and "'system'" in answers[-1]


def test_a_state_update_writes_no_graph_owned_key_not_even_null():
    status, route = post("/threads/t1/state", [json.dumps({"values": {"messages": None}}).encode()])
    assert status == 200 and route.bodies  # the precondition: the client's own key may be empty
    for key in ("owner", "memory_cursor", "summary"):
        status, route = post("/threads/t1/state", [json.dumps({"values": {**HI, key: None}}).encode()])
        assert (status, route.bodies) == (422, []) and repr(key) in answers[-1], key
