"""The audit trail: every memory write appends one record, concurrent writes lose none."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage
from langgraph.store.base import PutOp

from harness.scripted import tool_call
from mnemo import User, aforget, aremember, aremember_many, aupdate_profile
from mnemo.audit import Origin, audit_op, averify
from mnemo.audit.chain import alist_audit, digest, sealed_key
from mnemo.writing.apply import aapply_extraction
from mnemo.writing.extraction import MemoryExtraction
from tests.agent_harness import say


def summary(records):
    return [(r["action"], r["target"], r["before"], r["after"], r["source"]) for r in records]


async def test_profile_changes_are_recorded_with_before_and_after(store, user):
    await aupdate_profile(store, user, {"city": "Paris", "name": "Ann"})
    await aupdate_profile(store, user, {"city": "Lyon"}, source="tool")
    await aupdate_profile(store, user, {"city": "Lyon"})  # unchanged: nothing written, nothing recorded
    await aupdate_profile(store, user, {}, forget=["name"], origin=Origin(source="admin", actor="root"))
    records = await alist_audit(store, user)
    # Records of one batch share a time; their order among themselves is not promised.
    assert sorted(summary(records[:2])) == [
        ("profile.set", "city", None, "Paris", "user_said"),
        ("profile.set", "name", None, "Ann", "user_said"),
    ]
    assert summary(records[2:]) == [
        ("profile.set", "city", "Paris", "Lyon", "tool"),
        ("profile.delete", "name", "Ann", None, "admin"),
    ]
    assert records[-1]["actor"] == "root" and records[0]["thread_id"] is None
    assert [r["id"] for r in records] == sorted(r["id"] for r in records)


async def test_note_add_refine_forget_are_recorded_and_duplicates_are_not(store, user):
    first = (await aremember(store, user, "用户养了两只猫。"))["note"]
    await aremember(store, user, "用户养了两只猫。")  # duplicate: recency only
    await aremember(store, user, "用户养了两只猫，叫咪咪和花花。")  # refines
    await aforget(store, user, note_id=first["id"], origin=Origin(source="tool", thread_id="t9", run_id="r9"))
    records = await alist_audit(store, user)
    assert [(r["action"], r["target"]) for r in records] == [
        ("note.add", first["id"]),
        ("note.refine", first["id"]),
        ("note.forget", first["id"]),
    ]
    assert records[1]["before"] == "用户养了两只猫。" and "咪咪" in records[1]["after"]
    assert "咪咪" in records[2]["before"] and records[2]["after"] is None
    assert (records[2]["source"], records[2]["thread_id"], records[2]["run_id"]) == ("tool", "t9", "r9")
    assert [r["source"] for r in records[:2]] == ["user_said", "user_said"]  # as said, no origin given


async def test_the_audit_record_is_written_in_the_same_batch_as_the_change(counting_store, user):
    await aupdate_profile(counting_store, user, {"city": "Paris"})
    # the listing with the chain's head, then one batch: the field, its record, the new head
    assert counting_store.trips == 2
    counting_store.trips = 0
    await aremember(counting_store, user, "Likes tea.")
    assert counting_store.trips == 2  # duplicate lookups with the chain's head, then one batch
    assert len(await alist_audit(counting_store, user)) == 2


async def test_extraction_is_recorded_as_the_extractor(store, user):
    extraction = MemoryExtraction(city="Hangzhou", notes=["The user is allergic to peanuts."])
    await aapply_extraction(store, user, extraction, origin=Origin(source="extractor", thread_id="t1", run_id="r1"))
    records = await alist_audit(store, user)
    assert {(r["action"], r["source"], r["thread_id"], r["run_id"]) for r in records} == {
        ("profile.set", "extractor", "t1", "r1"),
        ("note.add", "extractor", "t1", "r1"),
    }


async def test_concurrent_writes_lose_no_record(store, user):
    texts = [f"The user owns item number {i}." for i in range(20)]
    await asyncio.gather(*(aremember_many(store, user, [t]) for t in texts))
    records = await alist_audit(store, user)
    assert len(records) == 20 and len({r["id"] for r in records}) == 20


def test_an_unknown_source_is_refused():
    from mnemo import InvalidInputError

    with pytest.raises(InvalidInputError, match="source"):
        Origin(source="model")


# --------------------------------------------------------------------------- through the graph


async def test_graph_writes_carry_the_runs_thread_and_run_ids(agent, model, store, script):  # noqa: F811
    steps = iter([tool_call("remember_note", text="The user has two cats."), AIMessage(content="Noted.")])
    script.chat = lambda messages: next(steps)
    await say(agent, "Remember I have two cats. I live in Hangzhou.", thread="t7", config={"run_id": "run-7"})
    records = await alist_audit(store, User.of("u_zhou"))
    by_action = {(r["action"], r["source"]): r for r in records}
    assert set(by_action) == {("note.add", "tool"), ("profile.set", "extractor")}
    for record in records:
        assert (record["thread_id"], record["run_id"]) == ("t7", "run-7")


# --------------------------------------------------------------------------- the chain


async def chained_trail(store, user) -> list:
    await aupdate_profile(store, user, {"city": "Paris"})
    await aremember(store, user, "The user likes green tea.")
    await aupdate_profile(store, user, {"city": "Lyon"})
    await aupdate_profile(store, user, {"name": "Ann"})
    return await alist_audit(store, user)


async def test_each_record_carries_the_digest_of_the_one_before(store, user):
    records = await chained_trail(store, user)
    assert [r["seq"] for r in records] == [1, 2, 3, 4]
    assert records[0]["prev"] == "" and [r["prev"] for r in records[1:]] == [digest(r) for r in records[:-1]]
    check = await averify(store, user)
    assert check["ok"] and check["problems"] == [] and check["records"] == 4 and check["head"] == digest(records[-1])


async def test_a_record_from_a_clock_behind_chains_by_its_number_not_its_time(store, user):
    """Two servers' clocks differ: a record written later under an earlier
    time still follows the head it read (none passed: it is read first), and
    the trail verifies in the order of the chain."""
    from mnemo.audit import abatch_audited

    origin = Origin(source="admin", actor="root")
    await abatch_audited(store, [audit_op(user, origin, "profile.set", "city", after="Paris")])
    behind = audit_op(user, origin, "profile.set", "city", before="Paris", after="Lyon")
    assert behind.value is not None
    behind.value["at"] = "2000-01-01T00:00:00+00:00"
    await abatch_audited(store, [behind])
    records = await alist_audit(store, user)  # oldest first by time: the later record first
    assert [(r["seq"], r["after"]) for r in records] == [(2, "Lyon"), (1, "Paris")]
    assert records[0]["prev"] == digest(records[1])
    check = await averify(store, user)
    assert check["ok"] and check["problems"] == [] and check["siblings"] == 0 and check["head"] == digest(records[0])


def _forged(user, *, seq: int, prev: str, at: str) -> PutOp:
    op = audit_op(user, Origin(source="admin", actor="mallory"), "profile.set", "city", after="Nowhere")
    record = {**(op.value or {}), "at": at, "seq": seq, "prev": prev}
    record["id"] = sealed_key(record)
    return PutOp(op.namespace, record["id"], record, index=False)


@pytest.mark.parametrize("tamper", ["delete", "delete_and_forge_earlier", "alter", "slip_in", "drop_last"])
async def test_verify_finds_a_trail_tampered_with(store, user, tamper):
    records = await chained_trail(store, user)
    ns = user.namespace("audit")
    assert (await averify(store, user))["ok"]  # precondition: the untouched trail holds
    if tamper in ("delete", "delete_and_forge_earlier"):
        await store.adelete(ns, records[1]["id"])
    if tamper == "delete_and_forge_earlier":  # in its place, a record chained right, with an earlier time
        await store.abatch([_forged(user, seq=2, prev=digest(records[0]), at="2020-01-01T00:00:00+00:00")])
    if tamper == "alter":
        await store.aput(ns, records[2]["id"], {**records[2], "after": "Nowhere"}, index=False)
    if tamper == "slip_in":
        await store.abatch([_forged(user, seq=0, prev="", at="2020-01-01T00:00:00+00:00")])
    if tamper == "drop_last":
        await store.adelete(ns, records[-1]["id"])
    check = await averify(store, user)
    assert not check["ok"] and check["problems"]
    expected = {
        "delete": "missing",
        "delete_and_forge_earlier": "missing",
        "alter": "does not match its key",
        "slip_in": "not in the chain",
        "drop_last": "records removed",
    }[tamper]
    assert any(expected in problem for problem in check["problems"]), check["problems"]


async def test_concurrent_writes_chain_as_siblings_and_verify(store, user):
    await asyncio.gather(*(aremember_many(store, user, [f"The user owns item number {i}."]) for i in range(10)))
    check = await averify(store, user)
    assert check["records"] == 10 and check["ok"], check["problems"]


async def test_writes_after_the_turn_chain_with_the_head_read_among_their_reads(counting_store, user):
    for city, note in [("Paris", "The user likes green tea."), ("Lyon", "The user keeps goats.")]:
        counting_store.trips = 0
        await aapply_extraction(counting_store, user, MemoryExtraction(city=city, notes=[note]))
        assert counting_store.trips == 2  # the reads with the chain's head, then the writes
    records = await alist_audit(counting_store, user)
    assert [r["seq"] for r in records] == [1, 2, 3, 4]
    assert [r["prev"] for r in records[1:]] == [digest(r) for r in records[:-1]]
    assert (await averify(counting_store, user))["ok"]


async def test_an_erase_starts_a_new_chain_that_verifies(store, user):
    from mnemo.access import aerase_user

    await chained_trail(store, user)
    await aerase_user(store, user, origin=Origin(source="admin", actor="root"))
    (record,) = await alist_audit(store, user)
    assert (record["action"], record["seq"], record["prev"]) == ("erase", 1, "")
    assert (await averify(store, user))["ok"]


def test_audit_verify_command_on_postgres(pg, cached_index, monkeypatch, capsys):
    """``python -m mnemo audit verify``: exit 0 on the trail as written, 1 once
    a record was deleted behind mnemo's back (here: in the database itself)."""
    import json

    import psycopg

    from harness.store_backends import truncate
    from mnemo.cli import main
    from mnemo.stores.factory import open_store

    monkeypatch.setenv("POSTGRES_URI", pg.uri)
    user = User.of("u_audited")

    async def seed() -> list:
        async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
            await truncate(pg.uri)
            return await chained_trail(store, user)

    records = asyncio.run(seed())
    assert main(["audit", "verify", "u_audited"]) == 0
    check = json.loads(capsys.readouterr().out)
    assert check["ok"] and check["records"] == 4
    with psycopg.connect(pg.uri, autocommit=True) as conn:
        conn.execute("DELETE FROM store WHERE prefix = %s AND key = %s", ("u_audited.audit", records[1]["id"]))
    assert main(["audit", "verify", "u_audited"]) == 1
    check = json.loads(capsys.readouterr().out)
    assert not check["ok"] and check["records"] == 3 and "missing" in check["problems"][0]


