"""Where a request's token is read from (server/credentials.py): ``Authorization:
Bearer`` or ``X-Api-Key`` (the SDKs' ``apiKey`` / ``api_key``), Authorization
first; on a custom route (``web.caller``) here, on the platform's handler in
tests/server/test_access.py, and through the Python SDK against ``./scripts/dev``.
"""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from harness.devserver import DevServer, token
from mnemo.access.tokens import mint_token
from mnemo.core import InvalidTokenError
from server.credentials import authorization_from_headers

SECRET = "credentials-test-secret-" + "x" * 24


def test_authorization_wins_and_x_api_key_is_read_as_a_bearer_token():
    assert authorization_from_headers({"authorization": "Bearer a.b.c"}) == "Bearer a.b.c"
    assert authorization_from_headers({"x-api-key": " a.b.c "}) == "Bearer a.b.c"
    assert authorization_from_headers({b"x-api-key": b"a.b.c"}) == "Bearer a.b.c"  # raw ASGI headers
    assert authorization_from_headers({"X-Api-Key": "a.b.c"}) == "Bearer a.b.c"  # any case
    assert authorization_from_headers({b"authorization": b"Basic x", b"x-api-key": b"a.b.c"}) == "Basic x"
    assert authorization_from_headers({"authorization": " ", "x-api-key": "a.b.c"}) == "Bearer a.b.c"
    assert authorization_from_headers({"x-api-key": " "}) is None
    assert authorization_from_headers({"authorization": ""}) == ""  # refused downstream as missing
    assert authorization_from_headers({}) is None


@pytest.fixture
def route_client(monkeypatch):
    """A custom route that answers with its caller (``web.caller``), as the
    ``web/`` routes find it."""
    from web.caller import caller

    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)

    async def whoami(request: Request) -> JSONResponse:
        try:
            user, identity = caller(request, request.query_params.get("user_id"))
        except InvalidTokenError as exc:
            return JSONResponse({"error": str(exc)}, status_code=401)
        return JSONResponse({"user": user.id, "role": identity.role})

    with TestClient(Starlette(routes=[Route("/whoami", whoami)])) as tc:
        yield tc


def test_a_custom_route_takes_the_token_from_x_api_key_too(route_client):
    alice, ops = mint_token("alice", secret=SECRET), mint_token("ops", secret=SECRET, role="admin")
    assert route_client.get("/whoami", headers={"Authorization": f"Bearer {alice}"}).json()["user"] == "alice"
    assert route_client.get("/whoami", headers={"X-Api-Key": alice}).json() == {"user": "alice", "role": "user"}
    as_admin = route_client.get("/whoami", params={"user_id": "bob"}, headers={"X-Api-Key": ops})
    assert as_admin.json() == {"user": "bob", "role": "admin"}
    both = {"Authorization": f"Bearer {ops}", "X-Api-Key": alice}
    assert route_client.get("/whoami", params={"user_id": "bob"}, headers=both).json()["role"] == "admin"
    for headers in (
        {},
        {"X-Api-Key": "x.y.z"},
        {"X-Api-Key": mint_token("alice", secret="w" * 40)},
        {"Authorization": "Bearer x.y.z", "X-Api-Key": alice},  # Authorization decides
    ):
        res = route_client.get("/whoami", headers=headers)
        assert res.status_code == 401 and res.json()["error"], headers


@pytest.mark.e2e
async def test_the_python_sdk_signs_in_with_api_key(workdir, server_env, stub):
    from langgraph_sdk import get_client

    server = DevServer(workdir, server_env)
    server.start()
    try:
        ada, li = get_client(url=server.url, api_key=token("u_ada")), get_client(url=server.url, api_key=token("u_li"))
        thread = await ada.threads.create(metadata={"topic": "pets"})
        assert thread["metadata"]["owner"] == "u_ada"  # the key's user, stamped by the server
        said = "Hi, I'm Ada and I live in Lisbon. Remember that I have a cat."
        events: list[str] = []
        async for part in ada.runs.stream(
            thread["thread_id"],
            "agent",
            input={"messages": [{"role": "user", "content": said}]},
            stream_mode=["values", "messages-tuple"],
        ):
            assert part.event != "error", part.data
            events.append(part.event)
        assert {"values", "messages"} <= set(events)

        history = await ada.threads.get_history(thread["thread_id"], limit=10)
        assert history and history[0]["values"]["messages"][0]["content"] == said
        # Search by metadata (what agent-chat-ui lists a user's threads with): own threads only.
        await li.threads.create(metadata={"topic": "pets"})
        found = await ada.threads.search(metadata={"graph_id": "agent"}, limit=100)
        assert [t["thread_id"] for t in found] == [thread["thread_id"]]
        assert [t["thread_id"] for t in await ada.threads.search(metadata={"topic": "pets"})] == [thread["thread_id"]]
        assert await li.threads.search(metadata={"graph_id": "agent"}) == []

        # The custom routes read the same header.
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            mine = await http.get("/memory/export", headers={"X-Api-Key": token("u_ada")})
            assert mine.status_code == 200 and mine.json()["profile"]["city"]["value"] == "Lisbon"
            bad = await http.get(
                "/memory/export", headers={"Authorization": "Bearer nope", "X-Api-Key": token("u_ada")}
            )
            assert bad.status_code == 401 and "Lisbon" not in bad.text
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


def test_the_one_reader_verifies_the_token_from_either_header(monkeypatch):
    from server.credentials import caller_from_headers

    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    admin = mint_token("ops", secret=SECRET, role="admin")
    for headers in ({"Authorization": f"Bearer {admin}"}, {"X-Api-Key": admin}, {b"x-api-key": admin.encode()}):
        caller = caller_from_headers(headers)
        assert (caller.user_id, caller.admin) == ("ops", True), headers
    for headers in ({}, {"X-Api-Key": mint_token("ops", secret="w" * 40, role="admin")}):
        with pytest.raises(InvalidTokenError):
            caller_from_headers(headers)
