"""server.access and server.auth without a server: the rules and the handlers
(tests/test_auth.py tries them through a real `langgraph dev`)."""

from __future__ import annotations

import importlib
import sys
from datetime import UTC, datetime, timedelta

import pytest
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo import user_label
from mnemo.access.tokens import mint_token
from mnemo.core import Caller
from server.access import (
    Forbidden,
    authorize_assistants,
    authorize_store,
    check_run_user,
    owner_filter,
    request_caller,
    stamp_owner,
)

SECRET = "r" * 40
CODE = "c0de-printed-by-scripts-dev"
ALICE, BOB, ADMIN = Caller("alice"), Caller("bob"), Caller("backend", "admin")
MAPPED = Caller("zhou.wang@x.com")

READS = ["get", "search", "list_namespaces"]
WRITES = ["put", "delete"]


# --------------------------------------------------------------------------- store


@pytest.mark.parametrize("action", READS + WRITES)
def test_a_user_reaches_their_own_namespaces(action):
    kind = "notes" if action in READS else "app"  # memory itself: see the next test
    assert authorize_store(ALICE, action, ("alice", kind)) == ("alice", kind)
    assert authorize_store(MAPPED, action, (user_label("zhou.wang@x.com"), kind))[0].startswith("~")


#: Every memory kind, a derived one (the note index) and one mnemo does not know yet.
MEMORY_KINDS = ["profile", "notes", "note_index", "episodes", "instructions", "proposals", "audit", "usage"]


@pytest.mark.parametrize("kind", [*MEMORY_KINDS, "entitlements", "added_later"])
def test_raw_writes_are_an_allow_list_memory_changes_only_through_mnemo(kind):
    """A raw write leaves no audit record (and, into the note index, plants
    a "note" in the prompt): refused for users and admins alike, for every
    namespace that is not free; reads stay."""
    assert authorize_store(ALICE, "put", ("alice", "app")) == ("alice", "app")  # the free kind: allowed
    assert authorize_store(ADMIN, "delete", ("alice", "app", "x")) == ("alice", "app", "x")
    for caller in (ALICE, ADMIN):
        assert authorize_store(caller, "get", ("alice", kind)) == ("alice", kind)
        for action in WRITES:
            with pytest.raises(Forbidden, match="audit trail"):
                authorize_store(caller, action, ("alice", kind))
            with pytest.raises(Forbidden, match="audit trail"):
                authorize_store(caller, action, ("alice", kind, "deeper"))


@pytest.mark.parametrize("action", READS + WRITES)
def test_another_users_namespace_is_refused(action):
    assert authorize_store(ADMIN, action, ("alice", "app")) == ("alice", "app")  # exists, admins reach it
    with pytest.raises(Forbidden, match="another user"):
        authorize_store(BOB, action, ("alice", "app"))
    with pytest.raises(Forbidden, match="another user"):
        authorize_store(BOB, action, ("alice", "notes"))
    with pytest.raises(Forbidden, match="another user"):  # the raw e-mail is not the label
        authorize_store(MAPPED, action, ("zhou.wang@x.com", "profile"))


@pytest.mark.parametrize("action", ["search", "list_namespaces"])
def test_an_empty_prefix_is_narrowed_to_the_user_never_widened(action):
    assert authorize_store(BOB, action, ()) == ("bob",)
    assert authorize_store(BOB, action, None) == ("bob",)
    assert authorize_store(ADMIN, action, ()) == ()


def test_shared_knowledge_is_read_by_everyone_and_written_by_no_raw_write():
    for caller in (BOB, ADMIN):
        for action in READS:
            assert authorize_store(caller, action, ("org", "policies")) == ("org", "policies")
        for action in WRITES:
            with pytest.raises(Forbidden, match="audit trail"):
                authorize_store(caller, action, ("org", "policies"))
            for root in ("org", "agent", "mnemo"):  # "app" is free under a user's label only
                with pytest.raises(Forbidden, match="audit trail"):
                    authorize_store(ADMIN, action, (root, "app"))


