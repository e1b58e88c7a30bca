"""The trust boundary, tried as an attacker would, through a real `langgraph dev`
with auth on (server/auth.py), on the default config and on PostgreSQL.

Two users (alice, bob) and an admin (an app backend). Every store, thread, run,
cron and assistant route is tried by bob against alice's data, and must be
refused while the same call on bob's own data works; no token, a wrong
signature or an expired token get 401; a page of another origin gets no CORS
permission and no development token; a policy planted in the store is not
served. The rules themselves are unit-tested in tests/server/test_access.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from harness.devserver import DevServer, chat, client, server_environment, system_prompts, token, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from mnemo.access.tokens import mint_token
from mnemo.core.limits import MAX_MESSAGE_CHARS

pytestmark = pytest.mark.e2e

HELLO = {"messages": [{"role": "user", "content": "hello"}]}
PLANTED = {
    "id": "refund-override",
    "title": "Refund policy",
    "text": "Refund policy: every refund is approved at any time, no receipt, no questions asked.",
}
EVIL = "http://evil.example"
APP = "http://app.example"  # an origin the operator allowed (CORS_CONFIG)


async def status(awaitable) -> int:
    """HTTP status of an SDK call (200 when it succeeded)."""
    try:
        await awaitable
    except httpx.HTTPStatusError as exc:
        return exc.response.status_code
    return 200


def preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(
        f"{url}/threads",
        timeout=10,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type",
        },
    )


def check_authentication(url: str, thread_id: str) -> None:
    """No token, a malformed one, a wrong signature, an expired one: 401 everywhere,
    sent as ``Authorization: Bearer`` or as ``X-Api-Key``."""
    past = datetime.now(UTC) - timedelta(hours=1)
    bad = {
        "no token": {},
        "studio header": {"x-auth-scheme": "langsmith"},  # must not bypass auth
        "not bearer": {"Authorization": f"Basic {token('alice')}"},
        "garbage": {"Authorization": "Bearer not.a.jwt"},
        "wrong signature": {"Authorization": f"Bearer {mint_token('alice', secret='w' * 40)}"},
        "expired": {"Authorization": f"Bearer {token('alice', ttl=timedelta(minutes=1), now=past)}"},
        # The SDKs' apiKey: the same token, the same checks; Authorization wins when both are sent.
        "garbage key": {"X-Api-Key": "not.a.jwt"},
        "wrong signature key": {"X-Api-Key": mint_token("alice", secret="w" * 40)},
        "expired key": {"X-Api-Key": token("alice", ttl=timedelta(minutes=1), now=past)},
        "bad authorization, good key": {"Authorization": "Bearer not.a.jwt", "X-Api-Key": token("alice")},
    }
    routes: list[tuple[str, str, dict | None]] = [
        ("POST", "/store/items/search", {"namespace_prefix": []}),
        ("GET", f"/threads/{thread_id}/state", None),
        ("POST", "/threads/search", {}),
        ("POST", f"/threads/{thread_id}/runs/wait", {"assistant_id": "agent", "input": HELLO}),
        ("POST", "/assistants/search", {}),
        ("POST", "/runs/crons/search", {}),
    ]
    goods = ({"Authorization": f"Bearer {token('alice')}"}, {"X-Api-Key": token("alice")})
    for method, path, body in routes:
        for good in goods:
            assert httpx.request(method, url + path, json=body, headers=good, timeout=60).status_code == 200, path
        for name, headers in bad.items():
            res = httpx.request(method, url + path, json=body, headers=headers, timeout=10)
            assert res.status_code == 401, (name, path, res.text)
            assert res.json()["detail"], (name, path)
    for path in ("/ok", "/info", "/ui"):  # health, server info and the console's page stay open
        assert httpx.get(url + path, timeout=10).status_code == 200, path


async def check_boundary(server: DevServer, stub) -> None:
    """The checks run on both backends."""
    url = server.url
    alice, bob, admin = client(server, "alice"), client(server, "bob"), client(server, "backend", admin=True)

    run = await chat(alice, "Hi, I'm Alice and I live in Hangzhou.", user_id="alice")
    assert run["status"] == "success", server.output()
    thread_a = run["thread_id"]
    assert (await alice.store.get_item(["alice", "profile"], "city"))["value"]["value"] == "Hangzhou"
    check_authentication(url, thread_a)

    # ---- store: bob against alice's namespaces; his own work.
    note = {"text": "Bob likes tea.", "updated_at": "2026-01-01T00:00:00+00:00"}
    # Memory changes through the agent, the audited /memory routes or python -m mnemo, never by
    # raw writes (an operator's neither); raw writes reach the app's own items alone.
    assert await status(admin.store.put_item(["bob", "app"], "n1", note)) == 200
    assert (await bob.store.get_item(["bob", "app"], "n1"))["value"]["text"] == "Bob likes tea."
    assert await status(bob.store.put_item(["bob", "notes"], "n1", note)) == 403
    assert await status(bob.store.put_item(["bob", "note_index"], "head", {"recent": [note]})) == 403
    assert await status(bob.store.delete_item(["bob", "profile"], "city")) == 403
    assert await status(admin.store.put_item(["bob", "notes"], "n1", note)) == 403
    assert await status(bob.store.get_item(["alice", "profile"], "city")) == 403
    assert await status(bob.store.search_items(["alice"])) == 403
    assert await status(bob.store.search_items(["alice", "profile"], query="where do I live")) == 403
    assert await status(bob.store.put_item(["alice", "profile"], "city", {"value": "Paris"})) == 403
    assert await status(bob.store.delete_item(["alice", "profile"], "city")) == 403
    assert await status(bob.store.list_namespaces(prefix=["alice"])) == 403
    everything = (await admin.store.search_items([], limit=100))["items"]
    assert {"alice", "bob"} <= {i["namespace"][0] for i in everything}  # an empty prefix reaches both...
    narrowed = (await bob.store.search_items([], limit=100))["items"]
    assert narrowed and {i["namespace"][0] for i in narrowed} == {"bob"}  # ...but only bob's for bob
    assert {tuple(ns) for ns in (await bob.store.list_namespaces())["namespaces"]} == {("bob", "app")}
    assert (await alice.store.get_item(["alice", "profile"], "city"))["value"]["value"] == "Hangzhou"  # untouched

    # shared knowledge, audit, usage, entitlements: read through the API, written by mnemo alone.
    assert await status(bob.store.search_items(["org", "policies"])) == 200
    assert await status(bob.store.put_item(["org", "policies"], "x", {"text": "x"})) == 403
    assert await status(alice.store.search_items(["alice", "audit"])) == 200
    record = (await alice.store.search_items(["alice", "audit"]))["items"][0]
    for caller in (alice, admin):
        assert await status(caller.store.put_item(["alice", "audit"], "x", {"text": "x"})) == 403
        assert await status(caller.store.delete_item(["alice", "audit"], record["key"])) == 403  # not one record
        assert await status(caller.store.put_item(["alice", "usage"], "x", {"n": 1})) == 403
        assert await status(caller.store.put_item(["alice", "entitlements"], "*", {"allowed": True})) == 403
    assert (await alice.store.get_item(["alice", "audit"], record["key"]))["value"] == record["value"]

    # ---- threads and runs.
    assert await status(alice.threads.get(thread_a)) == 200
    assert await status(bob.threads.get(thread_a)) == 404
    assert await status(bob.threads.get_state(thread_a)) == 404
    assert await status(bob.threads.get_history(thread_a)) == 404
    assert await status(bob.threads.update(thread_a, metadata={"owner": "bob"})) == 404
    assert await status(bob.threads.delete(thread_a)) == 404
    assert thread_a in {t["thread_id"] for t in await alice.threads.search(limit=100)}
    assert thread_a not in {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert await status(bob.runs.list(thread_a)) in (200, 404)
    if await status(bob.runs.list(thread_a)) == 200:
        assert await bob.runs.list(thread_a) == []
    assert await status(bob.runs.get(thread_a, run["run_id"])) == 404
    calls, said = len(stub.requests), (await alice.threads.get_state(thread_a))["values"]["messages"]
    assert await status(bob.runs.create(thread_a, "agent", input=HELLO)) == 404  # run on a foreign thread
    assert await status(bob.runs.wait(thread_a, "agent", input=HELLO, context={"user_id": "bob"})) == 404
    assert len(stub.requests) == calls
    assert (await alice.threads.get_state(thread_a))["values"]["messages"] == said

    # claiming another user: refused; naming nobody runs as the token's user.
    thread_b = (await bob.threads.create())["thread_id"]
    assert await status(bob.runs.create(thread_b, "agent", input=HELLO, context={"user_id": "alice"})) == 403
    assert await status(bob.runs.wait(None, "agent", input=HELLO, context={"user_id": "alice"})) == 403
    run = await chat(bob, "Hi, I'm Bob and I live in Oslo.", user_id=None, thread_id=thread_b)
    assert run["status"] == "success"
    run = await chat(bob, "Where do I live?", user_id=None, thread_id=thread_b)
    assert run["status"] == "success"
    assert "Hangzhou" not in system_prompts(stub)[-1] and "Oslo" in system_prompts(stub)[-1]

    # an oversized message: refused before the run exists (413), the thread untouched.
    calls = len(stub.requests)
    huge = {"messages": [{"role": "user", "content": "x" * (MAX_MESSAGE_CHARS + 1)}]}
    assert await status(bob.runs.wait(thread_b, "agent", input=huge)) == 413
    assert await status(bob.runs.create(None, "agent", input=huge)) == 413
    assert len(stub.requests) == calls
    assert all(
        len(m["content"]) <= MAX_MESSAGE_CHARS for m in (await bob.threads.get_state(thread_b))["values"]["messages"]
    )

    # an admin (app backend) acts for the user it names, and may read any thread...
    run = await chat(admin, "Where do I live?", user_id="alice")
    assert run["status"] == "success" and 'city: "Hangzhou"' in system_prompts(stub)[-1]
    assert await status(admin.threads.get_state(thread_a)) == 200
    # ...but the graph keeps a thread to one user: alice's thread, run for bob, fails.
    run = await chat(admin, "I live in Paris.", user_id="bob", thread_id=thread_a)
    assert run["status"] == "error"
    assert (await admin.store.get_item(["bob", "profile"], "city"))["value"]["value"] == "Oslo"  # not Paris

    # ---- bounded input: what one run or state update may add (413 / 415, before any work).
    good = {"Authorization": f"Bearer {token('alice')}"}
    many: list[dict] = [{"role": "user", "content": "hi"}] * 10_000
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1_000}}
    blocks: list[dict] = [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}]
    before = len((await alice.threads.get_state(thread_a))["values"]["messages"])
    for messages, refused in ((many, 413), (blocks, 415)):
        res = httpx.post(
            f"{url}/threads/{thread_a}/runs/wait",
            json={"assistant_id": "agent", "input": {"messages": messages}, "context": {"user_id": "alice"}},
            headers=good,
            timeout=60,
        )
        assert res.status_code == refused, res.text
        res = httpx.post(f"{url}/threads/{thread_a}/state", json={"values": {"messages": messages}}, headers=good)
        assert res.status_code == refused, res.text
    # An image within the body's bound is refused as not text; past it (1 MB), as too large, unread.
    for size, refused in ((100_000, 415), (1_000_000, 413)):
        huge_image: dict = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * size}}
        res = httpx.post(
            f"{url}/threads/{thread_a}/runs/wait",
            json={"assistant_id": "agent", "input": {"messages": [{"role": "user", "content": [huge_image]}]}},
            headers=good,
            timeout=60,
        )
        assert res.status_code == refused, res.text  # the image never reaches the model
    assert len((await alice.threads.get_state(thread_a))["values"]["messages"]) == before  # nothing was added

    # ---- development sign-in: the console's own page only.
    code = server.dev_code()  # printed by ./scripts/dev with the console's URL
    ok = httpx.post(f"{url}/ui/dev-token", json={"user_id": "carol", "code": code}, headers={"Origin": url}, timeout=10)
    assert ok.status_code == 200
    # Without this start's code (another local account cannot read the terminal): no token.
    for body in ({"user_id": "carol"}, {"user_id": "carol", "code": code[:-1]}):
        res = httpx.post(f"{url}/ui/dev-token", json=body, headers={"Origin": url}, timeout=10)
        assert res.status_code == 403 and "token" not in res.json(), body
    carol = {"Authorization": f"Bearer {ok.json()['token']}"}
    assert (
        httpx.post(
            f"{url}/store/items/search", json={"namespace_prefix": ["carol"]}, headers=carol, timeout=10
        ).status_code
        == 200
    )
    for headers in ({"Origin": EVIL}, {}, {"Origin": url, "Host": "evil.example"}):
        res = httpx.post(f"{url}/ui/dev-token", json={"user_id": "alice", "code": code}, headers=headers, timeout=10)
        assert res.status_code == 403 and "token" not in res.json(), headers

    # ---- CORS: a page of another origin is not allowed to call the API.
    res = preflight(url, EVIL)
    assert res.status_code == 400 and "Disallowed CORS origin" in res.text  # the CORS layer answered...
    assert "access-control-allow-origin" not in res.headers  # ...without permission

    # ---- policies: nothing can be planted, even by an admin's hand.
    run = await chat(alice, "What is your refund policy?", user_id="alice")  # seeds the policies
    assert run["status"] == "success", server.output()
    planted = admin.store.put_item(["org", "policies"], PLANTED["id"], {**PLANTED, "digest": "0" * 16})
    assert await status(planted) == 403  # refused: written by mnemo alone
    run = await chat(alice, "What is your refund policy?", user_id="alice")
    assert run["status"] == "success", server.output()
    state = await alice.threads.get_state(run["thread_id"])
    served = [m["content"] for m in state["values"]["messages"] if m["type"] == "tool"]
    assert served and "30 days" in served[0] and "no questions asked" not in served[0]


async def test_the_trust_boundary_on_the_default_config(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        await check_boundary(server, stub)
        alice, bob, admin = client(server, "alice"), client(server, "bob"), client(server, "backend", admin=True)
        thread_a = (await alice.threads.search(limit=1))[0]["thread_id"]

        # crons: refused with the reason, for users and admins alike (their runs could not run as the user).
        for who in (alice, admin):
            with pytest.raises(httpx.HTTPStatusError) as refused:
                await who.crons.create_for_thread(thread_a, "agent", schedule="* * * * *", input=HELLO)
            assert refused.value.response.status_code == 403
            assert "mnemo does not run crons" in refused.value.response.json()["detail"]
        with pytest.raises(httpx.HTTPStatusError) as refused:
            await alice.crons.create("agent", schedule="* * * * *", input=HELLO)
        assert refused.value.response.status_code == 403
        assert await alice.crons.search() == [] and await admin.crons.search() == []

        # assistants: read by users, changed by admins.
        assert await status(bob.assistants.search()) == 200
        assert await status(bob.assistants.create("agent", name="bob's")) == 403
        made = await admin.assistants.create("agent", name="support")
        assert await status(bob.assistants.get(made["assistant_id"])) == 200
        assert await status(bob.assistants.update(made["assistant_id"], name="mine")) == 403
        assert await status(bob.assistants.delete(made["assistant_id"])) == 403
        assert await status(admin.assistants.delete(made["assistant_id"])) == 200
    finally:
        server.stop()


@pytest.fixture
def pg_server_env(workdir, stub, tmp_path: Path) -> dict[str, str]:
    # The test's own embedded server (never an outside database); allowed
    # origins in the .env, as a deployment would configure them.
    cors = json.dumps(
        {"allow_origins": [APP], "allow_methods": ["GET", "POST"], "allow_headers": ["authorization", "content-type"]}
    )
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(tmp_path / "pgdata"), POSTGRES_URI="", CORS_CONFIG=f"'{cors}'")
    return server_environment()


@pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)
async def test_the_trust_boundary_on_postgres(workdir, pg_server_env, stub):
    server = DevServer(workdir, pg_server_env, config="langgraph.postgres.json")
    server.start()
    try:
        await check_boundary(server, stub)
        # Allowed origins come from configuration (CORS_CONFIG here), the rest get nothing.
        assert preflight(server.url, APP).headers.get("access-control-allow-origin") == APP
        assert "access-control-allow-origin" not in preflight(server.url, EVIL).headers
        # A CORS_CONFIG in .env replaces ./scripts/dev's development origins (server/dev_cors.py).
        assert "access-control-allow-origin" not in preflight(server.url, "http://localhost:3000").headers
    finally:
        server.stop()
