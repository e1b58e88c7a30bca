"""mnemo.profile.record, backend-independent cases. Merge, forget, provenance, no-op
writes and concurrent updates run on every backend in tests/stores/conformance/test_memory.py."""

import pytest

from mnemo import InvalidInputError, User, aget_profile, aupdate_profile
from mnemo.profile.record import format_profile, normalize_field


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
    assert normalize_field("response_style", "Bullet points") == "bullets"
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


def test_the_extractor_schema_has_one_field_per_profile_field():
    from mnemo.profile.record import PROFILE_FIELDS
    from mnemo.writing.extraction import MemoryExtraction

    assert len(PROFILE_FIELDS) == 4
    assert set(PROFILE_FIELDS) <= set(MemoryExtraction.model_fields)
    schema = MemoryExtraction.model_json_schema()
    assert set(schema["properties"]["forget_fields"]["items"]["enum"]) == set(PROFILE_FIELDS)
    extraction = MemoryExtraction(name="Ann", response_style="concise")
    assert extraction.profile_changes() == {"name": "Ann", "city": None, "language": None, "response_style": "concise"}


async def test_a_correction_replaces_the_value_and_keeps_the_old_one_in_history(store, user):
    await aupdate_profile(store, user, {"city": "Hangzhou"})
    await aupdate_profile(store, user, {"city": "Beijing"})  # "I moved to Beijing"
    city = (await aget_profile(store, user))["city"]
    assert city["value"] == "Beijing"
    assert [h["value"] for h in city["history"]] == ["Hangzhou"] and city["history"][0]["until"] == city["updated_at"]


async def test_history_keeps_every_former_value_up_to_its_cap(store, user):
    from mnemo.profile.record import MAX_HISTORY

    cities = [f"City{i}" for i in range(MAX_HISTORY + 3)]
    for city in cities[:3]:
        await aupdate_profile(store, user, {"city": city})
    history = (await aget_profile(store, user))["city"]["history"]
    assert [h["value"] for h in history] == cities[:2]  # oldest first, none dropped
    for city in cities[3:]:
        await aupdate_profile(store, user, {"city": city})
    entry = (await aget_profile(store, user))["city"]
    assert entry["value"] == cities[-1]
    assert [h["value"] for h in entry["history"]] == cities[-1 - MAX_HISTORY : -1]  # the last MAX_HISTORY


async def test_what_the_user_said_outranks_what_was_inferred(store, user):
    await aupdate_profile(store, user, {"city": "Hangzhou"}, source="inferred")
    assert await aupdate_profile(store, user, {"city": "Suzhou"}, source="user_said")  # stated beats inferred
    assert await aupdate_profile(store, user, {"city": "Shanghai"}, source="inferred") == []
    assert (await aget_profile(store, user))["city"]["value"] == "Suzhou"


async def test_a_late_writer_never_overwrites_a_field_updated_after_its_messages(store, user):
    from mnemo.core.reads import now_iso

    said_earlier = now_iso()  # the messages a background writer reads were said now...
    await aupdate_profile(store, user, {"city": "Beijing"})  # ...and the user corrected the city after that
    late = await aupdate_profile(store, user, {"city": "Hangzhou", "name": "Zhou"}, as_of=said_earlier)
    assert late == [{"field": "name", "before": None, "after": "Zhou"}]  # the untouched field is still written
    assert (await aget_profile(store, user))["city"]["value"] == "Beijing"


def test_the_profile_block_lists_each_field_quoted_in_a_fixed_order():
    from mnemo.core.quoting import quote
    from mnemo.profile.record import PROFILE_FIELDS

    entry = {"source": "user_said", "first_seen": "2026-03-04T10:00:00+00:00"}
    profile = {"city": {"value": "杭州"} | entry, "name": {"value": "Zhou"} | entry | {"source": "inferred"}}
    assert PROFILE_FIELDS.index("name") < PROFILE_FIELDS.index("city")
    assert format_profile(profile) == (
        f"- name: {quote('Zhou')}  ({quote('inferred 2026-03-04')})\n"
        f"- city: {quote('杭州')}  ({quote('said 2026-03-04')})"
    )
    assert format_profile({}) == "(no profile yet: nothing is known about this user; do not guess)"
    partial = {"name": {}}  # written around mnemo: shown empty, never invented
    assert format_profile(partial) == f"- name: {quote('')}  ({quote('inferred')})"  # no source: never the user's
    # A language's code with its name (issue 55, the fourth blind set: "es" alone; any language's since the sixth);
    # an unknown code alone.
    spanish = {"language": {"value": "es"} | entry}
    assert format_profile(spanish) == f"- language: {quote('es')} (Spanish)  ({quote('said 2026-03-04')})"
    assert format_profile({"language": {"value": "pt"} | entry}).startswith(
        f"- language: {quote('pt')} (Portuguese)  ("
    )
    assert format_profile({"language": {"value": "klingonish"} | entry}).startswith(
        f"- language: {quote('klingonish')}  ("
    )


