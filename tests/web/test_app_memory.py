"""The application's memory routes (web/app_memory.py) without a server: the
server's store stood in by an in-memory one with the real embedder. Through a
real ``./scripts/dev``: tests/e2e/test_app_memory.py."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo import StoreUnavailableError, User, aupdate_profile
from mnemo.access.tokens import mint_token
from mnemo.audit.chain import alist_audit
from mnemo.core import MAX_MEMORY_BODY_BYTES
from mnemo.notes import alist_notes
from mnemo.turn import aload_snapshot, render_snapshot
from server.body_bounds import BodyBounds

SECRET = "a" * 40
ALICE = User.of("alice")


def app_for(monkeypatch, store) -> TestClient:
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    import web.server_store
    from web.app_memory import ROUTES

    async def own_store():
        return store

    monkeypatch.setattr(web.server_store, "get", own_store)
    # Behind the layer web/app.py mounts ahead of every route: it bounds the body.
    return TestClient(
        Starlette(routes=[Route(p, e, methods=m) for p, e, m in ROUTES], middleware=[Middleware(BodyBounds)])
    )


@pytest.fixture
def api(monkeypatch, store) -> TestClient:
    return app_for(monkeypatch, store)


def auth(user_id: str = "alice", *, admin: bool = False) -> dict[str, str]:
    return {"authorization": f"Bearer {mint_token(user_id, secret=SECRET, role='admin' if admin else 'user')}"}


def audit(store, user: User = ALICE) -> list[Any]:
    return list(asyncio.run(alist_audit(store, user)))


def test_a_note_is_added_through_the_write_path_and_its_audit_names_route_and_caller(api, store):
    res = api.post("/memory/notes", json={"text": "Prefers e-mail over phone."}, headers=auth())
    assert res.status_code == 201 and res.json()["status"] == "stored"
    note = res.json()["note"]
    assert note["source"] == "app" and note["text"] == "Prefers e-mail over phone."
    # A repeat is a repeat: no second note, no second audit record.
    again = api.post("/memory/notes", json={"text": "prefers e-mail over phone"}, headers=auth())
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert [n["id"] for n in asyncio.run(alist_notes(store, ALICE))] == [note["id"]]
    (record,) = audit(store)
    assert (record["action"], record["route"], record["actor"], record["source"]) == (
        "note.add",
        "POST /memory/notes",
        "alice",
        "user_said",
    )
    # The note index was kept: the words alone find it.
    snapshot = asyncio.run(aload_snapshot(store, ALICE, "e-mail"))
    assert [n["id"] for n in snapshot["relevant"]] == [note["id"]]


def test_an_admin_names_the_user_and_is_recorded_as_the_caller(api, store):
    assert api.post("/memory/notes", json={"text": "Has a dog."}, headers=auth("crm", admin=True)).status_code == 400
    res = api.post("/memory/notes", json={"text": "Has a dog.", "user_id": "alice"}, headers=auth("crm", admin=True))
    assert res.status_code == 201
    (record,) = audit(store)
    assert (record["source"], record["actor"]) == ("admin", "crm")
    # A user naming another user writes to their own memory only.
    api.post("/memory/notes", json={"text": "Likes jazz.", "user_id": "alice"}, headers=auth("bob"))
    assert [n["text"] for n in asyncio.run(alist_notes(store, ALICE))] == ["Has a dog."]
    assert [n["text"] for n in asyncio.run(alist_notes(store, User.of("bob")))] == ["Likes jazz."]


@pytest.mark.parametrize(
    ("body", "field", "status"),
    [
        ({"text": "Has a dog.", "colour": "red"}, "colour", 400),
        ({"text": 42}, "text", 400),
        ({}, "text", 400),
        ({"text": "   "}, "text", 400),
        ({"text": "x" * 1001}, "text", 400),
        ({"text": "Is away.", "expires_at": "2001-01-01"}, "expires_at", 400),
        ({"text": "Is away.", "expires_at": "next week"}, "expires_at", 400),
        ({"text": "Moved.", "refers_to": "March"}, "refers_to", 400),
        ({"text": "y" * (MAX_MEMORY_BODY_BYTES + 1)}, None, 413),  # refused ahead of the route, unread
    ],
)
def test_a_bad_note_is_refused_naming_the_field_and_nothing_is_written(api, store, body, field, status):
    res = api.post("/memory/notes", json=body, headers=auth())
    assert (res.status_code, res.json().get("field")) == (status, field), res.json()
    assert asyncio.run(alist_notes(store, ALICE)) == [] and audit(store) == []


def test_a_body_that_is_not_an_object_and_a_missing_token_are_refused(api, store):
    assert api.post("/memory/notes", json=["Has a dog."], headers=auth()).status_code == 400
    assert api.post("/memory/notes", content=b"{not json", headers=auth()).status_code == 400
    assert api.post("/memory/notes", json={"text": "Has a dog."}).status_code == 401
    assert asyncio.run(alist_notes(store, ALICE)) == []


def test_a_time_bound_note_keeps_its_expiry(api, store):
    res = api.post("/memory/notes", json={"text": "Is travelling.", "expires_at": "2099-01-01"}, headers=auth())
    assert res.status_code == 400  # more than a year ahead: a durable fact, said so
    from mnemo.notes import expiry_from

    until = expiry_from(valid_for_days=3)
    assert until is not None
    res = api.post("/memory/notes", json={"text": "Is travelling.", "expires_at": until}, headers=auth())
    assert res.status_code == 201 and res.json()["note"]["expires_at"] == until


def test_an_expired_note_is_not_found_by_id_as_it_is_not_by_search(api, store, monkeypatch):
    from datetime import timedelta

    from mnemo.notes import expiry, expiry_from

    until = expiry_from(valid_for_days=3)
    ids = [
        api.post("/memory/notes", json={"text": text, "expires_at": until}, headers=auth()).json()["note"]["id"]
        for text in ("Is travelling in Japan.", "Is staying at the Hilton.")
    ]
    durable = api.post("/memory/notes", json={"text": "Has a dog."}, headers=auth()).json()["note"]["id"]
    assert api.post(f"/memory/notes/{ids[1]}/invalidate", headers=auth()).status_code == 200

    def found() -> set[str]:
        res = api.get("/memory/search", params={"q": "Is travelling in Japan?"}, headers=auth()).json()
        return {e["note"]["text"] for e in [*res["relevant"], *res["recent"]]}

    for note_id in (*ids, durable):  # the precondition: each is found by its id until it expires
        assert api.get(f"/memory/notes/{note_id}", headers=auth()).status_code == 200
    assert "Is travelling in Japan." in found()
    later = expiry.now() + timedelta(days=4)
    monkeypatch.setattr(expiry, "clock", lambda: later)
    for note_id in ids:  # in recall or invalidated, still stored (no search swept it yet): gone
        res = api.get(f"/memory/notes/{note_id}", headers=auth())
        assert res.status_code == 404 and res.json()["field"] == "note_id", res.json()
    assert "Is travelling in Japan." not in found()
    assert api.get(f"/memory/notes/{durable}", headers=auth()).json()["note"]["text"] == "Has a dog."


def test_a_note_is_read_with_its_history_patched_and_invalidated(api, store):
    note_id = api.post("/memory/notes", json={"text": "Lives in Hangzhou."}, headers=auth()).json()["note"]["id"]
    patched = api.patch(f"/memory/notes/{note_id}", json={"text": "Lives in Suzhou."}, headers=auth())
    assert patched.status_code == 200 and patched.json()["note"]["text"] == "Lives in Suzhou."
    got = api.get(f"/memory/notes/{note_id}", headers=auth()).json()
    assert [h["text"] for h in got["note"]["history"]] == ["Lives in Hangzhou."] and not got["invalidated"]
    # Another user's id is "not found", and changes nothing.
    assert api.get(f"/memory/notes/{note_id}", headers=auth("bob")).status_code == 404
    assert api.post(f"/memory/notes/{note_id}/invalidate", headers=auth("bob")).status_code == 404
    assert api.patch(f"/memory/notes/{note_id}", json={"text": 1}, headers=auth()).json()["field"] == "text"
    done = api.post(f"/memory/notes/{note_id}/invalidate", headers=auth())
    assert done.status_code == 200 and done.json()["invalidated"]
    got = api.get(f"/memory/notes/{note_id}", headers=auth()).json()
    assert got["invalidated"] and got["note"]["text"] == "Lives in Suzhou."
    assert asyncio.run(alist_notes(store, ALICE)) == []  # out of recall
    actions = [(r["action"], r["route"]) for r in audit(store)]
    assert actions == [
        ("note.add", "POST /memory/notes"),
        ("note.update", "PATCH /memory/notes/{id}"),
        ("note.invalidate", "POST /memory/notes/{id}/invalidate"),
    ]


def test_the_profile_is_patched_with_an_app_source_and_null_deletes(api, store):
    res = api.patch("/memory/profile", json={"city": "Hangzhou", "language": "Chinese"}, headers=auth())
    assert res.status_code == 200
    profile = res.json()["profile"]
    assert {f: (e["value"], e["source"]) for f, e in profile.items()} == {
        "city": ("Hangzhou", "app"),
        "language": ("zh", "app"),
    }
    assert {r["route"] for r in audit(store)} == {"PATCH /memory/profile"}
    gone = api.patch("/memory/profile", json={"language": None}, headers=auth()).json()
    assert list(gone["profile"]) == ["city"] and gone["changes"] == [
        {"field": "language", "before": "zh", "after": None}
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"city": "Paris", "shoe_size": "42"}, "shoe_size"),
        ({"city": 7}, "city"),
        ({"city": "14 Harbour Lane, Brighton", "name": "Ann"}, "city"),  # an address is no city (issue 55)
        ({"city": "西湖区文三路 88 号"}, "city"),
        ({"response_style": "purple"}, "response_style"),
        ({"name": "unknown"}, "name"),
        ({}, "body"),
    ],
)
def test_a_bad_profile_patch_names_the_field_and_writes_nothing(api, store, body, field):
    res = api.patch("/memory/profile", json=body, headers=auth())
    assert res.status_code == 400 and res.json()["field"] == field, res.json()
    assert audit(store) == []


def test_search_shows_what_the_prompt_carries_and_why(api, store):
    for text in ("Prefers e-mail over phone.", "Has a dog called Max.", "Is allergic to peanuts."):
        api.post("/memory/notes", json={"text": text}, headers=auth())
    asyncio.run(aupdate_profile(store, ALICE, {"city": "Hangzhou"}))
    res = api.get("/memory/search", params={"q": "What is my dog called?"}, headers=auth())
    assert res.status_code == 200
    found = res.json()
    top = found["relevant"][0]
    assert top["note"]["text"] == "Has a dog called Max." and top["in_prompt"]
    assert top["found_by"]["meaning"] == 1 and top["found_by"]["words"] == 1  # "dog": both rankings
    assert top["note"]["score"] > 0
    assert found["profile"]["city"]["value"] == "Hangzhou"
    # The memory block is the one a turn renders, and the budget counts it.
    snapshot = asyncio.run(aload_snapshot(store, ALICE, "What is my dog called?"))
    assert found["memory"] == render_snapshot(snapshot)
    assert found["budget"]["memory_chars"] == len(found["memory"]) and found["budget"]["notes_left_out"] == 0
    shown = {e["note"]["id"] for e in [*found["relevant"], *found["recent"]]}
    assert len(shown) == 3
    # Another user sees none of it; a bad parameter is named.
    assert api.get("/memory/search", params={"q": "dog"}, headers=auth("bob")).json()["relevant"] == []
    bad = api.get("/memory/search", params={"q": "dog", "limit": "5"}, headers=auth())
    assert bad.status_code == 400 and bad.json()["field"] == "limit"
    long = api.get("/memory/search", params={"q": "x" * 9000}, headers=auth())
    assert long.status_code == 400 and long.json()["field"] == "q"


class FailingWrites(InMemoryStore):
    """A store whose writes fail as a database that went away does."""

    async def abatch(self, ops):
        ops = list(ops)
        if any(type(op).__name__ == "PutOp" for op in ops):
            raise StoreUnavailableError("the database is unavailable")
        return await super().abatch(ops)


def test_a_failed_store_call_is_503_with_retry_after_and_nothing_written(monkeypatch, index):
    store = FailingWrites(index=index)
    api = app_for(monkeypatch, store)
    for method, path, body in (
        ("post", "/memory/notes", {"text": "Has a dog."}),
        ("patch", "/memory/profile", {"city": "Paris"}),
    ):
        res = getattr(api, method)(path, json=body, headers=auth())
        assert res.status_code == 503 and res.headers["retry-after"] == "5", res.text
    assert asyncio.run(store.asearch(("alice",), limit=10)) == []


def test_every_route_refuses_a_call_without_a_valid_token_before_any_store_work(monkeypatch):
    from web.app_memory import ROUTES

    class NoStore:
        def __getattr__(self, name):
            raise AssertionError(f"the store was used ({name}) before the token was checked")

    api = app_for(monkeypatch, NoStore())
    assert len(ROUTES) == 6
    for path, _, methods in ROUTES:
        url = path.replace("{note_id}", "abc")
        for headers in ({}, {"authorization": "Bearer nope"}):
            res = api.request(methods[0], url, json={"text": "x"} if methods[0] != "GET" else None, headers=headers)
            assert res.status_code == 401, (methods[0], url, res.text)
