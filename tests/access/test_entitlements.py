"""Entitlements: tools the user may call, daily quotas, usage counted without lost updates."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness.scripted import tool_call
from mnemo import InvalidInputError, User, alist_notes
from mnemo.access.entitlements import (
    USAGE_TTL_MINUTES,
    aadmit,
    aavailable_tools,
    aclear_entitlement,
    aget_entitlements,
    aset_entitlement,
    ausage_today,
    today,
)
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from tests.agent_harness import say

ADMIN = Origin(source="admin", actor="admin_1")
TOOLS = ["remember_note", "recall_notes", "forget_note", "search_policy"]


async def test_no_record_means_every_tool_and_no_quota(store, user):
    assert await aget_entitlements(store, user) == {}
    assert await aavailable_tools(store, user, TOOLS) == TOOLS
    for _ in range(3):
        assert (await aadmit(store, user, "remember_note"))["allowed"]
    assert await ausage_today(store, user) == {"remember_note": 3}  # counted even without a quota


async def test_a_denied_tool_is_not_offered_not_admitted_not_counted(store, user):
    await aset_entitlement(store, user, "remember_note", allowed=False, origin=ADMIN)
    assert await aavailable_tools(store, user, TOOLS) == ["recall_notes", "forget_note", "search_policy"]
    decision = await aadmit(store, user, "remember_note")
    assert not decision["allowed"] and "not enabled" in decision["reason"]
    assert await ausage_today(store, user) == {}


async def test_deny_by_default_with_one_tool_allowed(store, user):
    await aset_entitlement(store, user, None, allowed=False, origin=ADMIN)
    await aset_entitlement(store, user, "search_policy", allowed=True, origin=ADMIN)
    assert await aavailable_tools(store, user, TOOLS) == ["search_policy"]
    assert not (await aadmit(store, user, "recall_notes"))["allowed"]
    assert not (await aadmit(store, user, "made_up_tool"))["allowed"]
    assert await aclear_entitlement(store, user, None, origin=ADMIN)
    assert await aavailable_tools(store, user, TOOLS) == TOOLS


async def test_per_tool_and_total_daily_limits(store, user):
    await aset_entitlement(store, user, "recall_notes", daily_limit=2, origin=ADMIN)
    assert [(await aadmit(store, user, "recall_notes"))["allowed"] for _ in range(3)] == [True, True, False]
    assert "recall_notes" not in await aavailable_tools(store, user, TOOLS)
    assert await ausage_today(store, user) == {"recall_notes": 2}  # the refused call left nothing behind
    await aset_entitlement(store, user, None, daily_limit=3, origin=ADMIN)
    assert (await aadmit(store, user, "search_policy"))["allowed"]
    assert await aavailable_tools(store, user, TOOLS) == []
    refused = await aadmit(store, user, "forget_note")
    assert not refused["allowed"] and "3 tool calls" in refused["reason"]


async def test_changes_are_audited_as_admin(store, user):
    await aset_entitlement(store, user, "recall_notes", daily_limit=5, origin=ADMIN)
    await aset_entitlement(store, user, "recall_notes", allowed=False, origin=ADMIN)
    records = await alist_audit(store, user)
    assert [(r["action"], r["target"], r["before"], r["after"], r["source"], r["actor"]) for r in records] == [
        ("entitlement.set", "tool:recall_notes", None, {"allowed": True, "daily_limit": 5}, "admin", "admin_1"),
        (
            "entitlement.set",
            "tool:recall_notes",
            {"allowed": True, "daily_limit": 5},
            {"allowed": False, "daily_limit": None},
            "admin",
            "admin_1",
        ),
    ]


async def test_bad_rules_are_refused_before_anything_is_written(store, user):
    for kwargs in ({"daily_limit": -1}, {"daily_limit": "5"}, {"daily_limit": True}):
        with pytest.raises(InvalidInputError, match="daily_limit"):
            await aset_entitlement(store, user, "recall_notes", origin=ADMIN, **kwargs)
    with pytest.raises(InvalidInputError, match="tool name"):
        await aset_entitlement(store, user, "", origin=ADMIN)
    assert await aget_entitlements(store, user) == {} and await alist_audit(store, user) == []


async def test_twenty_concurrent_calls_are_all_counted(admit_at_once):
    assert await admit_at_once("recall_notes") == 20


async def test_concurrent_calls_never_exceed_the_quota(store, user, admit_at_once):
    admitted = await admit_at_once("recall_notes", daily_limit=5)
    assert admitted <= 5
    # Once the race is over, what is left of the quota is usable.
    while admitted < 5:
        assert (await aadmit(store, user, "recall_notes"))["allowed"]
        admitted += 1
    assert not (await aadmit(store, user, "recall_notes"))["allowed"]


# --------------------------------------------------------------------------- through the graph


async def test_the_model_is_offered_only_allowed_tools(agent, model, store):  # noqa: F811
    await aset_entitlement(store, User.of("u_zhou"), "remember_note", allowed=False, origin=ADMIN)
    await say(agent, "hello")
    chat_calls = [c for c in model.calls if "MemoryExtraction" not in c["tool_names"]]
    assert chat_calls and set(chat_calls[0]["tool_names"]) == {
        "recall_notes",
        "forget_note",
        "search_policy",
        "mark_resolved",
        "improve_instructions",
    }


async def test_a_denied_call_never_runs_the_tool(agent, model, store, script):  # noqa: F811
    user = User.of("u_zhou")
    call = tool_call("remember_note", text="The user is allergic to peanuts.")
    steps = iter([call, AIMessage(content="Sorry, I cannot save notes for you.")])
    script.chat = lambda messages: next(steps)
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    await aset_entitlement(store, user, "remember_note", allowed=False, origin=ADMIN)
    out = await say(agent, "Remember that I'm allergic to peanuts.")
    (reply,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert reply.tool_call_id == call.tool_calls[0]["id"] and reply.status == "error"
    assert "not enabled" in reply.content
    # The tool's side effect did not happen; the denial took nothing, so the writing read the
    # user's words as if no tool had run (mnemo.writing.pipeline.tool_took): their allergy, quoted.
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user said: “I'm allergic to peanuts.”"]
    assert await ausage_today(store, user) == {}

    # The control: once allowed, the same call runs (its note is the one kept already: a duplicate).
    await aset_entitlement(store, user, "remember_note", allowed=True, origin=ADMIN)
    steps = iter([tool_call("remember_note", text="The user is allergic to peanuts."), AIMessage(content="Noted.")])
    out = await say(agent, "Remember that I'm allergic to peanuts.", thread="t2")
    (ran,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert ran.status != "error" and "remembered" in ran.content.lower()
    assert len(await alist_notes(store, user)) == 1
    assert await ausage_today(store, user) == {"remember_note": 1}


async def test_an_over_quota_call_never_runs_the_tool(agent, model, store, script):  # noqa: F811
    user = User.of("u_zhou")
    await aset_entitlement(store, user, "remember_note", daily_limit=1, origin=ADMIN)
    calls = [
        tool_call("remember_note", text="The user has a dog."),
        tool_call("remember_note", text="The user has a cat."),
    ]
    steps = iter([calls[0], calls[1], AIMessage(content="done")])
    script.chat = lambda messages: next(steps)
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    out = await say(agent, "Remember my pets: I have a dog and a cat.")
    replies = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [r.tool_call_id for r in replies] == [c.tool_calls[0]["id"] for c in calls]
    assert replies[0].status != "error" and replies[1].status == "error" and "limit of 1" in replies[1].content
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user has a dog."]


async def test_a_rule_mnemo_cannot_apply_fails_closed(store, user):
    """Written around the API's checks (raw store writes): a malformed rule
    under a rule key denies that tool; under another key it is ignored."""
    ns = user.namespace("entitlements")
    await store.aput(ns, "tool:recall_notes", {"allowed": "yes"}, index=False)
    await store.aput(ns, "tools", {"deny": []}, index=False)
    assert await aavailable_tools(store, user, TOOLS) == ["remember_note", "forget_note", "search_policy"]


# --------------------------------------------------------------------------- what is stored, exactly


class RecordingStore(InMemoryStore):
    """Keeps every write, to see how a usage item or a rule is stored."""

    def __init__(self, *, supports_ttl: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self._ttl = supports_ttl
        self.puts: list[PutOp] = []

    @property
    def supports_ttl(self) -> bool:  # type: ignore[override]
        return self._ttl

    async def abatch(self, ops):
        self.puts += [op for op in ops if isinstance(op, PutOp)]
        return await super().abatch(ops)


@pytest.mark.parametrize("supports_ttl", [True, False])
async def test_a_call_is_counted_in_one_unindexed_item_that_expires_where_it_can(index, user, supports_ttl):
    store = RecordingStore(supports_ttl=supports_ttl, index=index)
    origin = Origin(source="tool", thread_id="t-1", run_id="r-1")
    decision = await aadmit(store, user, "recall_notes", origin=origin)
    assert decision == {"allowed": True, "reason": "", "usage_key": decision["usage_key"]}
    (put,) = store.puts
    assert put.key == decision["usage_key"] and put.key.startswith(f"{today()}:recall_notes:")
    assert put.index is False and put.ttl == (USAGE_TTL_MINUTES if supports_ttl else None)
    assert put.value == {
        "tool": "recall_notes",
        "day": today(),
        "at": put.value["at"],
        "thread_id": "t-1",
        "run_id": "r-1",
    }
    assert datetime.fromisoformat(put.value["at"]).utcoffset() == timedelta(0)
    await aadmit(store, user, "recall_notes")  # no run: no thread or run recorded
    assert store.puts[-1].value["thread_id"] is None and store.puts[-1].value["run_id"] is None

    # Under a quota the same item is written, counted, and stays when admitted.
    await aset_entitlement(store, user, "recall_notes", daily_limit=5, origin=ADMIN)
    (rule_put,) = [op for op in store.puts if op.namespace == user.namespace("entitlements")]
    assert rule_put.key == "tool:recall_notes" and rule_put.index is False
    quota = await aadmit(store, user, "recall_notes")
    assert quota == {"allowed": True, "reason": "", "usage_key": store.puts[-1].key}


async def test_a_rule_records_who_set_it_and_when(store, user):
    before = datetime.now(UTC)
    rule = await aset_entitlement(store, user, "recall_notes", daily_limit=5, origin=ADMIN)
    assert rule["allowed"] is True and rule["daily_limit"] == 5 and rule["updated_by"] == "admin_1"
    assert before <= datetime.fromisoformat(rule["updated_at"]) <= datetime.now(UTC)
    assert (await aget_entitlements(store, user)) == {"tool:recall_notes": rule}


async def test_clearing_a_rule_removes_that_rule_only_and_is_audited(store, user):
    await aset_entitlement(store, user, None, daily_limit=9, origin=ADMIN)
    await aset_entitlement(store, user, "recall_notes", allowed=False, origin=ADMIN)
    assert not await aclear_entitlement(store, user, "forget_note", origin=ADMIN)  # none to clear
    assert await aclear_entitlement(store, user, "recall_notes", origin=ADMIN)
    assert list(await aget_entitlements(store, user)) == ["*"]
    last = (await alist_audit(store, user))[-1]
    assert (last["action"], last["target"], last["before"], last["after"]) == (
        "entitlement.clear",
        "tool:recall_notes",
        {"allowed": False, "daily_limit": None},
        None,
    )


async def test_a_rule_written_around_mnemo_is_read_only_when_mnemo_can_apply_it(store, user, caplog):
    ns = user.namespace("entitlements")
    await store.aput(ns, "*", {"deny": []}, index=False)  # first, and unusable: denies every tool, not the end
    await store.aput(ns, "bogus_rule", {"allowed": False, "daily_limit": None}, index=False)  # not a rule key
    await store.aput(ns, "tool:recall_notes", {"allowed": True, "daily_limit": -1}, index=False)
    await store.aput(ns, "tool:x", {"allowed": True, "daily_limit": 0}, index=False)  # a one-letter tool
    stamped = {"allowed": True, "daily_limit": 2, "updated_at": "2026-01-01T00:00:00+00:00", "updated_by": "ops"}
    await store.aput(ns, "tool:search_policy", stamped, index=False)
    assert await aget_entitlements(store, user) == {
        "*": {"allowed": False, "daily_limit": None, "updated_at": "", "updated_by": None},
        "tool:recall_notes": {"allowed": False, "daily_limit": None, "updated_at": "", "updated_by": None},
        "tool:x": {"allowed": True, "daily_limit": 0, "updated_at": "", "updated_by": None},
        "tool:search_policy": stamped,
    }
    logged = [r.getMessage() for r in caplog.records if r.name == "mnemo.access.entitlements"]
    assert logged == [
        "unusable entitlement '*' of u_zhou: an entitlement rule is {'allowed': bool, 'daily_limit': int | None}, "
        "got {'deny': []}",
        "unusable entitlement 'bogus_rule' of u_zhou: an entitlement key is '*' or 'tool:<name>', got 'bogus_rule'",
        "unusable entitlement 'tool:recall_notes' of u_zhou: daily_limit is a non-negative integer or None, got -1",
    ]


async def test_only_todays_calls_count(store, user):
    yesterday = datetime.now(UTC) - timedelta(days=1)
    usage = {"tool": "recall_notes", "day": today(yesterday), "at": yesterday.isoformat()}
    await store.aput(user.namespace("usage"), "old", usage | {"thread_id": None, "run_id": None}, index=False)
    assert await ausage_today(store, user) == {}
    assert await ausage_today(store, user, now=yesterday) == {"recall_notes": 1}
    assert today(datetime(2026, 3, 4, 23, 59, tzinfo=UTC)) == "2026-03-04"


@pytest.mark.parametrize("zone", ["Etc/GMT-14", "Etc/GMT+12"])  # together, always another date than UTC's
async def test_the_day_is_the_utc_day_in_any_local_time_zone(store, user, monkeypatch, zone):
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        utc_day = datetime.now(UTC).strftime("%Y-%m-%d")
        assert today() == utc_day
        await aadmit(store, user, "recall_notes")
        assert await ausage_today(store, user) == {"recall_notes": 1}
        rule = await aset_entitlement(store, user, "recall_notes", daily_limit=3, origin=ADMIN)
        assert datetime.fromisoformat(rule["updated_at"]).utcoffset() == timedelta(0)
    finally:
        monkeypatch.undo()
        time.tzset()


async def test_a_tool_with_its_quota_unused_is_offered(store, user):
    await aset_entitlement(store, user, "recall_notes", daily_limit=1, origin=ADMIN)
    assert await aavailable_tools(store, user, TOOLS) == TOOLS
    await aadmit(store, user, "recall_notes")
    assert await aavailable_tools(store, user, TOOLS) == ["remember_note", "forget_note", "search_policy"]


async def test_refusals_tell_the_model_what_to_say(store, user):
    await aset_entitlement(store, user, "forget_note", allowed=False, origin=ADMIN)
    await aset_entitlement(store, user, "recall_notes", daily_limit=0, origin=ADMIN)
    assert await aadmit(store, user, "forget_note") == {
        "allowed": False,
        "reason": "The tool 'forget_note' is not enabled for this user; nothing was done. "
        "Tell the user it is not available to them.",
    }
    assert await aadmit(store, user, "recall_notes") == {
        "allowed": False,
        "reason": "The daily limit of 0 calls of 'recall_notes' for this user is used up; nothing was done. "
        "Tell the user it can be used again tomorrow (UTC).",
    }
    await aset_entitlement(store, user, None, daily_limit=0, origin=ADMIN)
    assert await aadmit(store, user, "search_policy") == {
        "allowed": False,
        "reason": "The daily limit of 0 tool calls for this user is used up; nothing was done. "
        "Tell the user tools can be used again tomorrow (UTC).",
    }