def test_field_checks_at_their_edges_and_what_they_say():
    from mnemo.profile.record import MAX_FIELD_CHARS, PROFILE_FIELDS

    assert normalize_field("city", "x" * MAX_FIELD_CHARS) == "x" * MAX_FIELD_CHARS
    with pytest.raises(InvalidInputError) as exc:
        normalize_field("city", "x" * (MAX_FIELD_CHARS + 1))
    assert str(exc.value) == f"profile field 'city' is {MAX_FIELD_CHARS + 1} characters; the limit is {MAX_FIELD_CHARS}"
    with pytest.raises(InvalidInputError) as exc:
        normalize_field("password", "x")
    assert str(exc.value) == f"unknown profile field 'password'; known: {', '.join(PROFILE_FIELDS)}"
    with pytest.raises(InvalidInputError) as exc:
        normalize_field("name", 42)
    assert str(exc.value) == "profile field 'name' takes a string, got int"
    with pytest.raises(InvalidInputError, match="profile field 'name'"):
        normalize_field("name", "a\x00b")
    assert normalize_field("response_style", "Long answers, please") == "detailed"  # a word inside a sentence


async def test_an_entry_keeps_when_it_was_first_seen_and_where_each_value_came_from(store, user):
    await aupdate_profile(store, user, {"city": "Paris"}, source="inferred")
    first = (await aget_profile(store, user))["city"]
    assert (first["source"], first["first_seen"], "history" in first) == ("inferred", first["updated_at"], False)
    await aupdate_profile(store, user, {"city": "Lyon"}, source="tool")
    await aupdate_profile(store, user, {"city": "Nice"})  # the default: the user said it
    entry = (await aget_profile(store, user))["city"]
    assert (entry["value"], entry["source"], entry["first_seen"]) == ("Nice", "user_said", first["first_seen"])
    assert [(h["value"], h["source"]) for h in entry["history"]] == [("Paris", "inferred"), ("Lyon", "tool")]
    assert await aupdate_profile(store, user, {"city": "Nice"}) == []  # the same value: nothing written
    forgotten = await aupdate_profile(store, user, {"name": None}, forget=["city", "language"])
    assert forgotten == [{"field": "city", "before": "Nice", "after": None}]  # only what there was
    assert await aget_profile(store, user) == {}


async def test_each_field_is_decided_on_its_own(store, user):
    from mnemo.core.reads import now_iso

    await aupdate_profile(store, user, {"name": "Ann", "city": "Paris"}, source="inferred")
    assert await aupdate_profile(store, user, {"name": "Anna"}, source="inferred") == [  # an inference replaces one
        {"field": "name", "before": "Ann", "after": "Anna"}
    ]
    await aupdate_profile(store, user, {"name": "Zoe"})
    # One field skipped (stated beats inferred) does not stop the next one.
    assert await aupdate_profile(store, user, {"name": "Bea", "language": "English"}, source="inferred") == [
        {"field": "language", "before": None, "after": "en"}
    ]
    stamp = (await aget_profile(store, user))["name"]["updated_at"]
    # Written at the very moment of the messages: not after them, so a late writer may still update it.
    assert await aupdate_profile(store, user, {"name": "Cleo"}, as_of=stamp) == [
        {"field": "name", "before": "Zoe", "after": "Cleo"}
    ]
    later = now_iso()
    await aupdate_profile(store, user, {"name": "Dora"})
    late = await aupdate_profile(store, user, {"name": "Eve", "city": "Lyon"}, as_of=later)
    assert late == [{"field": "city", "before": "Paris", "after": "Lyon"}]  # the skipped name stops nothing
    gone = await aupdate_profile(store, user, {}, forget=["name", "city"])
    assert [c["field"] for c in gone] == ["name", "city"]
    with pytest.raises(InvalidInputError) as exc:
        await aupdate_profile(store, user, {"name": "X"}, source="model")
    assert str(exc.value) == "source must be one of ('user_said', 'tool', 'inferred', 'app'), got 'model'"


async def test_a_stored_item_that_is_no_profile_field_is_not_read_as_one(store, user):
    await store.aput(user.namespace("profile"), "password", {"value": "hunter2"}, index=False)
    assert await aget_profile(store, user) == {}


async def test_what_an_application_set_and_what_the_user_says_the_later_one_wins_and_no_inference_replaces_either(
    store, user
):
    """The precedence of docs/memory.md: ``app`` and ``user_said`` rank alike
    (the later statement wins either way), ``inferred`` replaces neither, and
    the field keeps every value's provenance."""
    await aupdate_profile(store, user, {"city": "Hangzhou"}, source="app")
    assert await aupdate_profile(store, user, {"city": "Shanghai"}, source="inferred") == []
    await aupdate_profile(store, user, {"city": "Suzhou"}, source="user_said")  # the user moved, and said so
    entry = (await aget_profile(store, user))["city"]
    assert (entry["value"], entry["source"]) == ("Suzhou", "user_said")
    from mnemo.core.reads import now_iso

    said = now_iso()  # the user says something a background writer reads later...
    await aupdate_profile(store, user, {"city": "Ningbo"}, source="app")  # ...then the CRM's correction
    entry = (await aget_profile(store, user))["city"]
    assert (entry["value"], entry["source"]) == ("Ningbo", "app")
    assert [(h["value"], h["source"]) for h in entry["history"]] == [("Hangzhou", "app"), ("Suzhou", "user_said")]
    # The user's words from before the application's write do not undo it (as_of: when they were said).
    assert await aupdate_profile(store, user, {"city": "Wuxi"}, source="user_said", as_of=said) == []