@pytest.mark.parametrize("action", READS)
def test_the_admins_history_of_shared_instructions_is_no_users_to_read(action):
    """Who approved each version of the shared instructions is kept under the
    admins' root; users read the approved text alone, in ("org", ...)."""
    history = ("mnemo", "instructions", "agent")
    assert authorize_store(ADMIN, action, history) == history
    assert authorize_store(BOB, action, ("org", "instructions", "agent")) == ("org", "instructions", "agent")
    for prefix in (history, ("mnemo",)):
        with pytest.raises(Forbidden, match="another user"):
            authorize_store(BOB, action, prefix)


def test_writes_need_a_namespace_and_unknown_actions_are_refused():
    with pytest.raises(Forbidden):
        authorize_store(ADMIN, "put", ())
    with pytest.raises(Forbidden, match="Unknown"):
        authorize_store(ADMIN, "drop", ("alice",))


# --------------------------------------------------------------------------- threads, runs, crons, assistants


def test_owner_is_stamped_and_cannot_be_claimed_by_a_user():
    value = {"metadata": {"owner": "alice", "topic": "x"}}
    stamp_owner(BOB, value)
    assert value["metadata"] == {"owner": "bob", "topic": "x"}
    for_user = {"metadata": {"owner": "alice"}}
    stamp_owner(ADMIN, for_user)  # an app backend creates a thread for its user
    assert for_user["metadata"]["owner"] == "alice"
    own = {"metadata": {}}
    stamp_owner(ADMIN, own)
    assert own["metadata"]["owner"] == "backend"
    stamp_owner(BOB, {})  # nothing to stamp (e.g. a copy keeps its source's metadata)
    assert owner_filter(BOB) == {"owner": "bob"} and owner_filter(ADMIN) is None


def test_a_user_run_may_not_name_another_user():
    check_run_user(ALICE, {"user_id": "alice"})
    check_run_user(ALICE, {})
    check_run_user(ALICE, None)
    check_run_user(ADMIN, {"user_id": "alice"})
    with pytest.raises(Forbidden, match="another user"):
        check_run_user(BOB, {"user_id": "alice"})


@pytest.mark.parametrize("action", ["create", "update", "delete"])
def test_assistants_are_changed_by_admins_only(action):
    authorize_assistants(ADMIN, action)
    with pytest.raises(Forbidden, match="Only admins"):
        authorize_assistants(ALICE, action)
    authorize_assistants(ALICE, "read")
    authorize_assistants(ALICE, "search")


def test_identities_not_issued_by_mnemo_are_refused():
    class StudioLike:
        identity = "langgraph-studio-user"
        kind = "StudioUser"

    with pytest.raises(Forbidden):
        request_caller(StudioLike())

    class Proxy(dict):  # like the platform's user proxy: attributes and mapping access
        identity = "alice"

    assert request_caller(Proxy(role="user")) == ALICE
    assert request_caller(Proxy(role="admin")).admin
    with pytest.raises(Forbidden):
        request_caller(Proxy())


# --------------------------------------------------------------------------- server.auth handlers


@pytest.fixture
def auth_module(monkeypatch):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    monkeypatch.delitem(sys.modules, "server.auth", raising=False)
    module = importlib.import_module("server.auth")
    module.busy = {}  # owner -> threads with a run in progress, as the server would count them
    asked: list[tuple[str, int]] = []

    async def abusy_threads(owner, *, limit):
        asked.append((owner, limit))
        return min(module.busy.get(owner, 0), limit)

    monkeypatch.setattr(module, "abusy_threads", abusy_threads)
    module.asked = asked
    return module


def test_the_server_does_not_start_without_a_secret(monkeypatch):
    from mnemo.access.tokens import SecretError

    monkeypatch.delenv("MNEMO_JWT_SECRET", raising=False)
    monkeypatch.delitem(sys.modules, "server.auth", raising=False)
    with pytest.raises(SecretError, match="not set"):
        importlib.import_module("server.auth")


