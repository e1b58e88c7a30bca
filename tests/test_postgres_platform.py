"""`langgraph dev --config langgraph.postgres.json`: the agent's memory in PostgreSQL.

Two servers on two ports start at the same time from one project copy and
share one embedded PostgreSQL (``MNEMO_PGDATA``): the first to get there runs
``initdb`` and starts it, the other attaches; ``setup()`` is serialised. A
memory written through one server is recalled through the other, through the
agent and through the store API; the rows are really in PostgreSQL; TTLs work
through the platform API; the database server stops with the last process
that uses it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import pytest
from langgraph_sdk import get_client

from tests.stub_openai import StubServer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("MNEMO_SKIP_POSTGRES") == "1", reason="MNEMO_SKIP_POSTGRES=1"),
]

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevServer:
    def __init__(self, workdir: Path, env: dict[str, str]):
        self.workdir, self.env, self.port, self.proc = workdir, env, free_port(), None
        self.logfile = workdir / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def launch(self) -> None:
        self.log = open(self.logfile, "w")
        self.proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--config", "langgraph.postgres.json", "--port", str(self.port),
             "--host", "127.0.0.1", "--no-browser", "--no-reload"],
            cwd=self.workdir, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"langgraph dev exited:\n{self.output()}")
            try:
                if httpx.get(f"{self.url}/ok", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"langgraph dev did not start:\n{self.output()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # graceful: the store context exits
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.proc:
            self.log.close()

    def output(self, tail: int = 6000) -> str:
        self.log.flush()
        return self.logfile.read_text()[-tail:]


@pytest.fixture
def stub():
    with StubServer() as server:
        yield server


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name in ("graphs", "nodes", "mnemo"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "langgraph.postgres.json", tmp_path / "langgraph.postgres.json")
    return tmp_path


@pytest.fixture
def pgdata(tmp_path: Path) -> Path:
    return tmp_path / "shared-pgdata"


@pytest.fixture
def server_env(stub, pgdata) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_")) and k != "POSTGRES_URI"}
    env.update(
        OPENAI_BASE_URL=stub.base_url,
        OPENAI_API_KEY="stub-key",
        MNEMO_MODEL="openai:stub-model",
        MNEMO_PGDATA=str(pgdata),
        LANGSMITH_TRACING="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        PYTHONPATH=str(ROOT),
    )
    return env


def system_prompts(stub: StubServer) -> list[str]:
    return [r["messages"][0]["content"] for r in stub.requests
            if r["messages"][0]["role"] == "system" and not any(
                t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))]


async def chat(client, text: str, *, user_id: str) -> dict:
    thread_id = (await client.threads.create())["thread_id"]
    run = await client.runs.create(thread_id, "agent", input={"messages": [{"role": "user", "content": text}]},
                                   context={"user_id": user_id})
    await client.runs.join(thread_id, run["run_id"])
    return await client.runs.get(thread_id, run["run_id"])


def postmaster(pgdata: Path):
    """The running server of ``pgdata``, or None (registers nothing)."""
    from mnemo.pgserver import server_info

    return server_info(pgdata)


async def test_two_servers_share_one_postgres_store(workdir, server_env, stub, pgdata):
    from mnemo import user_label

    a, b = DevServer(workdir, server_env), DevServer(workdir, server_env)
    a.launch()
    b.launch()  # at the same time: one initdb, one setup(), no race
    try:
        a.wait_ready()
        b.wait_ready()
        ca, cb = get_client(url=a.url), get_client(url=b.url)

        # Through the agent: learned on A, known on B.
        run = await chat(ca, "Hi, I'm Zhou and I live in Hangzhou.", user_id="zhou.wang@x.com")
        assert run["status"] == "success", a.output()
        run = await chat(cb, "How long does delivery to my city take?", user_id="zhou.wang@x.com")
        assert run["status"] == "success", b.output()
        assert "city: Hangzhou" in system_prompts(stub)[-1]

        # Through the store API: written on B, found by meaning on A.
        label = user_label("zhou.wang@x.com")
        await cb.store.put_item([label, "notes"], "n1", {"id": "n1", "text": "The user is allergic to peanuts.",
                                                         "updated_at": "2026-01-01T00:00:00+00:00"})
        hits = (await ca.store.search_items([label, "notes"], query="what food allergies do I have?", limit=3))["items"]
        assert hits[0]["key"] == "n1" and hits[0]["score"] > 0.8

        # A time-bound memory through the platform API: gone for both once expired.
        await ca.store.put_item(["u_ttl", "now"], "order", {"text": "asking about order 42"}, ttl=1 / 60)
        assert len((await cb.store.search_items(["u_ttl", "now"], refresh_ttl=False))["items"]) == 1
        await asyncio.sleep(1.5)
        assert (await cb.store.search_items(["u_ttl", "now"]))["items"] == []

        # It is PostgreSQL: the rows are there for any client.
        info = postmaster(pgdata)
        assert info is not None
        with psycopg.connect(info.get_uri(database="mnemo")) as conn:
            keys = {k for (k,) in conn.execute("SELECT key FROM store WHERE prefix = %s", (f"{label}.profile",))}
        assert keys == {"name", "city"}

        for server in (a, b):  # the server flags blocking calls on its event loop
            assert "BlockingError" not in server.output(tail=10**7)
    finally:
        a.stop()
        assert postmaster(pgdata) is not None, "stopped while server B still used it"
        b.stop()
    deadline = time.monotonic() + 15
    while postmaster(pgdata) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert postmaster(pgdata) is None, "the embedded PostgreSQL outlived the last server using it"