# --------------------------------------------------------------------------- the record and the check, exactly


def test_the_origin_of_a_graph_write_comes_from_its_config():
    config = {"configurable": {"thread_id": "t1"}, "metadata": {"run_id": "r1"}}
    assert Origin.from_config(config, "tool") == Origin(source="tool", thread_id="t1", run_id="r1")
    top = {"configurable": {"thread_id": 7, "run_id": ""}, "metadata": None, "run_id": "r2"}
    assert Origin.from_config(top, "extractor") == Origin(source="extractor", thread_id="7", run_id="r2")
    assert Origin.from_config(None, "tool") == Origin(source="tool")
    assert Origin.from_config({"configurable": None, "metadata": {"thread_id": ""}}, "tool") == Origin(source="tool")


def test_a_digest_is_of_canonical_json_and_a_key_of_the_utc_time():
    import hashlib
    from datetime import UTC, datetime

    assert digest({"id": "ignored", "b": "猫", "a": 1}) == hashlib.sha256('{"a": 1, "b": "猫"}'.encode()).hexdigest()
    assert digest({"a": datetime(2026, 3, 4, tzinfo=UTC)}) == digest({"a": "2026-03-04 00:00:00+00:00"})
    record = {"at": "2026-03-04T10:00:00.123456+02:00", "x": 1}
    assert sealed_key(record) == f"20260304T080000123456Z-{digest(record)[:24]}"


