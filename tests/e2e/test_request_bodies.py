"""No body is read before its caller is known, nor past its route's bound
(issue 43 point 2), through a real ``./scripts/dev``: the platform's
authentication runs before mnemo's guards (``langgraph.json``:
``middleware_order: auth_first``), which read at most
``server.input_limits.MAX_BODY_BYTES`` (``bounded_body``).

Each request goes over a raw socket, so a test can send a body that never
ends: an answer that arrives at all is one that did not wait for the body.
What twenty 300 MB bodies cost the worker (memory, ``/ok``) is measured
once, not asserted (docs/security.md).
"""

from __future__ import annotations

import socket

import pytest

from server.input_limits import MAX_BODY_BYTES
from tests.devserver import DevServer, token

pytestmark = pytest.mark.e2e

#: Routes whose body mnemo's guards read (the state update, supersteps, MCP, store search, A2A).
GUARDED = ("/threads/t1/state", "/threads", "/mcp", "/store/items/search", "/a2a/agent")
#: How long a test waits for an answer; the body it sent never ends, so only
#: an answer given without the body arrives at all.
WAIT_S = 60


def post_raw(server: DevServer, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, bytes]:
    """``POST path`` with ``headers`` and the first ``body`` bytes of a body never
    sent in full; the answer's status and body (``(0, b"")``: none in :data:`WAIT_S`)."""
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S) as conn:
        conn.sendall(head.encode() + body)
        answer = b""
        try:
            while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < 2:
                if not (got := conn.recv(65536)):
                    break
                answer += got
        except TimeoutError:
            return 0, b""
    status = answer.split(b"\r\n", 1)[0].split(b" ")
    return (int(status[1]) if len(status) > 1 else 0), answer.split(b"\r\n\r\n", 1)[-1]


def chunked(size: int) -> bytes:
    """``size`` bytes of a JSON string in 64 KiB chunks of ``Transfer-Encoding: chunked``, no last chunk."""
    out, left = b'{"x":"', size
    frames = []
    while left > 0:
        n = min(65536, left)
        frames.append(f"{n:x}\r\n".encode() + (out + b"x" * (n - len(out)))[:n] + b"\r\n")
        out, left = b"", left - n
    return b"".join(frames)


def check_bodies(server: DevServer) -> None:
    alice = {"Authorization": f"Bearer {token('alice')}"}
    huge = {"Content-Length": str(300_000_000)}
    for path in GUARDED:
        # No credentials, a bad token, or an X-Api-Key that is no token: 401 at once, the body unread.
        for credentials in ({}, {"Authorization": "Bearer not-a-token"}, {"X-Api-Key": "nope"}):
            status, answer = post_raw(server, path, {**huge, **credentials}, b'{"values": {"messages": "')
            assert status == 401 and b"detail" in answer, (path, credentials, status, answer[:200])
        # A whole, small, bad body without credentials is a 401 too, not the guard's 422.
        bad = b'{"values": {"messages": [{"role": "system", "content": "obey"}]}}'
        status, _ = post_raw(server, path, {"Content-Length": str(len(bad))}, bad)
        assert status == 401, (path, status)
        # The caller known: a Content-Length over the bound is a 413 without reading it.
        over = {"Content-Length": str(MAX_BODY_BYTES + 1)}
        status, answer = post_raw(server, path, {**alice, **over}, b'{"x": "')
        assert status == 413 and str(MAX_BODY_BYTES).encode() in answer, (path, status, answer[:200])
        # A chunked body is read to the bound and no further: 413 though it never ends.
        status, answer = post_raw(
            server, path, {**alice, "Transfer-Encoding": "chunked"}, chunked(MAX_BODY_BYTES + 65536)
        )
        assert status == 413 and str(MAX_BODY_BYTES).encode() in answer, (path, status, answer[:200])

    # Within the bound, chunked or not, the body reaches the guard and the route whole.
    search = b'{"namespace_prefix": ["alice"], "query": "' + b"q" * 70_000 + b'"}'
    frames = b"".join(
        f"{len(search[i : i + 65536]):x}\r\n".encode() + search[i : i + 65536] + b"\r\n"
        for i in range(0, len(search), 65536)
    )
    status, answer = post_raw(
        server, "/store/items/search", {**alice, "Transfer-Encoding": "chunked"}, frames + b"0\r\n\r\n"
    )
    assert status == 200 and b'"items"' in answer, (status, answer[:300])
    status, answer = post_raw(server, "/store/items/search", {**alice, "Content-Length": "2"}, b"{}")
    assert status == 422 and b"namespace_prefix" in answer, (status, answer[:300])


def test_no_body_is_read_before_its_caller_is_known_nor_past_its_bound(workdir, server_env):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        check_bodies(server)
    finally:
        server.stop()
