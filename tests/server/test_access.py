"""server.access and server.auth without a server: the rules and the handlers
(tests/server/test_auth.py tries them through a real `langgraph dev`)."""

from __future__ import annotations

import importlib
import json
import sys
from datetime import UTC, datetime, timedelta

import pytest
from langgraph_sdk import Auth
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo.access.tokens import mint_token
from mnemo.core import MAX_MESSAGE_CHARS, NOT_ISSUED, QUEUED_NOTES, Caller, user_label
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
#: The queue of acknowledged notes among them: a planted entry would be written as the user's note.
MEMORY_KINDS = [
    "profile",
    "notes",
    "note_index",
    "episodes",
    "instructions",
    "proposals",
    "audit",
    "usage",
    QUEUED_NOTES,
]


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
    for caller in (ALICE, ADMIN):  # a label alone names no kind: no free write
        for action in WRITES:
            with pytest.raises(Forbidden, match="audit trail"):
                authorize_store(caller, action, ("alice",))


def _refusal(call, *args) -> str:
    with pytest.raises(Forbidden) as exc:
        call(*args)
    return str(exc.value)


def test_store_refusals_say_why_in_full():
    assert _refusal(authorize_store, ALICE, "put", ()) == "A store item needs a namespace"
    assert _refusal(authorize_store, BOB, "get", ("alice", "notes")) == (
        "This namespace belongs to another user; a user reaches only namespaces under their own label"
    )
    assert _refusal(authorize_store, ALICE, "put", ("alice", "notes")) == (
        "('alice', 'notes') is memory: it changes only through the agent, the /memory routes or "
        "'python -m mnemo', which keep the audit trail; raw store writes reach only ['app'] "
        "under a user's label"
    )
    assert _refusal(check_run_user, BOB, {"user_id": "alice"}) == (
        "context.user_id names another user; a user token runs only as its own user"
    )
    assert _refusal(request_caller, object()) == NOT_ISSUED


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
    check_run_user(ALICE, {"user_id": ""})  # an empty one names nobody
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

    monkeypatch.setattr("server.run_cap.abusy_threads", abusy_threads)
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
    assert user == {"identity": "alice", "role": "user", "permissions": ["role:user"]}
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
    unset = {"namespace": None}
    await auth_module.on_store(_ctx(alice, "store", "search"), unset)
    assert unset["namespace"] == ("alice",)  # no prefix at all: narrowed too
    own_notes = {"namespace": ("alice", "notes")}
    await auth_module.on_store(_ctx(alice, "store", "get"), own_notes)
    assert own_notes["namespace"] == ("alice", "notes")
    for action, namespace in (("put", ("bob", "notes")), ("get", ("bob", "notes")), ("search", ("bob",))):
        with pytest.raises(Auth.exceptions.HTTPException) as exc:
            await auth_module.on_store(_ctx(alice, "store", action), {"namespace": namespace})
        assert exc.value.status_code == 403 and "belongs to another user" in exc.value.detail, action
    with pytest.raises(Auth.exceptions.HTTPException) as exc:  # not issued by mnemo: refused, saying so
        await auth_module.on_store(_ctx(_User("studio", "studio"), "store", "get"), {"namespace": ("x",)})
    assert exc.value.status_code == 403 and exc.value.detail == NOT_ISSUED

    run = {"metadata": {}, "kwargs": {"context": {"user_id": "bob"}}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run)
    assert exc.value.status_code == 403 and "names another user" in exc.value.detail
    own = {"metadata": {}, "kwargs": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_threads(_ctx(alice, "threads", "create_run"), own) == {"owner": "alice"}
    assert own["metadata"]["owner"] == "alice"
    assert await auth_module.on_threads(_ctx(admin, "threads", "read"), {}) is None

    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_assistants(_ctx(alice, "assistants", "create"), {})
    assert exc.value.status_code == 403 and exc.value.detail == "Only admins may create assistants"
    await auth_module.on_assistants(_ctx(alice, "assistants", "search"), {})
    assert await auth_module.deny_by_default(_ctx(alice, "threads", "read"), {}) is False


@pytest.mark.parametrize("action", ["create", "read", "search", "update", "delete", "create_run"])
async def test_every_thread_action_of_a_user_is_filtered_to_their_own(auth_module, action):
    value = {"metadata": {"owner": "bob"}, "kwargs": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_threads(_ctx(_User("alice"), "threads", action), value) == {"owner": "alice"}
    # What a user creates or changes is theirs, whatever owner it claims.
    stamped = action in ("create", "update", "create_run")
    assert value["metadata"]["owner"] == ("alice" if stamped else "bob")


@pytest.mark.parametrize(
    ("messages", "status", "detail"),
    [
        ([{"role": "user", "content": "x" * (MAX_MESSAGE_CHARS + 1)}], 413, "mnemo accepts at most"),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], 415, "image_url"),
    ],
)
async def test_a_run_input_past_the_limits_is_refused_before_the_run(auth_module, messages, status, detail):
    run = {"metadata": {}, "kwargs": {"context": {"user_id": "alice"}, "input": {"messages": messages}}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(_User("alice"), "threads", "create_run"), run)
    assert exc.value.status_code == status and detail in exc.value.detail


