"""The user's own memory routes (web/user_memory.py) without a server: how a
store-side failure reaches the caller, and the forget's audit. The routes through a real
`langgraph dev` are in tests/e2e/test_user_memory.py."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo import ListingChangedError
from mnemo.access.tokens import mint_token

SECRET = "m" * 40


@pytest.fixture
def export_app(monkeypatch):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    import web.server_store
    import web.user_memory

    calls: list[str] = []

    async def always_moving(store, user):
        calls.append(user.id)
        raise ListingChangedError("the namespace kept changing while it was listed")

    async def own_store():
        return object()

    monkeypatch.setattr(web.server_store, "get", own_store)
    monkeypatch.setattr(web.user_memory, "aexport_user", always_moving)
    app = Starlette(routes=[Route("/memory/export", web.user_memory.export_memory, methods=["GET"])])
    return app, calls


def test_an_export_that_could_not_list_consistently_says_retry_not_a_crash(export_app):
    app, calls = export_app
    with TestClient(app) as tc:
        res = tc.get("/memory/export", headers={"authorization": f"Bearer {mint_token('alice', secret=SECRET)}"})
    assert calls == ["alice"]  # the export really ran for the token's user
    assert res.status_code == 503
    assert res.headers["retry-after"] == "5"
    assert "kept changing" in res.json()["error"]


def test_an_export_without_a_token_is_refused_before_any_store_work(export_app):
    app, calls = export_app
    with TestClient(app) as tc:
        res = tc.get("/memory/export")
    assert res.status_code == 401 and calls == []


@pytest.mark.parametrize(("caller", "admin", "source"), [("alice", False, "user_said"), ("ops", True, "admin")])
def test_a_forget_is_audited_with_the_route_and_the_caller(monkeypatch, store, caller, admin, source):
    import asyncio

    import web.server_store
    import web.user_memory
    from mnemo import User, aupdate_profile
    from mnemo.audit.chain import alist_audit

    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    alice = User.of("alice")
    asyncio.run(aupdate_profile(store, alice, {"city": "Hangzhou"}))

    async def own_store():
        return store

    monkeypatch.setattr(web.server_store, "get", own_store)
    app = Starlette(routes=[Route("/memory/forget", web.user_memory.forget_memory, methods=["POST"])])
    token = mint_token(caller, secret=SECRET, role="admin" if admin else "user")
    with TestClient(app) as tc:
        res = tc.post(
            "/memory/forget",
            json={"kind": "profile", "key": "city", "user_id": "alice"},
            headers={"authorization": f"Bearer {token}"},
        )
    assert res.status_code == 200 and res.json()["forgotten"] == ["city"]
    record = asyncio.run(alist_audit(store, alice))[-1]
    assert (record["action"], record["source"], record["actor"], record["route"]) == (
        "profile.delete",
        source,
        caller,
        "POST /memory/forget",
    )


def test_forget_and_feedback_check_the_token_before_they_read_the_body(monkeypatch):
    """Behind the body layer (server/body_bounds.py) no unknown caller's body reaches
    them; alone, each still answers 401 before it reads one (a bad body too)."""
    import web.feedback
    import web.user_memory

    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    read: list[str] = []
    app = Starlette(
        routes=[
            Route("/memory/forget", web.user_memory.forget_memory, methods=["POST"]),
            Route("/feedback", web.feedback.feedback, methods=["POST"]),
        ]
    )

    async def body(request):
        read.append(request.url.path)
        return b"{not json"

    monkeypatch.setattr("starlette.requests.Request.body", body)
    signed_in = {"authorization": f"Bearer {mint_token('alice', secret=SECRET)}"}
    with TestClient(app) as tc:
        for path in ("/memory/forget", "/feedback"):
            # The precondition: a signed-in caller's body is read (and, not JSON, refused).
            assert tc.post(path, content=b"{not json", headers=signed_in).status_code == 400
            assert read.pop() == path
            for headers in ({}, {"authorization": "Bearer nope"}):
                assert tc.post(path, content=b"{not json", headers=headers).status_code == 401
            assert read == [], path
