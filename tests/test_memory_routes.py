"""``/memory/export`` and ``/memory/forget`` (web/memory.py) through a real
``./scripts/dev``: custom routes are not behind the platform's auth, so these
check the token themselves; a user reaches only their own memory whatever the
request names, an admin the user it names."""

from __future__ import annotations

import httpx
import pytest

from tests.devserver import DevServer, chat, client, token

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
            assert [(r["target"], r["before"], r["source"], r["actor"]) for r in deleted] == [
                ("city", "Hangzhou", "user_said", None)
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
            assert [(r["source"], r["actor"]) for r in li["audit"] if r["action"] == "profile.delete"] == [
                ("admin", "ops")
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
