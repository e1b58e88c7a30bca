"""Export, erase, audit and usage counting on every backend (the conformance
suite's stores: in-memory, the embedded PostgreSQL and the platform's store of
``langgraph dev``), and the command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import psycopg
import pytest
from langgraph.store.base import PutOp

from mnemo import User, alist_notes, arecall, aremember, aremember_many, aupdate_profile
from mnemo.access.entitlements import aadmit, aget_entitlements, aset_entitlement, ausage_today
from mnemo.access.privacy import ERASE_PASSES, aerase_user, aexport_user
from mnemo.core.errors import ListingChangedError
from mnemo.kinds.audit import Origin, alist_audit
from tests.store_backends import ROOT, RacingWriter
from tests.test_store_conformance import backend, platform_dir, store, uri  # noqa: F401  (fixtures)

ADMIN = Origin(source="admin", actor="admin_1")
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


async def test_export_holds_everything_of_the_user_and_nothing_else(store, user):
    other = User.of("someone_else")
    await fill(store, user)
    await aremember(store, other, "The other user likes jazz.")
    ns = user.namespace("notes")
    await store.abatch(
        [
            PutOp(
                ns,
                f"k{i:03d}",
                {"id": f"k{i:03d}", "text": f"fact {i}", "updated_at": f"2026-01-01T{i:06d}"},
                index=False,
            )
            for i in range(120)
        ]
    )  # past every page size
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
    with pytest.raises(ListingChangedError, match="still being written"):
        await aerase_user(racing, user, origin=ADMIN)
    assert racing.writes == ERASE_PASSES
    assert "erase" not in [r["action"] for r in await alist_audit(store, user)]


# --------------------------------------------------------------------------- concurrency


async def test_concurrent_writes_lose_no_audit_record(store, user):
    await asyncio.gather(*(aremember(store, user, f"The user owns item number {i}.") for i in range(20)))
    assert len(await alist_audit(store, user)) == 20


async def test_twenty_concurrent_tool_calls_count_twenty(store, user):
    decisions = await asyncio.gather(*(aadmit(store, user, "search_policy") for _ in range(20)))
    assert all(d["allowed"] for d in decisions)
    assert await ausage_today(store, user) == {"search_policy": 20}


async def test_concurrent_calls_never_exceed_a_quota(store, user):
    await aset_entitlement(store, user, "search_policy", daily_limit=5, origin=ADMIN)
    decisions = await asyncio.gather(*(aadmit(store, user, "search_policy") for _ in range(20)))
    admitted = sum(d["allowed"] for d in decisions)
    assert admitted <= 5
    assert sum((await ausage_today(store, user)).values()) == admitted


# --------------------------------------------------------------------------- command line


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mnemo", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


async def test_cli_export_entitle_erase_on_postgres(store, uri, backend, user, tmp_path):
    if backend != "postgres":
        pytest.skip("the command line opens PostgreSQL ($POSTGRES_URI)")
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
