"""Run `langgraph dev` from a test: a copy of the project in a temporary
directory (its own ``.langgraph_api/``), a free port, the stub model server."""

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

from tests.stub_openai import StubServer

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevServer:
    def __init__(self, workdir: Path, env: dict[str, str]):
        self.workdir, self.env, self.port, self.proc = workdir, env, free_port(), None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120) -> None:
        self.log = open(self.workdir / f"server-{self.port}.log", "w")
        self.proc = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--port", str(self.port), "--host", "127.0.0.1", "--no-browser", "--no-reload"],
            cwd=self.workdir, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
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
            os.killpg(self.proc.pid, signal.SIGINT)  # graceful: flushes the store to disk
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def output(self, tail: int = 4000) -> str:
        self.log.flush()
        return (self.workdir / f"server-{self.port}.log").read_text()[-tail:]


def copy_project(dest: Path) -> Path:
    """What `langgraph dev` needs to serve mnemo, copied to ``dest``."""
    for name in ("graphs", "nodes", "mnemo", "web"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "langgraph.json", dest / "langgraph.json")
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
    )
    return env
