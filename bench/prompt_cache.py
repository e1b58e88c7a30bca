"""How much of each prompt the model server read and how much it reused from
its cache (issue 55, point 3), from the server's own per-request ``timings``
(llama.cpp's server: ``prompt_n`` tokens read, ``cache_n`` reused,
``prompt_ms``, ``predicted_per_token_ms``), as the recording proxy of
:mod:`bench.model_proxy` kept them. A server that sends no timings (a hosted
API) gives no figures.

A request is the agent's **first** of a new thread (one user message, no
assistant or tool message yet), a **warm** one (any later chat call of a
thread), or **memory** work (extraction, summaries, rewrites). Time to first
token is the server's: reading the prompt, then one token (``prompt_ms +
predicted_per_token_ms``), with no queueing in front of it.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bench.model_proxy import classify
from harness.stub_openai import MEMORY_WORK


def timings_of(answer: str) -> dict[str, Any] | None:
    """The ``timings`` of a server's answer: a JSON body, or the last chunk of a stream that has them."""
    try:
        return dict(json.loads(answer)["timings"])
    except (ValueError, KeyError, TypeError):
        pass
    found = None
    for line in answer.splitlines():
        if line.startswith("data: {"):
            try:
                found = json.loads(line[len("data: ") :]).get("timings") or found
            except ValueError:
                continue
    return found


def kind_of(body: Mapping[str, Any]) -> str:
    """``first``, ``warm`` or ``memory`` (module docstring)."""
    messages = body.get("messages") or []
    first = str(messages[0].get("content", "")) if messages else ""
    if classify(dict(body))[0] != "chat" or first.startswith(MEMORY_WORK):
        return "memory"
    roles = [m.get("role") for m in messages]
    return "first" if roles.count("user") == 1 and not {"assistant", "tool"} & set(roles) else "warm"


def timed_requests(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One line per chat request the server answered with timings: its kind and its tokens."""
    out = []
    for r in records:
        if not str(r.get("path", "")).endswith("/chat/completions") or not (t := timings_of(r.get("answer", ""))):
            continue
        out.append(
            {
                "kind": kind_of(r.get("body") or {}),
                "prompt_n": int(t.get("prompt_n", 0)),
                "cache_n": int(t.get("cache_n", 0)),
                "first_token_ms": round(float(t.get("prompt_ms", 0)) + float(t.get("predicted_per_token_ms", 0)), 1),
            }
        )
    return out


def cache_figures(requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``prompt_tokens_per_request``, ``prompt_reused_share`` (reused over all prompt tokens),
    ``new_thread_evaluated_share`` (mean and max over first requests: read over their prompt)
    and ``warm_ttft_p50_s``; ``{}`` without timed requests."""
    if not requests:
        return {}
    sizes = [r["prompt_n"] + r["cache_n"] for r in requests]
    firsts = [r["prompt_n"] / (r["prompt_n"] + r["cache_n"]) for r in requests if r["kind"] == "first"]
    warm = [r["first_token_ms"] / 1000 for r in requests if r["kind"] == "warm"]
    return {
        "timed_requests": len(requests),
        "prompt_tokens_per_request": round(sum(sizes) / len(sizes), 1),
        "prompt_reused_share": round(sum(r["cache_n"] for r in requests) / sum(sizes), 3) if sum(sizes) else None,
        "new_thread_evaluated_share": round(statistics.fmean(firsts), 3) if firsts else None,
        "new_thread_evaluated_share_max": round(max(firsts), 3) if firsts else None,
        "warm_ttft_p50_s": round(statistics.median(warm), 2) if warm else None,
    }


def add_cache_figures(figures: dict[str, Any], requests: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``figures`` (:func:`bench.quality_score.score`'s) with :func:`cache_figures` under ``all.all``."""
    if requests and "all" in figures:
        figures["all"]["all"].update(cache_figures(requests))
    return figures
