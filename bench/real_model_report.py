"""What ``python -m bench real-model`` read from its records and logs, and its report.

Each chat request mnemo sent, as the proxy recorded it (:func:`request_summary`:
how it asked for a structured answer and whether one could be read), the tally of
them, the dev server's warnings and llama-server's speeds, and the markdown of a
result (:func:`report`, what docs/bench.md shows).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bench.model_probe import answer_of, json_object
from bench.model_proxy import classify


def request_summary(record: dict[str, Any]) -> dict[str, Any]:
    """One recorded chat request: how it asked, what came back, whether a
    structured answer could be read from it (a call of the asked function
    with JSON object arguments, or a JSON object as the text)."""
    body = record["body"]
    way, name = classify(body)
    ok = record["status"] == 200
    got = answer_of(record["answer"], stream=bool(body.get("stream"))) if ok else {}
    calls = got.get("tool_calls", [])
    parsed, answer = None, None
    if way != "chat":
        objects = [json_object(a) for n, a in calls if name is None or n == name]
        answer = next((o for o in [*objects, json_object(got.get("content", ""))] if o is not None), None)
        parsed = ok and answer is not None
    return {
        "way": way,
        "schema": name,
        "status": record["status"],
        "stream": bool(body.get("stream")),
        "max_tokens": body.get("max_tokens", body.get("max_completion_tokens")),
        "tools_offered": [t["function"]["name"] for t in body.get("tools", [])],
        "tool_calls": [n for n, _ in calls],
        "finish_reason": got.get("finish_reason"),
        "completion_tokens": got.get("completion_tokens"),
        "structured_parsed": parsed,
        # What the model answered: what the write then kept of it is in "memory".
        "structured_answer": answer,
        "seconds": round(record["ended"] - record["started"], 2),
    }


def tally(summaries: list[dict[str, Any]]) -> dict[str, Any]:
    """Requests accepted, and structured answers parsed per way."""
    ways: dict[str, dict[str, int]] = {}
    for s in summaries:
        if s["way"] != "chat":
            w = ways.setdefault(s["way"], {"asked": 0, "parsed": 0})
            w["asked"] += 1
            w["parsed"] += bool(s["structured_parsed"])
    return {
        "requests": len(summaries),
        "accepted": sum(s["status"] == 200 for s in summaries),
        "with_max_tokens": sum(s["max_tokens"] is not None for s in summaries),
        "structured": ways,
    }


def plain_lines(log: str) -> list[str]:
    """The lines of ``./scripts/dev``'s output without their colour codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", log).splitlines()


def warning_lines(lines: list[str]) -> list[str]:
    """The WARNING and ERROR lines and tracebacks: structlog writes ``[warning  ]``
    (lower case), the standard library ``WARNING``."""
    return [line[:300] for line in lines if re.search(r"\b(warning|error)\b|Traceback", line, re.IGNORECASE)]


def llama_timings(log_text: str) -> dict[str, list[float]]:
    """llama-server's own speeds (tokens/s reading the prompt, writing the answer) per request."""
    found: dict[str, list[float]] = {"prompt_tokens_per_s": [], "eval_tokens_per_s": []}
    for line in log_text.splitlines():
        m = re.search(r"(prompt eval|\beval) time.*?([\d.]+) tokens per second", line)
        if m:
            found["prompt_tokens_per_s" if m.group(1) == "prompt eval" else "eval_tokens_per_s"].append(
                float(m.group(2))
            )
    return found


def report(result: dict[str, Any]) -> str:
    """The result as markdown (what docs/bench.md shows)."""

    lines = [
        "| direct request | HTTP | tool calls | JSON args | JSON text | fenced JSON text | finish | tokens | s |",
        "|---" * 9 + "|",
    ]
    for label, r in result["direct"].items():
        lines.append(
            f"| {label} | {r['status']} | {', '.join(r['tool_calls']) or '-'} | {r['call_args_json']} | "
            f"{r['content_json']} | {r.get('content_fenced_json')} | {r['finish_reason']} | "
            f"{r['completion_tokens']} | {r['seconds']} |"
        )
    req = result["requests"]
    lines += [
        "",
        f"mnemo's requests: {req['accepted']}/{req['requests']} accepted (HTTP 200), "
        f"{req['with_max_tokens']} with max_tokens",
    ]
    for way, w in req["structured"].items():
        lines.append(f"- structured by {way}: {w['parsed']}/{w['asked']} answers parsed")
    talk = result["conversation"]
    if talk is not None:
        lines += ["", "| turn | run | s | load average (1/5/15 min) at its end |", "|---|---|---|---|"]
        lines += [
            f"| {t['said']} | {t['status']} | {t['seconds']} | {' / '.join(map(str, t.get('load', [])))} |"
            for t in talk["turns"]
        ]
        stored = talk["stored_after_thread_one"]
        lines += [
            "",
            f"stored after thread one: profile {stored['profile']}, notes {stored['notes']}; facts {stored['facts']}",
            f"reached thread two's prompt: {talk['reached']} ({talk['second_thread_prompts']} prompt(s))",
        ]
    lines.append(f"server WARNING/ERROR lines: {len(result['server_warnings'])}")
    for name, case in result.get("cases", {}).items():
        lines += ["", case_report(name, case)]
    if result["doctor"] is not None:
        lines.append(f"doctor: exit {result['doctor']['exit_code']} in {result['doctor']['seconds']} s")
    return "\n".join(lines)


def case_report(name: str, case: dict[str, Any]) -> str:
    """One case as markdown lines."""
    if "error" in case:
        return f"{name}: failed: {case['error'].splitlines()[-1]}"
    if name == "consolidate":
        result = case.get("result") or {}
        return "\n".join(
            [
                f"consolidate: exit {case['exit_code']} in {case['seconds']} s (load {case['load']}); "
                f"{result.get('model_calls')} model call(s), seeded {[s['status'] for s in case['seeded']]}",
                f"- merged: {json.dumps(result.get('merged'), ensure_ascii=False)}",
                f"- contradictions: {json.dumps(result.get('contradictions'), ensure_ascii=False)}",
                f"- notes after: {json.dumps(case['notes_after'], ensure_ascii=False)}",
            ]
        )
    agent, direct = case["through_agent"], case["direct"]
    calls = [c for r in agent["requests"] for c in r["tool_calls"]]
    return "\n".join(
        [
            f"rewrite through the agent: run {agent['turn']['status']} in {agent['turn']['seconds']} s "
            f"(load {agent['turn']['load']}); tool calls {calls}; tool results {agent['tool_results']}",
            f"- instructions after: {json.dumps(agent['instructions_after'], ensure_ascii=False)[:600]}",
            f"rewrite directly (alearn_for_user): {json.dumps(direct['result'], ensure_ascii=False)[:600]} "
            f"in {direct['seconds']} s (load {direct['load']})",
        ]
    )
