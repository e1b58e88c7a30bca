"""bench.prompt_cache: the figures from a server's own timings, on answers
shaped as llama.cpp's server sends them (a JSON body; a stream whose last
chunk carries them)."""

from __future__ import annotations

import json

from bench.prompt_cache import add_cache_figures, cache_figures, kind_of, timed_requests, timings_of

RULES = {"role": "system", "content": "You are mnemo"}


def answer(prompt_n: int, cache_n: int, prompt_ms: float = 1000.0, stream: bool = False) -> str:
    timings = {"prompt_n": prompt_n, "cache_n": cache_n, "prompt_ms": prompt_ms, "predicted_per_token_ms": 100.0}
    if not stream:
        return json.dumps({"choices": [], "timings": timings})
    chunks = [{"choices": [{"delta": {"content": "hi"}}]}, {"choices": [], "timings": timings}]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def record(body: dict, text: str) -> dict:
    return {"path": "/v1/chat/completions", "body": body, "answer": text}


FIRST = {"messages": [RULES, {"role": "system", "content": "memory"}, {"role": "user", "content": "hi"}]}
WARM = {"messages": [RULES, {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
EXTRACT = {"messages": [RULES], "response_format": {"type": "json_schema", "json_schema": {"name": "X"}}}
SUMMARY = {"messages": [{"role": "system", "content": "You maintain the running summary"}]}


def test_timings_are_read_from_a_body_and_from_a_streams_last_chunk():
    assert timings_of(answer(10, 90))["cache_n"] == 90
    assert timings_of(answer(3, 7, stream=True))["prompt_n"] == 3
    assert timings_of('{"choices": []}') is None and timings_of("not json") is None


def test_requests_are_told_apart_by_what_they_carry():
    assert [kind_of(b) for b in (FIRST, WARM, EXTRACT, SUMMARY)] == ["first", "warm", "memory", "memory"]


def test_the_figures_count_read_and_reused_tokens_per_request():
    records = [
        record(FIRST, answer(400, 600)),  # a new thread: 40 % read
        record(WARM, answer(100, 900, prompt_ms=2000.0, stream=True)),
        record(EXTRACT, answer(500, 500)),
        {"path": "/v1/models", "body": {}, "answer": "{}"},  # not a chat request
        record(WARM, '{"choices": []}'),  # no timings: not counted
    ]
    timed = timed_requests(records)
    assert [r["kind"] for r in timed] == ["first", "warm", "memory"]
    got = cache_figures(timed)
    assert got["timed_requests"] == 3 and got["prompt_tokens_per_request"] == 1000.0
    assert got["prompt_reused_share"] == round(2000 / 3000, 3)
    assert got["new_thread_evaluated_share"] == 0.4 == got["new_thread_evaluated_share_max"]
    assert got["warm_ttft_p50_s"] == 2.1  # 2,000 ms reading the prompt, then one token of 100 ms
    figures = add_cache_figures({"all": {"all": {"profile_accuracy": 1.0}}}, timed)
    assert figures["all"]["all"]["prompt_reused_share"] == got["prompt_reused_share"]
    assert figures["all"]["all"]["profile_accuracy"] == 1.0
    assert cache_figures([]) == {} and add_cache_figures({"all": {"all": {}}}, []) == {"all": {"all": {}}}
