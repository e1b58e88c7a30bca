"""One bound on every request body, ahead of every route (server/body_bounds.py),
through the middleware ``web/app.py`` mounts, driven over raw ASGI: a test sees
how many body messages were read, and a body can be one that never ends.
Served: tests/e2e/test_request_bodies.py."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.types import Message, Receive, Scope, Send

from mnemo.access.tokens import mint_token
from mnemo.core import MAX_MEMORY_BODY_BYTES, MAX_OPERATOR_BODY_BYTES
from server.access import PLATFORM_A2A
from server.body_bounds import BOUNDS, DEV_TOKEN_BODY_BYTES, GENERAL, route_bound
from server.input_limits import MAX_BODY_BYTES

SECRET = "b" * 40
#: The platform's routes a body goes to (each at the general bound), beside mnemo's own.
PLATFORM = (
    "/threads/t1/runs",
    "/threads/t1/runs/stream",
    "/runs/wait",
    "/runs/batch",
    "/threads/search",
    "/assistants/search",
    "/store/items",
    "/store/items/search",
    "/threads/t1/state",
    "/mcp",
    "/a2a/agent",
)
#: mnemo's routes that take a body, with their bound for a user.
OWN = {
    "/memory/notes": MAX_MEMORY_BODY_BYTES,
    "/memory/notes/n1": MAX_MEMORY_BODY_BYTES,
    "/memory/notes/n1/invalidate": MAX_MEMORY_BODY_BYTES,
    "/memory/profile": MAX_MEMORY_BODY_BYTES,
    "/memory/forget": MAX_MEMORY_BODY_BYTES,
    "/memory/operator/import": MAX_MEMORY_BODY_BYTES,
    "/feedback": MAX_MEMORY_BODY_BYTES,
}


class Route:
    """The route behind the middleware: the bodies it read, the A2A mark it saw, and 200."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.a2a: list[bool] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.bodies.append(body)
        self.a2a.append(PLATFORM_A2A.get())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


class Served:
    """One request through ``web/app.py``'s middleware: its status, its answer,
    what reached the route, and how many body messages and bytes were read."""

    def __init__(self, status: int, answer: bytes, route: Route, reads: int, read_bytes: int) -> None:
        self.status, self.answer, self.route, self.reads, self.read_bytes = status, answer, route, reads, read_bytes


