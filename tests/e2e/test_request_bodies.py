"""No body is read before its caller is known, nor past its route's bound
(issues 43 point 2, 56 point 1), through a real ``./scripts/dev``, on every
route: mnemo's own (``/memory/...``, ``/feedback``, the development sign-in)
and the platform's (runs, searches, batches, store items, the guarded ones).
One layer ahead of every route holds it (``server/body_bounds.py``: its table
of bounds, the general one for a route not named there).

Each request goes over a raw socket, so a test can send a body that never
ends: an answer that arrives at all is one that did not wait for the body.
What twenty 300 MB bodies cost the worker (memory, ``/ok``) is measured
once, not asserted (docs/security.md).
"""

from __future__ import annotations

import socket

import pytest

from harness.devserver import DevServer, token
from mnemo.core import MAX_MEMORY_BODY_BYTES
from server.body_bounds import DEV_TOKEN_BODY_BYTES
from server.input_limits import MAX_BODY_BYTES

pytestmark = pytest.mark.e2e

#: Routes whose body mnemo's guards read (the state update, supersteps, MCP, store search, A2A).
GUARDED = ("/threads/t1/state", "/threads", "/mcp", "/store/items/search", "/a2a/agent")
#: mnemo's own routes that take a body: method, path.
OWN = (
    ("POST", "/feedback"),
    ("POST", "/memory/forget"),
    ("POST", "/memory/notes"),
    ("PATCH", "/memory/notes/n1"),
    ("POST", "/memory/notes/n1/invalidate"),
    ("PATCH", "/memory/profile"),
    ("POST", "/memory/operator/import"),
)
#: The platform's routes that read a body whole (issue 56: 300 MB read, then 422).
PLATFORM = (
    ("POST", "/threads/t1/runs"),
    ("POST", "/runs/wait"),
    ("POST", "/threads/search"),
    ("POST", "/assistants/search"),
    ("POST", "/runs/batch"),
    ("PUT", "/store/items"),
)
#: How long a test waits for an answer; the body it sent never ends, so only
#: an answer given without the body arrives at all.
WAIT_S = 60


def post_raw(
    server: DevServer, path: str, headers: dict[str, str], body: bytes = b"", method: str = "POST"
) -> tuple[int, bytes]:
    """``method path`` with ``headers`` and the first ``body`` bytes of a body never
    sent in full; the answer's status and body (``(0, b"")``: none in :data:`WAIT_S`)."""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
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


def check_every_route(server: DevServer) -> None:
    """Issue 56 point 1: mnemo's own routes read no unknown caller's body; every
    route, the platform's too, reads a known caller's to its bound and no further."""
    alice = {"Authorization": f"Bearer {token('alice')}"}
    admin = {"Authorization": f"Bearer {token('ops', admin=True)}"}
    huge = {"Content-Length": str(300_000_000)}
    for method, path in OWN:
        for credentials in ({}, {"Authorization": "Bearer not-a-token"}, {"X-Api-Key": "nope"}):
            status, answer = post_raw(server, path, {**huge, **credentials}, b'{"kind": "', method)
            assert status == 401 and b"detail" in answer, (path, credentials, status, answer[:200])
        # A whole, small body that is not JSON: 401 too (it was a 400 read before the token).
        status, _ = post_raw(server, path, {"Content-Length": "9"}, b"{not json", method)
        assert status == 401, (path, status)
        # The caller known: a user's body past the route's bound, announced or chunked, is a 413 unread.
        over = {"Content-Length": str(MAX_MEMORY_BODY_BYTES + 1)}
        for credentials in (alice, admin) if path != "/memory/operator/import" else (alice,):
            status, answer = post_raw(server, path, {**credentials, **over}, b'{"x": "', method)
            assert status == 413 and str(MAX_MEMORY_BODY_BYTES).encode() in answer, (path, status, answer[:200])
            endless = chunked(MAX_MEMORY_BODY_BYTES + 65536)
            status, answer = post_raw(server, path, {**credentials, "Transfer-Encoding": "chunked"}, endless, method)
            assert status == 413 and str(MAX_MEMORY_BODY_BYTES).encode() in answer, (path, status, answer[:200])
    for method, path in PLATFORM:
        # The platform's authentication answers an unknown caller from the headers (the precondition).
        status, _ = post_raw(server, path, huge, b'{"x": "', method)
        assert status == 401, (path, status)
        for headers, body in (
            (huge, b'{"x": "'),
            ({"Content-Length": str(MAX_BODY_BYTES + 1)}, b'{"x": "'),
            ({"Transfer-Encoding": "chunked"}, chunked(MAX_BODY_BYTES + 65536)),
        ):
            status, answer = post_raw(server, path, {**alice, **headers}, body, method)
            assert status == 413 and str(MAX_BODY_BYTES).encode() in answer, (path, headers, status, answer[:200])

    # The development sign-in reads a small body with no caller (its code is in it), no more.
    own = {"Origin": "http://127.0.0.1"}  # post_raw's Host: the page's own origin
    status, answer = post_raw(server, "/ui/dev-token", {**own, "Transfer-Encoding": "chunked"}, chunked(1_000_000))
    assert status == 413 and str(DEV_TOKEN_BODY_BYTES).encode() in answer, (status, answer[:200])
    status, _ = post_raw(server, "/ui/dev-token", {**own, **huge}, b'{"user_id": "')
    assert status == 413, status
    code = f'{{"user_id": "carol", "code": "{server.dev_code()}"}}'.encode()
    status, answer = post_raw(server, "/ui/dev-token", {**own, "Content-Length": str(len(code))}, code)
    assert status == 200 and b'"token"' in answer, (status, answer[:200])

    # Within its bound, chunked, a known caller's body reaches the route whole.
    note = b'{"text": "Prefers tea over coffee."}'
    frame = f"{len(note):x}\r\n".encode() + note + b"\r\n0\r\n\r\n"
    status, answer = post_raw(server, "/memory/notes", {**alice, "Transfer-Encoding": "chunked"}, frame)
    assert status == 201 and b"Prefers tea" in answer, (status, answer[:300])


def test_no_body_is_read_before_its_caller_is_known_nor_past_its_bound(workdir, server_env):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        check_bodies(server)
        check_every_route(server)
    finally:
        server.stop()
