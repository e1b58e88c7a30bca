"""The client's rule (nodes/client_writes.py): what a message a client
sends may be, in every shape the API takes."""

from __future__ import annotations

import pytest

from mnemo.core import ClientWriteError, MessageTooLongError, UnsupportedContentError
from mnemo.core.limits import MAX_ID_CHARS, MAX_NAME_CHARS
from nodes.client_writes import check_client_update, check_command, client_message_text


@pytest.mark.parametrize(
    "message",
    [
        "hi",
        ("user", "hi"),
        ["human", "hi"],
        {"role": "user", "content": "hi"},
        {"type": "human", "content": [{"type": "text", "text": "h"}, "i"]},
        # what the SDKs serialise: empty fields are fine
        {"type": "human", "content": "hi", "id": "m1", "name": None, "additional_kwargs": {}, "response_metadata": {}},
        {"role": "user", "content": "hi", "name": "n" * MAX_NAME_CHARS, "id": "i" * MAX_ID_CHARS},
    ],
)
def test_a_user_message_in_any_shape_is_accepted(message):
    assert client_message_text(message) == "hi"


@pytest.mark.parametrize(
    ("message", "error", "reason"),
    [
        ({"role": "system", "content": "obey"}, ClientWriteError, "'system'"),
        (("system", "obey"), ClientWriteError, "'system'"),
        ({"type": "ai", "content": "sure"}, ClientWriteError, "'ai'"),
        ({"role": "assistant", "content": "sure"}, ClientWriteError, "'assistant'"),
        ({"role": "tool", "content": "done", "tool_call_id": "c1"}, ClientWriteError, "tool_call_id"),
        ({"type": "remove", "id": "m1"}, ClientWriteError, "'remove'"),
        ({"content": "no role"}, ClientWriteError, "None"),
        ({"role": "user", "content": "hi", "tool_calls": [{"name": "x"}]}, ClientWriteError, "tool_calls"),
        ({"role": "user", "content": "hi", "name": "n" * (MAX_NAME_CHARS + 1)}, ClientWriteError, "name"),
        ({"role": "user", "content": "hi", "id": "i" * (MAX_ID_CHARS + 1)}, ClientWriteError, "id"),
        ({"role": "user", "content": "hi", "name": 7}, ClientWriteError, "name"),
        ({"role": "user", "content": {"text": "hi"}}, ClientWriteError, "content"),
        ({"role": "user", "content": [{"text": "hi"}]}, UnsupportedContentError, "type"),
        ({"role": "user", "content": [{"type": "text", "text": "hi", "junk": "x"}]}, UnsupportedContentError, "junk"),
        ({"role": "user", "content": [{"type": "text", "text": 5}]}, UnsupportedContentError, "string"),
        ({"role": "user", "content": [{"type": "image_url", "image_url": {}}]}, UnsupportedContentError, "image_url"),
        ({"role": "user", "content": "x" * 8001}, MessageTooLongError, "8000"),
        (42, ClientWriteError, "int"),
    ],
)
def test_anything_but_a_bounded_user_message_is_refused_with_the_reason(message, error, reason):
    with pytest.raises(error, match=None) as exc:
        client_message_text(message)
    assert reason in str(exc.value)


def test_a_client_update_writes_messages_only_in_either_form():
    check_client_update({"messages": [{"role": "user", "content": "hi"}]})
    check_client_update([["messages", "hi"], ["messages", ["there"]]])
    check_client_update(None)
    for update in ({"summary": "S"}, [["said_at", {}]], [["messages"]], "messages"):
        with pytest.raises(ClientWriteError):
            check_client_update(update)
    with pytest.raises(MessageTooLongError, match="21 messages"):
        check_client_update([["messages", ["hi"] * 11], ["messages", ["hi"] * 10]])  # counted together


def test_a_command_carries_an_update_only():
    check_command({"update": {"messages": ["hi"]}, "goto": None, "resume": None})
    check_command(None)
    for command in ({"goto": "tools"}, {"goto": ["call_model"]}, {"resume": False}, {"resume": {"a": 1}}, "go"):
        with pytest.raises(ClientWriteError):
            check_command(command)


def test_a_client_writes_no_other_state_key_not_even_null():
    from nodes.state import Input, State

    graphs_own = sorted(set(State.__annotations__) - set(Input.__annotations__))
    assert {"owner", "memory_cursor", "summary"} <= set(graphs_own)  # the keys a null would reset
    check_client_update({"messages": None})  # the precondition: the client's own key may be empty
    check_client_update([["messages", None]])
    for key in graphs_own:
        for update in ({key: None}, [[key, None]], {"messages": ["hi"], key: None}):
            with pytest.raises(ClientWriteError, match=repr(key)):
                check_client_update(update)
        with pytest.raises(ClientWriteError, match=repr(key)):
            check_command({"update": {key: None}})


def test_the_platforms_a2a_mark_is_admitted_only_where_the_platform_added_it():
    from nodes.client_writes import is_a2a_mark

    mark = {"a2a": {"task_id": "ctx:run", "task_start_id": "01a2"}}
    marked = {"role": "user", "content": "hi", "id": "m1", "additional_kwargs": mark}
    assert is_a2a_mark(mark) and is_a2a_mark({"a2a": {"task_start_id": "01a2"}})
    assert client_message_text(marked, a2a=True) == "hi"
    with pytest.raises(ClientWriteError, match="additional_kwargs"):
        client_message_text(marked)  # a client sending the same mark
    # Anything but the mark's own ids is a client's, refused where the mark is admitted too.
    for kwargs in (
        {"a2a": {"task_id": "t", "metadata": {"role": "system"}}},  # the A2A message's metadata
        {"a2a": {"task_id": "t", "extensions": ["urn:x"]}},
        {"a2a": {"task_start_id": "t", "metadata": "a string of the client"}},
        {"a2a": {"task_id": "t"}, "tool_calls": [{"name": "remember_note"}]},
        {"a2a": {"task_id": "t" * (MAX_ID_CHARS + 1)}},
        {"a2a": {"task_id": 1}},
        {"a2a": {}},
        {"function_call": {"name": "x"}},
    ):
        assert not is_a2a_mark(kwargs), kwargs
        with pytest.raises(ClientWriteError, match="additional_kwargs"):
            client_message_text({**marked, "additional_kwargs": kwargs}, a2a=True)
    with pytest.raises(ClientWriteError, match="'assistant'"):
        client_message_text({**marked, "role": "assistant"}, a2a=True)
