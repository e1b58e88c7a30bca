"""``/memory/export`` and ``/memory/forget`` (web/user_memory.py) through a real
``./scripts/dev``: custom routes are not behind the platform's auth, so these
check the token themselves; a user reaches only their own memory whatever the
request names, an admin the user it names."""

from __future__ import annotations

import httpx
import pytest

from harness.devserver import DevServer, chat, client, token

pytestmark = pytest.mark.e2e


def bearer(user_id: str, *, admin: bool = False) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(user_id, admin=admin)}"}


async def test_export_and_forget_act_for_the_token_user_only(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        for user, text in (
            ("u_zhou", "I'm Zhou and I live in Hangzhou."),
            ("u_li", "I'm Li and I live in Beijing. Remember that I have a dog."),
        ):
            assert (await chat(client(server, user), text, user_id=user))["status"] == "success"
        li_note = await client(server, "u_li").store.search_items(["u_li", "notes"], limit=1)
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
            # No token, a bad one: 401, nothing exported.
            assert (await http.get("/memory/export")).status_code == 401
            bad = await http.get("/memory/export", headers={"Authorization": "Bearer nope"})
            assert bad.status_code == 401 and "Beijing" not in bad.text

            # A user's export is theirs, whatever user_id the request names.
            mine = await http.get("/memory/export", params={"user_id": "u_li"}, headers=bearer("u_zhou"))
            assert mine.status_code == 200 and mine.json()["user_id"] == "u_zhou"
            assert mine.json()["profile"]["city"]["value"] == "Hangzhou" and "Beijing" not in mine.text
            assert "attachment" in mine.headers["content-disposition"]

            # An admin names the user; naming none is an error, not a default user.
            li = await http.get("/memory/export", params={"user_id": "u_li"}, headers=bearer("ops", admin=True))
            assert li.json()["profile"]["city"]["value"] == "Beijing"
            assert (await http.get("/memory/export", headers=bearer("ops", admin=True))).status_code == 400

            # Forget: a user cannot reach Li's field by naming Li; their own is forgotten and audited.
            forget = {"kind": "profile", "key": "city", "user_id": "u_li"}
            done = await http.post("/memory/forget", json=forget, headers=bearer("u_zhou"))
            assert done.status_code == 200 and done.json()["forgotten"] == ["city"]
            again = await http.post("/memory/forget", json=forget, headers=bearer("u_zhou"))
            assert again.status_code == 404
            for wrong in ({"kind": "profile", "key": "shoe_size"}, {"kind": "diary", "key": "x"}, [1]):
                assert (await http.post("/memory/forget", json=wrong, headers=bearer("u_zhou"))).status_code == 400
            assert (await http.post("/memory/forget", json={"kind": "profile", "key": "city"})).status_code == 401
            zhou = (await http.get("/memory/export", headers=bearer("u_zhou"))).json()
            assert "city" not in zhou["profile"]
            deleted = [r for r in zhou["audit"] if r["action"] == "profile.delete"]
            assert [(r["target"], r["before"], r["source"], r["actor"], r["route"]) for r in deleted] == [
                ("city", "Hangzhou", "user_said", "u_zhou", "POST /memory/forget")
            ]
            li = await http.get("/memory/export", params={"user_id": "u_li"}, headers=bearer("ops", admin=True))
            assert li.json()["profile"]["city"]["value"] == "Beijing"

            # An admin forgets for the user it names, recorded as the admin's act.
            done = await http.post("/memory/forget", json={**forget, "key": "name"}, headers=bearer("ops", admin=True))
            assert done.status_code == 200
            li = (
                await http.get("/memory/export", params={"user_id": "u_li"}, headers=bearer("ops", admin=True))
            ).json()
            assert "name" not in li["profile"] and li["profile"]["city"]["value"] == "Beijing"
            assert [(r["source"], r["actor"], r["route"]) for r in li["audit"] if r["action"] == "profile.delete"] == [
                ("admin", "ops", "POST /memory/forget")
            ]
            # A note id of another user forgets nothing of theirs.
            assert li_note["items"], "Li has memory to protect"
            note = {"kind": "note", "key": li_note["items"][0]["key"], "user_id": "u_li"}
            assert (await http.post("/memory/forget", json=note, headers=bearer("u_zhou"))).status_code == 404
            li = (
                await http.get("/memory/export", params={"user_id": "u_li"}, headers=bearer("ops", admin=True))
            ).json()
            assert [n["text"] for n in li["notes"]] == ["I have a dog"]
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


#: Custom routes that need no token: the pages (they hold no data), the label mapping and the dev sign-in.
PUBLIC_ROUTES = {"/ui", "/ui/admin", "/ui/common.js", "/ui/label", "/ui/dev-token"}


async def test_every_custom_route_takes_the_token_in_either_header(workdir, server_env, stub):
    """Each custom route reads credentials as the API does (server/credentials.py): the
    same token as ``Authorization: Bearer`` or as ``X-Api-Key`` gets the same answer."""
    from web.app import app

    admin, user = token("ops", admin=True), token("u_key")
    calls = [  # (method, path, request, token, status)
        ("GET", "/memory/export", {"params": {"user_id": "u_key"}}, admin, 200),
        ("GET", "/memory/export", {}, user, 200),
        ("POST", "/memory/forget", {"json": {"kind": "profile", "key": "city", "user_id": "u_key"}}, admin, 404),
        ("POST", "/memory/operator/export", {"json": {"user_id": "u_key"}}, admin, 200),
        ("POST", "/memory/operator/audit-verify", {"json": {"user_id": "u_key"}}, admin, 200),
        ("POST", "/feedback", {"json": {"thread_id": "nope"}}, user, 404),
        ("POST", "/memory/notes", {"json": {"text": ""}}, user, 400),
        ("GET", "/memory/notes/n_none", {}, user, 404),
        ("PATCH", "/memory/notes/n_none", {"json": {"text": "Prefers e-mail over phone."}}, user, 404),
        ("POST", "/memory/notes/n_none/invalidate", {}, user, 404),
        ("PATCH", "/memory/profile", {"json": {"city": "Hangzhou"}}, user, 200),
        ("GET", "/memory/search", {"params": {"q": "how to contact me"}}, user, 200),
    ]
    routes = {route.path for route in app.routes}
    templates = {"/memory/notes/n_none": "/memory/notes/{note_id}"}
    templates["/memory/notes/n_none/invalidate"] = "/memory/notes/{note_id}/invalidate"
    covered = {
        "/memory/operator/{name}" if path.startswith("/memory/operator/") else templates.get(path, path)
        for _, path, *_ in calls
    }
    assert routes - PUBLIC_ROUTES == covered, "a custom route this test does not try"
    server = DevServer(workdir, server_env)
    server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            for method, path, request, key, status in calls:
                assert (await http.request(method, path, **request)).status_code == 401, path
                for headers in ({"Authorization": f"Bearer {key}"}, {"X-Api-Key": key}):
                    got = await http.request(method, path, headers=headers, **request)
                    assert got.status_code == status, (path, headers.keys(), got.status_code, got.text)
    finally:
        server.stop()