def _headers(authorization: str | None = None, api_key: str | None = None) -> dict[bytes, bytes]:
    """Request headers as the platform hands them to ``authenticate`` (raw ASGI)."""
    sent = {b"authorization": authorization, b"x-api-key": api_key}
    return {name: value.encode() for name, value in sent.items() if value is not None}


async def test_authenticate_accepts_only_a_valid_bearer_token(auth_module):
    good = mint_token("alice", secret=SECRET)
    user = await auth_module.authenticate(_headers(f"Bearer {good}"))
    assert user["identity"] == "alice" and user["role"] == "user"
    past = datetime.now(UTC) - timedelta(hours=1)
    cases = {
        None: "Missing",
        "": "Missing",
        good: "Malformed Authorization",  # no scheme
        f"Basic {good}": "Malformed Authorization",
        "Bearer ": "Malformed Authorization",
        "Bearer x.y.z": "Malformed token",
        f"Bearer {mint_token('alice', secret='w' * 40)}": "signature",
        f"Bearer {mint_token('alice', secret=SECRET, ttl=timedelta(minutes=1), now=past)}": "expired",
    }
    for header, message in cases.items():
        with pytest.raises(Auth.exceptions.HTTPException) as exc:
            await auth_module.authenticate(_headers(header))
        assert exc.value.status_code == 401 and message in exc.value.detail, header


async def test_authenticate_takes_the_same_token_as_x_api_key_and_authorization_wins(auth_module):
    good, admin = mint_token("alice", secret=SECRET), mint_token("ops", secret=SECRET, role="admin")
    user = await auth_module.authenticate(_headers(api_key=good))  # the SDKs' apiKey / api_key
    assert user["identity"] == "alice" and user["role"] == "user"
    assert (await auth_module.authenticate(_headers(api_key=admin)))["role"] == "admin"
    assert (await auth_module.authenticate(_headers("", api_key=good)))["identity"] == "alice"  # blank: not sent
    past = datetime.now(UTC) - timedelta(hours=1)
    cases = {  # the same checks and the same answers as for a bearer token
        " ": "Missing",
        "x.y.z": "Malformed token",
        mint_token("alice", secret="w" * 40): "signature",
        mint_token("alice", secret=SECRET, ttl=timedelta(minutes=1), now=past): "expired",
    }
    for key, message in cases.items():
        with pytest.raises(Auth.exceptions.HTTPException) as exc:
            await auth_module.authenticate(_headers(api_key=key))
        assert exc.value.status_code == 401 and message in exc.value.detail, key
    # Both sent: Authorization decides, a bad one is refused, never skipped for the key.
    assert (await auth_module.authenticate(_headers(f"Bearer {admin}", api_key=good)))["identity"] == "ops"
    for authorization in ("Bearer x.y.z", f"Basic {good}", good):
        with pytest.raises(Auth.exceptions.HTTPException) as exc:
            await auth_module.authenticate(_headers(authorization, api_key=good))
        assert exc.value.status_code == 401, authorization


def _ctx(user, resource, action):
    return Auth.types.AuthContext(user=user, permissions=[], resource=resource, action=action)


class _User(dict):
    def __init__(self, identity, role="user"):
        super().__init__(identity=identity, role=role)
        self.identity = identity