def serve(
    path: str,
    body: Iterator[bytes] | bytes,
    headers: dict[str, str],
    *,
    method: str = "POST",
    root_path: str = "",
) -> Served:
    from web.app import app

    route = Route()
    served: Any = route
    for cls, args, kwargs in reversed(app.user_middleware):
        served = cls(served, *args, **kwargs)
    chunks = iter([body]) if isinstance(body, bytes) else body
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": root_path,
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "server": ("testserver", 80),
        "client": ("127.0.0.1", 50000),
    }
    reads, read_bytes, sent = 0, 0, []
    pending = next(chunks, None)

    async def receive() -> Message:
        nonlocal reads, read_bytes, pending
        if pending is None:
            return {"type": "http.disconnect"}
        chunk, pending = pending, next(chunks, None)
        reads, read_bytes = reads + 1, read_bytes + len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": pending is not None}

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(served(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    answer = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Served(status, answer, route, reads, read_bytes)


#: The size of a long body: past every bound but an admin's import, so a layer that
#: reads it all is seen (the test fails, it does not hang).
LONG = 4 * MAX_BODY_BYTES


def endless(chunk: int = 4096) -> Iterator[bytes]:
    """A JSON body of :data:`LONG` bytes in ``chunk``-byte messages (a client that keeps sending)."""
    return itertools.chain([b'{"x": "'], itertools.repeat(b"x" * chunk, LONG // chunk))


def padded(size: int) -> bytes:
    """A JSON object of ``size`` bytes every guard behind the layer lets through."""
    head = b'{"namespace_prefix": ["alice"], "text": "'
    return head + b"y" * (size - len(head) - 2) + b'"}'


def auth(user_id: str = "alice", *, admin: bool = False) -> dict[str, str]:
    return {"Authorization": f"Bearer {mint_token(user_id, secret=SECRET, role='admin' if admin else 'user')}"}


@pytest.fixture(autouse=True)
def secret(monkeypatch):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)


def test_one_table_declares_each_routes_bound_and_the_rest_get_the_general_one():
    assert {route_bound(p).user for p in OWN} == {MAX_MEMORY_BODY_BYTES}
    assert route_bound("/memory/operator/import").admin == MAX_OPERATOR_BODY_BYTES
    assert route_bound("/ui/dev-token").user == DEV_TOKEN_BODY_BYTES and route_bound("/ui/dev-token").open
    assert all(route_bound(p) is GENERAL for p in (*PLATFORM, "/memory/notes/n1/x", "/feedbacks", "/anything"))
    assert GENERAL.user == MAX_BODY_BYTES and not GENERAL.open
    assert [p for p, b in BOUNDS.items() if b.open] == ["/ui/dev-token"]  # the only route taking bodies unsigned


@pytest.mark.parametrize("path", [*OWN, *PLATFORM, "/ui/label", "/nowhere"])
def test_no_body_is_read_before_its_caller_is_known(path):
    small = padded(60)
    # The precondition: with a valid token the same body reaches the route whole.
    known = serve(path, small, {**auth(), "Content-Length": str(len(small))})
    assert (known.status, known.route.bodies) == (200, [small]), known.answer
    for credentials in ({}, {"Authorization": "Bearer not-a-token"}, {"X-Api-Key": "nope"}):
        for body, length in ((small, str(len(small))), (b"{not json", "9"), (endless(), None)):
            headers = (
                {**credentials, "Content-Length": length} if length else {**credentials, "Transfer-Encoding": "chunked"}
            )
            got = serve(path, body, headers)
            assert (got.status, got.reads, got.route.bodies) == (401, 0, []), (path, credentials, got.answer)
            assert "detail" in json.loads(got.answer)


def test_a_request_without_a_body_passes_to_its_route_whoever_sends_it():
    for method, path in (("GET", "/ok"), ("GET", "/ui"), ("GET", "/memory/export"), ("POST", "/memory/forget")):
        got = serve(path, b"", {"Content-Length": "0"} if method == "POST" else {}, method=method)
        assert (got.status, got.route.bodies) == (200, [b""]), (path, got.answer)


@pytest.mark.parametrize("path", [*OWN, *PLATFORM])
def test_a_content_length_over_the_routes_bound_is_refused_before_one_body_message_is_read(path):
    limit = route_bound(path).user
    within = padded(limit)
    got = serve(path, within, {**auth(), "Content-Length": str(limit)})
    assert (got.status, got.route.bodies) == (200, [within])  # the precondition: at the bound, it passes
    for announced in (limit + 1, 300_000_000):
        got = serve(path, endless(), {**auth(), "Content-Length": str(announced)})
        assert (got.status, got.reads, got.route.bodies) == (413, 0, []), (path, got.answer)
        assert str(limit).encode() in got.answer


@pytest.mark.parametrize("path", [*OWN, *PLATFORM])
def test_a_chunked_body_is_read_to_its_routes_bound_and_no_further(path):
    limit = route_bound(path).user
    for chunk in (1000, 65536):
        got = serve(path, endless(chunk), {**auth(), "Transfer-Encoding": "chunked"})
        assert (got.status, got.route.bodies) == (413, []), (path, got.answer)
        assert limit < got.read_bytes <= limit + chunk + 7  # cut at the first message past the bound
    # Within the bound, in many messages, the route gets it whole.
    body = padded(limit // 2)
    got = serve(
        path, iter([body[i : i + 999] for i in range(0, len(body), 999)]), {**auth(), "Transfer-Encoding": "chunked"}
    )
    assert (got.status, got.route.bodies) == (200, [body])


def test_an_admins_import_has_its_own_bound_a_users_body_there_the_small_one():
    path, big = "/memory/operator/import", b"{" + b" " * (MAX_MEMORY_BODY_BYTES * 4) + b"}"
    got = serve(path, big, {**auth("ops", admin=True), "Content-Length": str(len(big))})
    assert (got.status, got.route.bodies) == (200, [big])
    got = serve(path, big, {**auth(), "Content-Length": str(len(big))})
    assert (got.status, got.reads) == (413, 0)
    got = serve(path, endless(), {**auth("ops", admin=True), "Content-Length": str(MAX_OPERATOR_BODY_BYTES + 1)})
    assert (got.status, got.reads) == (413, 0)


def test_the_development_sign_in_takes_a_small_body_without_a_caller():
    code = json.dumps({"user_id": "carol", "code": "c"}).encode()
    got = serve("/ui/dev-token", code, {"Content-Length": str(len(code))})
    assert (got.status, got.route.bodies) == (200, [code])
    got = serve("/ui/dev-token", endless(), {"Content-Length": str(DEV_TOKEN_BODY_BYTES + 1)})
    assert (got.status, got.reads) == (413, 0)
    got = serve("/ui/dev-token", endless(1000), {"Transfer-Encoding": "chunked"})
    assert got.status == 413 and got.read_bytes <= DEV_TOKEN_BODY_BYTES + 1007


def test_the_servers_in_process_client_passes_as_the_platforms_authentication_lets_it():
    body = b"{" + b" " * MAX_BODY_BYTES + b"}"
    got = serve("/threads/t1/runs", body, {"Content-Length": str(len(body))}, root_path="/noauth")
    assert (got.status, got.route.bodies) == (200, [body])
    got = serve("/threads/t1/runs", body, {"Content-Length": str(len(body))}, root_path="/noauthx")
    assert (got.status, got.reads) == (401, 0)  # a look-alike root is no loopback