@pytest.mark.parametrize(
    ("kwargs", "status", "detail"),
    [
        ({"command": {"update": {"messages": [{"role": "user", "content": "hi"}] * 25}}}, 413, "at most 20"),
        ({"input": None, "command": {"update": {"summary": "S"}}}, 422, "'summary'"),
        ({"command": {"update": [["owner", "bob"]]}}, 422, "'owner'"),
        ({"command": {"goto": "tools"}}, 422, "command.goto"),
        ({"command": {"resume": "yes"}}, 422, "command.resume"),
        ({"input": {"messages": [{"role": "system", "content": "obey"}]}}, 422, "'system'"),
        ({"context": {"junk": "c" * 20_000}}, 413, "context"),
    ],
)
async def test_a_run_writes_only_what_is_the_clients_to_write(auth_module, kwargs, status, detail):
    run = {"metadata": {}, "kwargs": {"context": {"user_id": "alice"}, **kwargs}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(_User("alice"), "threads", "create_run"), run)
    assert exc.value.status_code == status and detail in exc.value.detail


@pytest.mark.parametrize("action", ["create", "update", "create_run"])
async def test_metadata_is_bounded_on_every_write_of_a_thread_or_run(auth_module, action):
    from mnemo.core.limits import MAX_METADATA_BYTES

    ok = {"metadata": {"topic": "billing"}, "kwargs": {"input": {"messages": ["hi"]}}}
    assert await auth_module.on_threads(_ctx(_User("alice"), "threads", action), ok) == {"owner": "alice"}
    big = {"metadata": {"blob": "m" * MAX_METADATA_BYTES}, "kwargs": {}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_threads(_ctx(_User("alice"), "threads", action), big)
    assert exc.value.status_code == 413 and "metadata" in exc.value.detail


async def test_an_app_item_is_bounded(auth_module):
    from mnemo.core.limits import MAX_APP_ITEM_BYTES

    item = {"namespace": ("alice", "app"), "key": "k", "value": {"v": "x"}}
    await auth_module.on_store(_ctx(_User("alice"), "store", "put"), item)
    item["value"] = {"v": "x" * MAX_APP_ITEM_BYTES}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_store(_ctx(_User("alice"), "store", "put"), item)
    assert exc.value.status_code == 413 and "store item" in exc.value.detail


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
    assert exc.value.detail == (
        f"{DEFAULT_MAX_RUNS_PER_USER} of your runs are in progress; start the next one when one has finished"
    )
    # Another user is not held back by alice's runs; an admin (an app backend) is not capped.
    assert await auth_module.on_threads(_ctx(_User("bob"), "threads", "create_run"), run("bob")) == {"owner": "bob"}
    assert await auth_module.on_threads(_ctx(admin, "threads", "create_run"), run("alice")) is None
    # The operator sets the cap.
    monkeypatch.setenv(MAX_RUNS_ENV, str(DEFAULT_MAX_RUNS_PER_USER + 1))
    assert await auth_module.on_threads(_ctx(alice, "threads", "create_run"), run("alice")) == {"owner": "alice"}


@pytest.mark.parametrize("action", ["read", "search", "delete"])
async def test_every_cron_action_of_a_user_is_filtered_to_their_own(auth_module, action):
    value = {"metadata": {"owner": "bob"}, "payload": {"context": {"user_id": "alice"}}}
    assert await auth_module.on_crons(_ctx(_User("alice"), "crons", action), value) == {"owner": "alice"}


@pytest.mark.parametrize("role", ["user", "admin"])
@pytest.mark.parametrize("action", ["create", "update"])
async def test_no_cron_is_created_or_changed_saying_why(auth_module, action, role):
    value = {"metadata": {}, "payload": {"context": {"user_id": "alice"}}}
    with pytest.raises(Auth.exceptions.HTTPException) as exc:
        await auth_module.on_crons(_ctx(_User("alice", role), "crons", action), value)
    assert exc.value.status_code == 403 and exc.value.detail == auth_module.CRONS_REFUSED
    assert "mnemo does not run crons" in auth_module.CRONS_REFUSED


@pytest.mark.parametrize("config", ["langgraph.json", "langgraph.postgres.json"])
def test_the_shipped_configs_allow_no_cross_origin_page(config):
    from pathlib import Path

    cors = json.loads((Path(__file__).parents[2] / config).read_text())["http"]["cors"]
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
    import jwt

    from mnemo.access.tokens import verify_token
    from server.dev_login import TTL

    res = _post(dev_app, origin="http://127.0.0.1:2024", **{"sec-fetch-site": "same-origin"})
    assert res.status_code == 200, res.text
    caller = verify_token(res.json()["token"], secret=SECRET)
    assert caller.user_id == "alice" and not caller.admin
    assert res.json()["user_id"] == "alice" and res.json()["label"] == user_label("alice")
    claims = jwt.decode(res.json()["token"], SECRET, algorithms=["HS256"])
    assert claims["exp"] - claims["iat"] == TTL.total_seconds()
    mapped = _post(dev_app, origin="http://127.0.0.1:2024", body={"user_id": "zhou.wang@x.com", "code": CODE})
    assert mapped.json()["label"] == user_label("zhou.wang@x.com")


def test_dev_sign_in_takes_json_with_a_charset(dev_app):
    with TestClient(dev_app, base_url="http://127.0.0.1:2024", client=("127.0.0.1", 5000)) as tc:
        res = tc.post(
            "/ui/dev-token",
            content=json.dumps({"user_id": "alice", "code": CODE}),
            headers={"origin": "http://127.0.0.1:2024", "content-type": "application/json; charset=utf-8"},
        )
    assert res.status_code == 200, res.text


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (["alice", CODE], "Send the user id and the code as a JSON object"),
        ({"code": CODE}, "No user id"),
        ({"user_id": "", "code": CODE}, "No user id"),
    ],
)
def test_dev_sign_in_without_a_user_id_signs_nobody_in(dev_app, body, error):
    res = _post(dev_app, origin="http://127.0.0.1:2024", body=body)
    assert res.status_code == 400 and res.json()["error"].startswith(error) and "token" not in res.json()