async def test_handlers_scope_and_refuse(auth_module):
    alice, admin = _User("alice"), _User("backend", "admin")
    value = {"namespace": ()}
    await auth_module.on_store(_ctx(alice, "store", "search"), value)
    assert value["namespace"] == ("alice",)
    listing = {"namespace": None}
    await auth_module.on_store(_ctx(admin, "store", "list_namespaces"), listing)
    assert listing["namespace"] is None  # an admin's listing stays unfiltered
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_store(_ctx(alice, "store", "put"), {"namespace": ("bob", "notes")})
    assert exc.value.status_code == 403

    run = {"metadata": {}, "kwargs": {"context": {"user_id": "bob"}}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run)
    assert exc.value.status_code == 403
    own = {"metadata": {}, "kwargs": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_threads(_ctx(alice, "threads", "create_run"), own) == {"owner": "alice"}
    assert own["metadata"]["owner"] == "alice"
    assert await auth_module.on_threads(_ctx(admin, "threads", "read"), {}) is None

    cron = {"metadata": {}, "payload": {"context": {"user_id": "bob"}}}
    with pytest.raises(Auth.exceptions.HTTPException):
        await auth_module.on_crons(_ctx(alice, "crons", "create"), cron)
    with pytest.raises(Auth.exceptions.HTTPException):
        await auth_module.on_assistants(_ctx(alice, "assistants", "create"), {})
    await auth_module.on_assistants(_ctx(alice, "assistants", "search"), {})
    assert await auth_module.deny_by_default(_ctx(alice, "threads", "read"), {}) is False


@pytest.mark.parametrize("action", ["create", "read", "search", "update", "delete", "create_run"])
async def test_every_thread_action_of_a_user_is_filtered_to_their_own(auth_module, action):
    value = {"metadata": {}, "kwargs": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_threads(_ctx(_User("alice"), "threads", action), value) == {"owner": "alice"}


async def test_a_user_with_the_most_runs_in_progress_is_told_to_retry_later(auth_module, monkeypatch):
    from server.run_cap import DEFAULT_MAX_RUNS_PER_USER, MAX_RUNS_ENV, RETRY_AFTER_S

    def run(user):
        return {"metadata": {}, "kwargs": {"context": {"user_id": user}}}

    alice, admin = _User("alice"), _User("backend", "admin")
    auth_module.busy = {"alice": DEFAULT_MAX_RUNS_PER_USER - 1, "backend": 50}
    assert await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run("alice")) == {"owner": "alice"}
    assert auth_module.asked == [("alice", DEFAULT_MAX_RUNS_PER_USER)]  # her own threads were counted
    auth_module.busy["alice"] = DEFAULT_MAX_RUNS_PER_USER
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run("alice"))
    assert exc.value.status_code == 429 and exc.value.headers == {"Retry-After": str(RETRY_AFTER_S)}
    # Another user is not held back by alice's runs; an admin (an app backend) is not capped.
    assert await auth_module.on_threads(_ctx(_User("bob"), "threads", "create_run"), run("bob")) == {"owner": "bob"}
    assert await auth_module.on_threads(_ctx(admin, "threads", "create_run"), run("alice")) is None
    # The operator sets the cap.
    monkeypatch.setenv(MAX_RUNS_ENV, str(DEFAULT_MAX_RUNS_PER_USER + 1))
    assert await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run("alice")) == {"owner": "alice"}


@pytest.mark.parametrize("action", ["create", "read", "search", "update", "delete"])
async def test_every_cron_action_of_a_user_is_filtered_to_their_own(auth_module, action):
    value = {"metadata": {}, "payload": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_crons(_ctx(_User("alice"), "crons", action), value) == {"owner": "alice"}


@pytest.mark.parametrize("config", ["langgraph.json", "langgraph.postgres.json"])
def test_the_shipped_configs_allow_no_cross_origin_page(config):
    import json
    from pathlib import Path

    cors = json.loads((Path(__file__).parent.parent / config).read_text())["http"]["cors"]
    assert cors["allow_origins"] == [] and cors["allow_credentials"] is False


# --------------------------------------------------------------------------- development sign-in


@pytest.fixture
def dev_app(monkeypatch):
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    monkeypatch.setenv("MNEMO_DEV_LOGIN", "1")
    monkeypatch.setenv("MNEMO_DEV_LOGIN_CODE", CODE)
    from server.dev_login import dev_token

    return Starlette(routes=[Route("/ui/dev-token", dev_token, methods=["POST"])])


def _post(app, *, client=("127.0.0.1", 5000), host="127.0.0.1:2024", body=None, **headers):
    with TestClient(app, base_url=f"http://{host}", client=client) as tc:
        return tc.post("/ui/dev-token", json=body or {"user_id": "alice", "code": CODE}, headers=headers)


def test_dev_sign_in_mints_a_user_token_for_its_own_page(dev_app):
    from mnemo.access.tokens import verify_token

    res = _post(dev_app, origin="http://127.0.0.1:2024", **{"sec-fetch-site": "same-origin"})
    assert res.status_code == 200, res.text
    caller = verify_token(res.json()["token"], secret=SECRET)
    assert caller.user_id == "alice" and not caller.admin


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"origin": "http://evil.example"}, "same origin"),
        ({}, "same origin"),  # no Origin at all
        ({"origin": "http://127.0.0.1:2024", "sec-fetch-site": "cross-site"}, "same origin"),
        ({"host": "evil.example:2024", "origin": "http://evil.example:2024"}, "loopback host"),  # DNS rebinding
        ({"client": ("10.0.0.7", 5000), "origin": "http://127.0.0.1:2024"}, "loopback clients"),
    ],
)
def test_dev_sign_in_refuses_other_origins_hosts_and_clients(dev_app, kwargs, why):
    ok = _post(dev_app, origin="http://127.0.0.1:2024")
    assert ok.status_code == 200  # the same request from the page itself passes
    res = _post(dev_app, **kwargs)
    assert res.status_code == 403 and why in res.json()["error"]