def test_a_key_is_the_utc_time_in_any_server_zone(monkeypatch):
    import time

    record = {"at": "2026-03-04T10:00:00.123456+02:00", "x": 1}
    monkeypatch.setenv("TZ", "Etc/GMT-5")
    time.tzset()
    try:
        assert sealed_key(record).startswith("20260304T080000123456Z-")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_only_a_record_under_the_key_its_content_seals_is_sealed():
    from mnemo.audit.chain import is_sealed

    op = audit_op(User.of("u1"), Origin(source="admin", actor="root"), "profile.set", "city", after="Paris")
    assert op.value is not None and is_sealed(op.key, op.value)
    assert not is_sealed(op.key, "a string")
    assert not is_sealed(op.key, {**op.value, "after": "Lyon"})
    assert not is_sealed("k", {**op.value, "id": "k", "at": "not a time"})
    assert not is_sealed(op.key, {"id": op.key})  # no time at all


def test_an_audit_write_is_one_unindexed_record_sealed_by_its_key():
    from datetime import datetime, timedelta

    user = User.of("u1")
    op = audit_op(user, Origin(source="tool", thread_id="t", run_id="r"), "note.add", "n1", after="x")
    assert op.namespace == user.namespace("audit") and op.index is False and op.value is not None
    record = op.value
    assert record["id"] == op.key == sealed_key(record)
    assert datetime.fromisoformat(record["at"]).utcoffset() == timedelta(0)
    assert len(record["nonce"]) == 16 and int(record["nonce"], 16) >= 0
    assert {k: record[k] for k in ("seq", "prev", "action", "target", "before", "after", "source", "actor")} == {
        "seq": 0,
        "prev": "",
        "action": "note.add",
        "target": "n1",
        "before": None,
        "after": "x",
        "source": "tool",
        "actor": None,
    }
    assert (record["thread_id"], record["run_id"]) == ("t", "r")


