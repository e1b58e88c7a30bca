"""mnemo's model server behind a recording proxy, for the benchmarks through ``./scripts/dev``.

:class:`RecordingProxy` forwards every request to the model server and keeps it
with its answer; :func:`started_mnemo` starts ``./scripts/dev`` in a copy of the
project (the e2e harness, ``harness/devserver.py``) with the ``.env`` a user of that
server writes (:func:`mnemo_settings`), pointed at the proxy. Used by
``python -m bench real-model`` and ``memory-quality``.
"""

from __future__ import annotations

import asyncio
import http.client
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from bench.model_probe import json_object
from harness.stub_openai import system_text


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

    async def wait_idle(self, quiet_s: float, cap_s: float, poll_s: float = 1.0) -> None:
        """Until no request has been in flight for ``quiet_s`` (a write after the run
        ends first), ``cap_s`` at most."""
        deadline = time.monotonic() + cap_s
        while self.idle_for() < quiet_s and time.monotonic() < deadline:
            await asyncio.sleep(poll_s)

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


def reply_prompts(records: list[dict[str, Any]], since: float) -> list[str]:
    """System prompts of the agent's own chat calls (not memory work) begun after ``since``:
    each call's system messages joined, in order (the agent's prompt is in several)."""
    return [
        system_text(r["body"])
        for r in records
        if r["started"] >= since
        and r["body"].get("messages")
        and r["body"]["messages"][0].get("role") == "system"
        and classify(r["body"])[0] == "chat"
    ]


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
    from harness.devserver import DevServer, copy_project, server_environment, write_dotenv

    workdir = copy_project(tmp / "mnemo")
    write_dotenv(workdir, SimpleNamespace(base_url=proxy.base_url), **settings)  # type: ignore[arg-type]
    server = DevServer(workdir, server_environment())
    server.start()
    return server, workdir


async def run_to_end(client: Any, thread_id: str, text: str, context: dict[str, Any], poll_s: float = 1.0) -> str:
    """One run of the agent on ``text`` in ``thread_id``, polled until it ends; its
    status (polled: a join would hit the client's read timeout on a slow model)."""
    run = await client.runs.create(
        thread_id, "agent", context=context, input={"messages": [{"role": "user", "content": text}]}
    )
    while (status := (await client.runs.get(thread_id, run["run_id"]))["status"]) in ("pending", "running"):
        await asyncio.sleep(poll_s)
    return str(status)
