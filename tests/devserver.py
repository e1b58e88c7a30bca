"""Run `langgraph dev` from a test: a copy of the project in a temporary
directory (its own ``.langgraph_api/``), a free port, the stub model server,
auth on with a test secret; :func:`client` gives an SDK client with a token."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from mnemo.tokens import SECRET_ENV, mint_token
from tests.stub_openai import StubServer

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
#: The signing secret of every test server (tests only; a server run by a
#: person gets its own, see scripts/dev).
TEST_SECRET = "mnemo-test-secret-" + "0123456789abcdef" * 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevServer:
    """One `langgraph dev` process on a free port, started from ``workdir``."""

    def __init__(self, workdir: Path, env: dict[str, str], *, config: str = "langgraph.json"):
        self.workdir, self.env, self.config = workdir, env, config
        self.port, self.proc = free_port(), None
        self.logfile = workdir / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def launch(self) -> None:
        self.log = open(self.logfile, "w")
        self.proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--config", self.config, "--port", str(self.port),
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

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)  # graceful: the store is flushed / closed
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


def copy_project(dest: Path) -> Path:
    """What `langgraph dev` needs to serve mnemo, copied to ``dest``."""
    for name in ("graphs", "nodes", "mnemo", "web", "server"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for config in ("langgraph.json", "langgraph.postgres.json"):
        shutil.copy(ROOT / config, dest / config)
    return dest


def server_environment(stub: StubServer) -> dict[str, str]:
    """This process's environment, with the stub as the model and nothing that leaves the machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LANGSMITH_", "LANGCHAIN_"))}
    env.update(
        OPENAI_BASE_URL=stub.base_url,
        OPENAI_API_KEY="stub-key",
        MNEMO_MODEL="openai:stub-model",
        LANGSMITH_TRACING="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        PYTHONPATH=str(ROOT),
        MNEMO_DEV_LOGIN="1",  # like ./scripts/dev: the console signs in by user id
    )
    env[SECRET_ENV] = TEST_SECRET
    return env


def token(user_id: str, *, admin: bool = False, **kwargs) -> str:
    """A token the test servers accept (see :func:`mnemo.tokens.mint_token`)."""
    return mint_token(user_id, secret=TEST_SECRET, role="admin" if admin else "user", **kwargs)


def client(server: DevServer, user_id: str, *, admin: bool = False):
    """An SDK client of ``server`` signed in as ``user_id``."""
    from langgraph_sdk import get_client

    return get_client(url=server.url, headers={"Authorization": f"Bearer {token(user_id, admin=admin)}"})


def system_prompts(stub: StubServer) -> list[str]:
    """System prompts of the chat calls the stub received (extraction calls left out)."""
    return [r["messages"][0]["content"] for r in stub.requests
            if r["messages"][0]["role"] == "system" and not any(
                t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))]


async def chat(client, text: str, *, user_id: str | None, thread_id: str | None = None) -> dict:
    """One run of the agent through the SDK, on a new thread unless given; returns the finished run."""
    if thread_id is None:
        thread_id = (await client.threads.create())["thread_id"]
    context = {} if user_id is None else {"user_id": user_id}
    run = await client.runs.create(thread_id, "agent", input={"messages": [{"role": "user", "content": text}]}, context=context)
    await client.runs.join(thread_id, run["run_id"])
    return await client.runs.get(thread_id, run["run_id"])