async def test_chained_records_and_the_head_are_written_unindexed(index, user):
    from langgraph.store.memory import InMemoryStore

    class Recording(InMemoryStore):
        puts: list = []

        async def abatch(self, ops):
            self.puts = [*self.puts, *(op for op in ops if isinstance(op, PutOp))]
            return await super().abatch(ops)

    store = Recording(index=index)
    await aupdate_profile(store, user, {"city": "Paris"})
    (record,) = [op for op in store.puts if op.namespace == user.namespace("audit")]
    (head,) = [op for op in store.puts if op.namespace == (user.label, "audit_head")]
    assert record.index is False and head.index is False
    assert head.value == {"seq": 1, "digest": digest(record.value), "id": record.key}


async def test_verify_reports_exactly_what_is_wrong(store, user):
    assert await averify(store, user) == {
        "user_label": user.label,
        "records": 0,
        "head": "",
        "ok": True,
        "problems": [],
        "siblings": 0,
    }
    records = await chained_trail(store, user)
    ns = user.namespace("audit")
    sibling = _forged(user, seq=4, prev=digest(records[2]), at=records[3]["at"])  # written at the same instant
    await store.abatch([sibling])
    check = await averify(store, user)
    assert (check["ok"], check["siblings"], check["records"]) == (True, 1, 5)

    await store.adelete(ns, records[1]["id"])
    outside = {**(sibling.value or {}), "at": "2020-01-01T00:00:00+00:00", "after": "Elsewhere"}
    del outside["seq"]
    outside["id"] = sealed_key(outside)
    await store.aput(ns, outside["id"], outside, index=False)  # no place in the chain at all
    await store.aput((user.label, "audit_head"), "head", {"seq": 9, "digest": "f" * 64}, index=False)
    check = await averify(store, user)
    assert check["problems"] == [
        f"record {outside['id']!r}: not in the chain (written around mnemo)",
        f"record {records[2]['id']!r}: the record before it (#2) is missing or altered",
        "the chain head names record #9, which is not there: records removed",
    ]
    assert (check["ok"], check["records"], check["head"], check["siblings"]) == (False, 5, "f" * 64, 1)
    await store.adelete((user.label, "audit_head"), "head")  # no head at all, records left
    assert (await averify(store, user))["problems"][-1] == (
        "the chain head names record #0, which is not there: records removed"
    )


def test_concurrent_writes_after_the_turn_verify_on_postgres(pg, cached_index, monkeypatch, capsys):
    """Writes that interleave in PostgreSQL (extractions, profile updates,
    the tools' notes) leave a chain ``python -m mnemo audit verify`` accepts."""
    import json

    from harness.store_backends import truncate
    from mnemo.cli import main
    from mnemo.stores.factory import open_store

    monkeypatch.setenv("POSTGRES_URI", pg.uri)
    user = User.of("u_busy")

    async def write_concurrently() -> None:
        async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
            await truncate(pg.uri)
            await aupdate_profile(store, user, {"name": "Ann"})  # a chain to extend
            extractions = [
                MemoryExtraction.model_validate({"city": f"City {i}", "notes": [f"The user owns item number {i}."]})
                for i in range(6)
            ]
            await asyncio.gather(
                *(aapply_extraction(store, user, e) for e in extractions),
                *(aupdate_profile(store, user, {"language": lang}) for lang in ("English", "French", "German")),
                *(aremember_many(store, user, [f"The user visited place number {i}."]) for i in range(3)),
            )

    asyncio.run(write_concurrently())
    assert main(["audit", "verify", "u_busy"]) == 0
    check = json.loads(capsys.readouterr().out)
    assert check["ok"] and check["records"] >= 1 + 6 * 2 + 3, check
