"""``POST /memory/operator/<name>`` (web/operator.py) without a server: the
server's store stood in by an in-memory one. Through a real `langgraph dev`:
tests/e2e/test_privacy_server.py."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo import User, aremember, aupdate_profile
from mnemo.access.tokens import mint_token
from mnemo.audit.chain import alist_audit
from server.body_bounds import BOUNDS, BodyBounds, Bound

SECRET = "o" * 40
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def operator_app(monkeypatch, store):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    import langgraph_sdk

    import web.server_store
    from web.operator import operator

    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **kw: None)

    async def own_store():
        return store

    monkeypatch.setattr(web.server_store, "get", own_store)
    # Behind the layer web/app.py mounts ahead of every route: it bounds the body.
    return Starlette(
        routes=[Route("/memory/operator/{name}", operator, methods=["POST"])], middleware=[Middleware(BodyBounds)]
    )


def post(app, name: str, body, token: str | None):
    headers = {"authorization": f"Bearer {token}"} if token else {}
    with TestClient(app) as tc:
        return tc.post(f"/memory/operator/{name}", json=body, headers=headers)


def test_an_admin_erases_a_user_through_mnemo_and_the_trail_says_who(operator_app, store):
    alice = User.of("alice")
    asyncio.run(aupdate_profile(store, alice, {"city": "Paris"}))
    asyncio.run(aremember(store, alice, "The user likes green tea."))
    admin = mint_token("backend", secret=SECRET, role="admin")
    assert post(operator_app, "erase", {"user_id": "alice"}, admin).status_code == 400  # no yes: nothing erased
    assert len(asyncio.run(alist_audit(store, alice))) == 2
    res = post(operator_app, "erase", {"user_id": "alice", "yes": True}, admin)
    assert res.status_code == 200 and res.json()["deleted"]["notes"] == 1
    (record,) = asyncio.run(alist_audit(store, alice))
    assert (record["action"], record["source"], record["actor"]) == ("erase", "admin", "backend")
    verified = post(operator_app, "audit-verify", {"user_id": "alice"}, admin)
    assert verified.status_code == 200 and verified.json()["ok"] and verified.json()["records"] == 1


def test_operator_commands_are_for_admins_only(operator_app, store):
    alice = User.of("alice")
    asyncio.run(aremember(store, alice, "The user likes green tea."))
    assert post(operator_app, "erase", {"user_id": "alice", "yes": True}, None).status_code == 401
    user_token = mint_token("alice", secret=SECRET)
    res = post(operator_app, "erase", {"user_id": "alice", "yes": True}, user_token)
    assert res.status_code == 403 and "admin" in res.json()["error"]
    assert len(asyncio.run(alist_audit(store, alice))) == 1  # nothing erased
    admin = mint_token("backend", secret=SECRET, role="admin")
    assert post(operator_app, "drop-tables", {}, admin).status_code == 404
    assert post(operator_app, "erase", ["alice"], admin).status_code == 400
    assert post(operator_app, "reindex", {"user_id": 42}, admin).status_code == 400


def test_an_operator_write_is_audited_with_its_route_and_an_oversized_body_is_refused(operator_app, store, monkeypatch):
    admin = mint_token("backend", secret=SECRET, role="admin")
    res = post(operator_app, "remember", {"user_id": "alice", "text": "Has a dog."}, admin)
    assert res.status_code == 200 and res.json()["status"] == "stored"
    (record,) = asyncio.run(alist_audit(store, User.of("alice")))
    assert (record["route"], record["actor"]) == ("POST /memory/operator/remember", "backend")
    monkeypatch.setitem(BOUNDS, "/memory/operator/{name}", Bound(50, admin=100))
    res = post(operator_app, "remember", {"user_id": "alice", "text": "Has a cat." + " " * 200}, admin)
    assert res.status_code == 413 and len(asyncio.run(alist_audit(store, User.of("alice")))) == 1
    # An admin's bound is the import's; a user's (who gets 403 here) the small one.
    res = post(operator_app, "remember", {"user_id": "alice", "text": "Has a cat." + " " * 30}, admin)
    assert res.status_code == 200 and len(asyncio.run(alist_audit(store, User.of("alice")))) == 2
    user = mint_token("alice", secret=SECRET)
    assert post(operator_app, "remember", {"user_id": "alice", "text": "Has a cat."}, user).status_code == 403
    assert (
        post(operator_app, "remember", {"user_id": "alice", "text": "Has a cat." + " " * 30}, user).status_code == 413
    )


def test_the_server_runs_the_operations_without_loading_the_commands():
    """What the server mounts (``web.app``) reaches the operations through
    :mod:`mnemo.operator`; no module of the CLI (whose face imports every command
    module for its registration) is loaded with it."""
    code = "import sys, web.app; print(sorted(m for m in sys.modules if m.startswith(('mnemo.operator', 'mnemo.cli'))))"
    env = {**os.environ, "MNEMO_JWT_SECRET": SECRET}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    assert "mnemo.operator.operations" in loaded  # the precondition: the route's operations are there
    assert [m for m in loaded if m.startswith("mnemo.cli")] == []
