"""How ``python -m bench real-model`` reads what a model server answered (the
check itself needs the local model and runs on demand only; how its weights are
got: tests/models/test_local_weights.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.model_probe import answer_of, fenced_json
from bench.real_model import results_name
from bench.real_model_cases import tool_call_examples
from bench.real_model_report import llama_timings, request_summary, tally

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


def test_smollm2_keeps_its_results_file_and_another_model_gets_its_own():
    assert results_name("smollm2-135m") == "real_model.json"
    assert results_name("qwen2.5-1.5b") == "real_model_qwen2.5-1.5b.json"


def test_a_tool_call_written_as_a_fenced_block_is_told_from_a_real_call():
    offered = {"tools": [{"function": {"name": "remember_note"}}], "messages": [{"role": "user", "content": "hi"}]}
    fenced = _completion({"content": 'Sure.\n```json\n{"name": "remember_note", "arguments": {"text": "x"}}\n```'})
    called = _completion({"tool_calls": [{"function": {"name": "remember_note", "arguments": '{"text": "x"}'}}]})
    plain = _completion({"content": "Hello! How can I help?"})
    forced = {**offered, "tool_choice": "required"}
    records = [_record(offered, plain), _record(offered, called), _record(forced, fenced), _record(offered, fenced)]
    examples = tool_call_examples(records)
    assert len(examples) == 3  # the forced call is structured output, not the agent's turn
    assert examples[0]["fenced_json_in_text"] == {"name": "remember_note", "arguments": {"text": "x"}}
    assert [e["called_a_tool"] for e in examples] == [False, True, False]
    assert examples[0]["request"] == offered and examples[1]["answer"]["tool_calls"] == [
        ("remember_note", '{"text": "x"}')
    ]
    assert fenced_json("no block here") is None and fenced_json("```\n[1, 2]\n```") is None


def test_the_servers_speeds_are_read_from_its_log():
    log = (
        "prompt eval time =    1234.50 ms /   100 tokens (   12.35 ms per token,    81.00 tokens per second)\n"
        "       eval time =    2000.00 ms /    20 tokens (  100.00 ms per token,    10.00 tokens per second)\n"
        "      total time =    3234.50 ms /   120 tokens\n"
    )
    assert llama_timings(log) == {"prompt_tokens_per_s": [81.0], "eval_tokens_per_s": [10.0]}


def test_only_picks_parts_of_the_run_by_name():
    from bench.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["real-model"]).only == ("conversation", "consolidate", "rewrite")
    args = parse(["real-model", "--model", "qwen2.5-1.5b", "--only", "consolidate, rewrite"])
    assert args.only == ("consolidate", "rewrite") and args.model == "qwen2.5-1.5b"
    with pytest.raises(SystemExit):
        parse(["real-model", "--only", "consolidate,dream"])


def test_the_dev_servers_warnings_are_counted_whatever_their_case_and_colour():
    from bench.real_model_report import plain_lines, warning_lines

    log = (
        "\x1b[2m2026-12-04T14:07:14Z\x1b[0m [\x1b[33m\x1b[1mwarning  \x1b[0m] "
        "\x1b[1mmemory extraction: 1 profile value(s)\n"
        "2026-12-04T14:07:15Z [info     ] HTTP Request: POST /v1/chat/completions 200\n"
        "WARNING:root:old style\n"
        "Traceback (most recent call last):\n"
    )
    found = warning_lines(plain_lines(log))
    assert found == [
        "2026-12-04T14:07:14Z [warning  ] memory extraction: 1 profile value(s)",
        "WARNING:root:old style",
        "Traceback (most recent call last):",
    ]
