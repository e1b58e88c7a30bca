import asyncio

import pytest

from mnemo import InvalidInputError, User, aget_profile, aupdate_profile
from mnemo.profile import format_profile, normalize_field


async def test_merge_never_clobbers_fields_not_mentioned(store, user):
    await aupdate_profile(store, user, {"name": "小周", "city": "杭州"})
    await aupdate_profile(store, user, {"response_style": "别啰嗦", "city": None, "name": "not mentioned"})
    profile = await aget_profile(store, user)
    assert {f: e["value"] for f, e in profile.items()} == {"name": "小周", "city": "杭州", "response_style": "concise"}


async def test_forget_a_field_removes_only_that_field(store, user):
    await aupdate_profile(store, user, {"name": "Ann", "city": "Paris"})
    diff = await aupdate_profile(store, user, {}, forget=["city"])
    assert diff == [{"field": "city", "before": "Paris", "after": None}]
    assert set(await aget_profile(store, user)) == {"name"}


async def test_provenance_is_kept_and_first_seen_survives_changes(store, user):
    await aupdate_profile(store, user, {"city": "Paris"}, source="user_said")
    first = (await aget_profile(store, user))["city"]
    await asyncio.sleep(0.01)
    await aupdate_profile(store, user, {"city": "Lyon"}, source="tool")
    after = (await aget_profile(store, user))["city"]
    assert after["value"] == "Lyon" and after["source"] == "tool"
    assert after["first_seen"] == first["first_seen"]
    assert after["updated_at"] > first["updated_at"]


async def test_nothing_is_written_when_nothing_changed(store, user):
    await aupdate_profile(store, user, {"city": "Paris"})
    before = store.search(user.namespace("profile"))[0].updated_at
    diff = await aupdate_profile(store, user, {"city": " Paris "})
    assert diff == []
    assert store.search(user.namespace("profile"))[0].updated_at == before


async def test_concurrent_updates_of_different_fields_both_survive(store, user):
    # Two turns in two threads of the same user, interleaved at every await.
    await asyncio.gather(
        aupdate_profile(store, user, {"name": "Ann"}),
        aupdate_profile(store, user, {"city": "Paris"}),
        aupdate_profile(store, user, {"language": "English"}),
    )
    profile = await aget_profile(store, user)
    assert {f: e["value"] for f, e in profile.items()} == {"name": "Ann", "city": "Paris", "language": "en"}


async def test_invalid_values_are_rejected_before_any_write(store, user):
    with pytest.raises(InvalidInputError, match="limit"):
        await aupdate_profile(store, user, {"name": "ok", "city": "x" * 500})
    with pytest.raises(InvalidInputError, match="unknown profile field"):
        await aupdate_profile(store, user, {"password": "x"})
    with pytest.raises(InvalidInputError, match="response_style"):
        await aupdate_profile(store, user, {"response_style": "sarcastic"})
    assert await aget_profile(store, user) == {}


def test_normalisation():
    assert normalize_field("response_style", "Please be BRIEF") == "concise"
    assert normalize_field("response_style", "详细一点") == "detailed"
    assert normalize_field("language", "中文") == "zh"
    assert normalize_field("language", "English") == "en"
    assert normalize_field("city", "  New   York ") == "New York"
    assert normalize_field("city", "未提及") is None


def test_empty_profile_is_said_explicitly():
    assert "no profile yet" in format_profile({})


async def test_users_are_isolated(store):
    await aupdate_profile(store, User.of("a"), {"name": "A"})
    assert await aget_profile(store, User.of("b")) == {}


async def test_profile_refuses_text_no_backend_can_store(store, user):
    with pytest.raises(InvalidInputError, match="NUL"):
        await aupdate_profile(store, user, {"name": "a\x00b"})
