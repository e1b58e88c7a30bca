"""bench/overhead_serve.py: what counts as the answer's first token in a ``messages`` stream."""

from __future__ import annotations

from langgraph_sdk.schema import StreamPart

from bench.overhead_serve import _answer_started

CALL = {"type": "ai", "content": "", "tool_calls": [{"name": "remember_note", "args": {}, "id": "c1"}]}


def test_the_first_token_is_the_first_text_of_an_ai_message_not_a_tool_call():
    assert _answer_started(StreamPart("messages/partial", [{"type": "ai", "content": "ok"}]))
    assert _answer_started(
        StreamPart("messages/complete", [{"type": "ai", "content": [{"type": "text", "text": "ok"}]}])
    )
    assert not _answer_started(StreamPart("messages/partial", [CALL]))
    assert not _answer_started(StreamPart("messages/partial", [{"type": "ai", "content": " "}]))
    tool = {"type": "tool", "content": "Will be remembered once this reply is sent", "name": "remember_note"}
    assert not _answer_started(StreamPart("messages/complete", [tool]))
    assert not _answer_started(StreamPart("messages/metadata", {"run_id": "r"}))
