"""Export, erase, audit and usage counting on every backend (the conformance
suite's stores: in-memory, the embedded PostgreSQL and the platform's store of
``langgraph dev``), and the command line."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest
from langgraph.store.base import PutOp

from harness.store_backends import ROOT, RacingWriter
from mnemo import User, alist_notes, arecall, aremember, aremember_many, aupdate_profile
from mnemo.access.entitlements import aadmit, aget_entitlements, aset_entitlement, ausage_today
from mnemo.access.privacy import ERASE_PASSES, aerase_threads, aerase_user, aexport_user
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from mnemo.core import PAGE_SIZE
from mnemo.core.errors import ListingChangedError

ADMIN = Origin(source="admin", actor="admin_1")
#: A user whose id is not its namespace label (the export names both).
ZHOU_MAIL = User.of("Zhou Wei <zhou@example.com>")
NOTES = ["The user is allergic to peanuts.", "The user owns a Xiaomi air purifier.", "用户养了两只猫。"]


async def vector_count(store, uri, user: User) -> int:
    """Vectors physically kept for anything of ``user`` (bypassing every read path)."""
    if uri is None:  # an InMemoryStore, or the platform's wrapper around one
        vectors = getattr(store, "_store", store)._vectors
        return sum(len(keys) for ns, keys in vectors.items() if ns and ns[0] == user.label)
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM store_vectors WHERE prefix = %s OR prefix LIKE %s", (user.label, user.label + ".%")
        )
        row = await cur.fetchone()
        assert row is not None
        return row[0]


async def fill(store, user: User) -> None:
    await aupdate_profile(store, user, {"name": "Zhou", "city": "杭州"})
    await aremember_many(store, user, NOTES)
    await aset_entitlement(store, user, "recall_notes", daily_limit=10, origin=ADMIN)
    await aadmit(store, user, "recall_notes")
    await store.aput((user.label, "episodes"), "e1", {"summary": "Asked about a refund"}, index=False)


# --------------------------------------------------------------------------- export


async def test_export_holds_everything_of_the_user_and_nothing_else(store, user, put_raw_notes):
    other = User.of("someone_else")
    await fill(store, user)
    await aremember(store, other, "The other user likes jazz.")
    await put_raw_notes(120)  # past every page size
    doc = await aexport_user(store, user)
    assert json.loads(json.dumps(doc, ensure_ascii=False)) == doc  # one JSON document as is
    assert doc["format"] == "mnemo.export/1" and doc["user_label"] == "u_zhou"
    assert {f: e["value"] for f, e in doc["profile"].items()} == {"name": "Zhou", "city": "杭州"}
    assert len(doc["notes"]) == 123 and set(NOTES) <= {n["text"] for n in doc["notes"]}
    assert {r["action"] for r in doc["audit"]} == {"profile.set", "note.add", "entitlement.set"}
    assert doc["entitlements"]["tool:recall_notes"]["daily_limit"] == 10
    assert [u["tool"] for u in doc["usage"]] == ["recall_notes"]
    assert doc["other"]["episodes"][0]["value"] == {"summary": "Asked about a refund"}
    assert "jazz" not in json.dumps(doc)
    # the note index exists (derived from the notes) but is not exported twice
    assert await store.asearch(user.namespace("note_index"), limit=1)
    assert set(doc["other"]) == {"episodes"}


async def test_a_user_with_nothing_stored_exports_every_section_empty(store):
    before = datetime.now(UTC)
    doc = await aexport_user(store, ZHOU_MAIL)
    after = datetime.now(UTC)
    exported_at = datetime.fromisoformat(doc["exported_at"])
    assert exported_at.utcoffset() is not None and before <= exported_at <= after
    assert ZHOU_MAIL.id != ZHOU_MAIL.label
    assert doc == {
        "format": "mnemo.export/1",
        "user_id": "Zhou Wei <zhou@example.com>",
        "user_label": ZHOU_MAIL.label,
        "exported_at": doc["exported_at"],
        "profile": {},
        "notes": [],
        "audit": [],
        "entitlements": {},
        "usage": [],
        "other": {},
    }


async def stored(store, namespace: tuple[str, ...], key: str) -> dict[str, Any]:
    """An item as the export copies it verbatim, read back from the store itself."""
    item = await store.aget(namespace, key)
    assert item is not None
    return {
        "namespace": list(namespace),
        "key": key,
        "value": item.value,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }


async def test_export_sections_hold_the_stored_items_in_their_order(store):
    user = ZHOU_MAIL
    await fill(store, user)
    month = (user.label, "episodes", "2026-12")
    await store.aput(month, "e2", {"summary": "Asked about a delivery"}, index=False)
    # Usage listed newest first (by key too): the export orders it by time.
    calls = [("c", "12:00"), ("b", "11:00"), ("a", "10:00")]
    for key, at in calls:
        usage = {"tool": "search_policy", "day": "2026-12-01", "at": f"2026-12-01T{at}:00+00:00"}
        await store.aput(user.namespace("usage"), f"2026-12-01:search_policy:{key}", usage, index=False)

    doc = await aexport_user(store, user)
    assert (doc["user_id"], doc["user_label"]) == (user.id, user.label)
    assert doc["other"] == {
        "episodes": [await stored(store, user.namespace("episodes"), "e1")],
        "episodes/2026-12": [await stored(store, month, "e2")],
    }
    assert [u["at"][11:16] for u in doc["usage"] if u["tool"] == "search_policy"] == ["10:00", "11:00", "12:00"]
    assert doc["audit"] == await alist_audit(store, user) and len(doc["audit"]) == 6


async def test_a_user_with_more_namespaces_than_pages_is_exported_and_erased_whole(store, user):
    kinds = [f"episodes/{i:03d}" for i in range(2 * PAGE_SIZE + 30)]
    await store.abatch([PutOp((user.label, *kind.split("/")), "e", {"summary": kind}, index=False) for kind in kinds])
    doc = await aexport_user(store, user)
    assert sorted(doc["other"]) == kinds
    assert [doc["other"][kind][0]["value"] for kind in kinds] == [{"summary": kind} for kind in kinds]
    report = await aerase_user(store, user, origin=ADMIN)
    assert report["deleted"] == dict.fromkeys(kinds, 1)
    assert (await aexport_user(store, user))["other"] == {}


# --------------------------------------------------------------------------- erase


async def test_erase_removes_items_and_vectors_so_nothing_is_found_by_meaning(store, uri, user):
    other = User.of("someone_else")
    await fill(store, user)
    await aremember(store, other, "The other user is allergic to peanuts too.")
    # Positive preconditions: found by meaning, vectors physically there.
    assert [n["text"] for n in await arecall(store, user, "what food allergies do I have?")][:1] == [NOTES[0]]
    raw = await store.asearch(user.root, query="peanut allergy", limit=50)
    assert any(it.value.get("text") == NOTES[0] for it in raw)
    assert await vector_count(store, uri, user) >= 3

    report = await aerase_user(store, user, origin=Origin(source="user_said", thread_id="t1"))
    assert report["deleted"]["notes"] == 3 and report["deleted"]["profile"] == 2
    assert sorted(report["kept"]) == ["entitlements", "usage"]

    assert await arecall(store, user, "what food allergies do I have?") == []
    left = await store.asearch(user.root, query="peanut allergy", limit=50)
    assert [it for it in left if it.score is not None] == []  # nothing found by meaning
    assert {it.namespace[1] for it in left} <= {
        "audit",
        "audit_head",
        "entitlements",
        "usage",
    }  # the kept controls, the erase record
    assert await vector_count(store, uri, user) == 0
    assert await alist_notes(store, user) == [] and (await aexport_user(store, user))["profile"] == {}
    # One trace of the erase, without content; the admin's controls stay.
    (record,) = await alist_audit(store, user)
    assert (record["action"], record["source"], record["thread_id"]) == ("erase", "user_said", "t1")
    assert "peanut" not in json.dumps(record)
    assert "tool:recall_notes" in await aget_entitlements(store, user)
    # The other user is untouched.
    assert [n["text"] for n in await arecall(store, other, "food allergies")] == [
        "The other user is allergic to peanuts too."
    ]


async def test_erase_reports_and_audits_exactly_what_it_deleted(store):
    user = ZHOU_MAIL
    await fill(store, user)
    # What the store holds, counted around mnemo's own listings.
    held = {ns[1]: len(await store.asearch(ns, limit=1000)) for ns in await store.alist_namespaces(prefix=user.root)}
    assert {"profile": 2, "notes": 3, "episodes": 1, "entitlements": 1, "usage": 1}.items() <= held.items()
    erased = {kind: n for kind, n in held.items() if kind not in ("entitlements", "usage")}

    before = datetime.now(UTC)
    report = await aerase_user(store, user, origin=ADMIN)
    assert report == {"user_label": user.label, "deleted": erased, "kept": ["entitlements", "usage"]}
    (record,) = await alist_audit(store, user)
    assert before <= datetime.fromisoformat(record["at"]) <= datetime.now(UTC)
    assert {k: v for k, v in record.items() if k not in ("id", "at", "nonce")} == {
        "action": "erase",
        "target": "*",
        "before": None,
        "after": {"deleted": erased, "kept": ["entitlements", "usage"]},
        "source": "admin",
        "thread_id": None,
        "run_id": None,
        "actor": "admin_1",
        "seq": 1,
        "prev": "",
    }


async def test_erase_with_entitlements_closes_the_account(store, user):
    await fill(store, user)
    report = await aerase_user(store, user, origin=ADMIN, include_entitlements=True)
    assert report["kept"] == [] and report["deleted"]["entitlements"] == 1
    assert await aget_entitlements(store, user) == {} and await ausage_today(store, user) == {}
    assert [r["action"] for r in await alist_audit(store, user)] == ["erase"]


def _deletes(ops) -> bool:
    return any(isinstance(op, PutOp) and op.value is None for op in ops)


async def test_erase_also_erases_what_is_written_while_it_runs(store, user):
    """A memory write racing the erase (the background writer, with its audit
    record) lands after the listing; the erase lists again until nothing is left."""
    await fill(store, user)

    async def remember_late(inner, ops, results) -> None:
        await aremember(inner, user, "The user moved to Ningbo.")

    racing = RacingWriter(store, _deletes, remember_late)
    report = await aerase_user(racing, user, origin=ADMIN)
    assert racing.writes == 1  # the write landed after the first deletes
    assert report["deleted"]["notes"] == len(NOTES) + 1
    assert await alist_notes(store, user) == []
    assert [r["action"] for r in await alist_audit(store, user)] == ["erase"]


async def test_an_erase_that_never_catches_up_fails_clearly(store, user):
    await fill(store, user)

    async def write_late(inner, ops, results) -> None:
        await inner.aput(user.namespace("episodes"), "late", {"summary": "late"}, index=False)

    racing = RacingWriter(store, _deletes, write_late, times=None)
    refusal = (
        f"u_zhou's memory was still being written after {ERASE_PASSES} erase passes; "
        "erase again once the writes have stopped"
    )
    with pytest.raises(ListingChangedError, match=f"^{re.escape(refusal)}$"):
        await aerase_user(racing, user, origin=ADMIN)
    assert racing.writes == ERASE_PASSES
    assert "erase" not in [r["action"] for r in await alist_audit(store, user)]


# --------------------------------------------------------------------------- threads


class Threads:
    """``client.threads`` of langgraph_sdk over threads in memory, with the
    server's semantics that :func:`aerase_threads` meets: a metadata filter,
    newest first, the SDK's defaults (``limit=10``, ``offset=0``), only the
    fields selected, 404 for a thread that is no more. (The server itself is
    met in ``tests/e2e/test_privacy_server.py``.)"""

    def __init__(self, metadata: list[dict[str, str]]) -> None:
        self.threads: list[dict[str, Any]] = [
            {"thread_id": f"t{i:03d}", "metadata": m, "status": "idle"} for i, m in enumerate(metadata)
        ]
        self.deleted: list[str] = []
        self.on_search: Callable[[], None] = lambda: None

    async def search(
        self, *, metadata: dict | None = None, limit: int = 10, offset: int = 0, select: list[str] | None = None
    ) -> list[dict]:
        self.on_search()
        found = [t for t in reversed(self.threads) if (metadata or {}).items() <= t["metadata"].items()]
        return [{f: t[f] for f in select} if select else t for t in found[offset : offset + limit]]

    async def delete(self, thread_id: str) -> None:
        found = [t for t in self.threads if t["thread_id"] == thread_id]
        if not found:
            raise LookupError(f"404: thread {thread_id} not found")
        self.threads.remove(found[0])
        self.deleted.append(thread_id)


class Client:
    def __init__(self, threads: Threads) -> None:
        self.threads = threads


async def test_erase_threads_deletes_every_thread_of_the_owner_past_every_page():
    owners = [{"owner": "u_zhou"}] * (2 * PAGE_SIZE + 5) + [{"owner": "u_li"}, {"owner": "u_zhou_2"}, {}]
    threads = Threads(owners[-3:] + owners[:-3])
    mine = [t["thread_id"] for t in reversed(threads.threads) if t["metadata"] == {"owner": "u_zhou"}]
    assert len(mine) == 2 * PAGE_SIZE + 5

    assert await aerase_threads(Client(threads), "u_zhou") == mine
    assert threads.deleted == mine
    assert [t["metadata"] for t in threads.threads] == [{"owner": "u_li"}, {"owner": "u_zhou_2"}, {}]
    assert await aerase_threads(Client(threads), "u_zhou") == []


async def test_erase_threads_by_another_key_lists_each_thread_once_when_pages_shift():
    """A thread created while the pages are read pushes the next page back by
    one: the thread seen twice is listed and deleted once."""
    threads = Threads([{"user": "u_zhou"}] * 5 + [{"owner": "u_zhou"}])
    searches = 0

    def create_after_the_first_page() -> None:
        nonlocal searches
        searches += 1
        if searches == 2:
            threads.threads.append({"thread_id": "new", "metadata": {"user": "u_zhou"}, "status": "busy"})

    threads.on_search = create_after_the_first_page
    erased = await aerase_threads(Client(threads), "u_zhou", metadata_key="user", page_size=2)
    assert erased == ["t004", "t003", "t002", "t001", "t000"]
    assert threads.deleted == erased
    assert [t["thread_id"] for t in threads.threads] == ["t005", "new"]


# --------------------------------------------------------------------------- concurrency


async def test_concurrent_writes_lose_no_audit_record(store, user):
    await asyncio.gather(*(aremember(store, user, f"The user owns item number {i}.") for i in range(20)))
    assert len(await alist_audit(store, user)) == 20


async def test_twenty_concurrent_tool_calls_count_twenty(admit_at_once):
    assert await admit_at_once("search_policy") == 20


async def test_concurrent_calls_never_exceed_a_quota(admit_at_once):
    admitted = await admit_at_once("search_policy", daily_limit=5)
    assert admitted <= 5


# --------------------------------------------------------------------------- command line


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mnemo", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("backend", ["postgres"])  # the command line opens PostgreSQL ($POSTGRES_URI)
async def test_cli_export_entitle_erase_on_postgres(store, uri, backend, user, tmp_path):
    await fill(store, user)
    env = {**os.environ, "POSTGRES_URI": uri}
    env.pop("MNEMO_URL", None)
    out = tmp_path / "export.json"
    done = cli("export", "u_zhou", "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text("utf-8"))
    assert set(NOTES) == {n["text"] for n in doc["notes"]} and doc["profile"]["city"]["value"] == "杭州"

    done = cli("entitle", "u_zhou", "--tool", "remember_note", "--deny", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rules"]["tool:remember_note"]["allowed"] is False
    assert not (await aadmit(store, user, "remember_note"))["allowed"]
    assert (await alist_audit(store, user))[-1]["source"] == "admin"

    assert cli("erase", "u_zhou", env=env).returncode == 2  # nothing without --yes
    assert len(await alist_notes(store, user)) == 3
    done = cli("erase", "u_zhou", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["deleted"]["notes"] == 3
    assert await alist_notes(store, user) == [] and await arecall(store, user, "peanuts") == []