def test_dev_sign_in_is_off_unless_enabled(dev_app, monkeypatch):
    monkeypatch.delenv("MNEMO_DEV_LOGIN")
    res = _post(dev_app, origin="http://127.0.0.1:2024")
    assert res.status_code == 403 and "off" in res.json()["error"]


def test_dev_sign_in_never_takes_a_role_from_the_request(dev_app):
    from mnemo.access.tokens import verify_token

    with TestClient(dev_app, base_url="http://127.0.0.1:2024", client=("127.0.0.1", 5000)) as tc:
        res = tc.post(
            "/ui/dev-token",
            json={"user_id": "alice", "code": CODE, "role": "admin", "admin": True},
            headers={"origin": "http://127.0.0.1:2024"},
        )
    assert res.status_code == 200, res.text
    caller = verify_token(res.json()["token"], secret=SECRET)
    assert caller.user_id == "alice" and not caller.admin


# A page may send text/plain or a form without a preflight: the same JSON in
# such a body is refused, whatever it says.
@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None]
)
def test_dev_sign_in_takes_a_json_request_only(dev_app, content_type):
    headers = {"origin": "http://127.0.0.1:2024"} | ({"content-type": content_type} if content_type else {})
    with TestClient(dev_app, base_url="http://127.0.0.1:2024", client=("127.0.0.1", 5000)) as tc:
        res = tc.post("/ui/dev-token", content='{"user_id": "alice"}', headers=headers)
    assert res.status_code == 403 and "JSON" in res.json()["error"] and "token" not in res.json()


def test_dev_sign_in_refuses_malformed_json(dev_app):
    with TestClient(dev_app, base_url="http://127.0.0.1:2024", client=("127.0.0.1", 5000)) as tc:
        res = tc.post(
            "/ui/dev-token",
            content="{not json",
            headers={"origin": "http://127.0.0.1:2024", "content-type": "application/json"},
        )
    assert res.status_code == 400 and "token" not in res.json()


@pytest.mark.parametrize("code", [None, "", "wrong", CODE[:-1], CODE + "x", 12345])
def test_dev_sign_in_needs_the_code_printed_at_this_start(dev_app, code):
    assert _post(dev_app, origin="http://127.0.0.1:2024").status_code == 200  # with the code it signs in
    body = {"user_id": "alice"} | ({} if code is None else {"code": code})
    res = _post(dev_app, origin="http://127.0.0.1:2024", body=body)
    assert res.status_code == 403 and "code" in res.json()["error"] and "token" not in res.json()


def test_dev_sign_in_without_a_configured_code_signs_nobody_in(dev_app, monkeypatch):
    monkeypatch.delenv("MNEMO_DEV_LOGIN_CODE")
    res = _post(dev_app, origin="http://127.0.0.1:2024", body={"user_id": "alice", "code": ""})
    assert res.status_code == 403 and "token" not in res.json()