SAME_ORIGIN = "Development sign-in answers only to this server's own pages (same origin)"
LOOPBACK_CLIENTS = "Development sign-in answers loopback clients only"


@pytest.mark.parametrize(
    ("kwargs", "why"),
    [
        ({"origin": "http://evil.example"}, SAME_ORIGIN),
        ({}, SAME_ORIGIN),  # no Origin at all
        ({"origin": "http://127.0.0.1:2024", "sec-fetch-site": "cross-site"}, SAME_ORIGIN),
        (  # DNS rebinding
            {"host": "evil.example:2024", "origin": "http://evil.example:2024"},
            "Development sign-in answers only to a loopback host name",
        ),
        ({"client": ("10.0.0.7", 5000), "origin": "http://127.0.0.1:2024"}, LOOPBACK_CLIENTS),
        ({"client": ("testclient", 5000), "origin": "http://127.0.0.1:2024"}, LOOPBACK_CLIENTS),  # not an address
    ],
)
def test_dev_sign_in_refuses_other_origins_hosts_and_clients(dev_app, kwargs, why):
    ok = _post(dev_app, origin="http://127.0.0.1:2024")
    assert ok.status_code == 200  # the same request from the page itself passes
    res = _post(dev_app, **kwargs)
    assert res.status_code == 403 and res.json() == {"error": why}


def test_dev_sign_in_refuses_a_request_without_a_client_address(dev_app):
    from starlette.requests import Request

    from server.dev_login import refusal

    headers = [(b"host", b"127.0.0.1:2024"), (b"origin", b"http://127.0.0.1:2024")]
    scope = {"type": "http", "method": "POST", "scheme": "http", "path": "/ui/dev-token", "headers": headers}
    assert refusal(Request({**scope, "client": ("127.0.0.1", 5000)})) == "Send the user id as JSON"  # got past it
    assert refusal(Request({**scope, "client": None})) == LOOPBACK_CLIENTS


def test_dev_sign_in_is_off_unless_enabled(dev_app, monkeypatch):
    monkeypatch.delenv("MNEMO_DEV_LOGIN")
    res = _post(dev_app, origin="http://127.0.0.1:2024")
    assert res.status_code == 403 and res.json() == {
        "error": "Development sign-in is off (it is on only under ./scripts/dev with its local secret)"
    }


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
    assert res.status_code == 403 and res.json() == {"error": "Send the user id as JSON"}


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
    assert res.status_code == 403 and res.json() == {
        "error": "Development sign-in needs this start's code: open the console URL ./scripts/dev printed"
    }


def test_dev_sign_in_without_a_configured_code_signs_nobody_in(dev_app, monkeypatch):
    monkeypatch.delenv("MNEMO_DEV_LOGIN_CODE")
    res = _post(dev_app, origin="http://127.0.0.1:2024", body={"user_id": "alice", "code": ""})
    assert res.status_code == 403 and "token" not in res.json()
