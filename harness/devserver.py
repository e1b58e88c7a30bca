"""Run the server from a test exactly as the README tells a user to.

A copy of the project in a temporary directory (its own ``.langgraph_api/``
and ``.mnemo/``), a ``.env`` made from ``.env.example`` with the stub model's
key and base URL filled in, and ``./scripts/dev`` started there with its own
defaults (auto-reload and all); only the port and, for PostgreSQL, the config
are added, as a user would. The copy shares this checkout's ``.venv`` (a
symlink): ``scripts/_venv.sh`` sees an up-to-date install and installs nothing
(a stale one, this checkout's ``pyproject.toml`` edited, it reinstalls from
this checkout, never from the copy).

Auth is on, as it always is: the copy holds a development secret in
``.mnemo/jwt-secret`` (what ``./scripts/dev`` creates on a first start, here
with a value the tests know), so :func:`token` / :func:`client` can sign in.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from harness.stub_openai import MEMORY_WORK, StubServer, system_text
from mnemo.access.tokens import DEV_SECRET_PATH, mint_token

ROOT = Path(__file__).resolve().parents[1]

#: What a user's checkout holds that `./scripts/dev` needs.
PROJECT_DIRS = ("graphs", "nodes", "mnemo", "web", "server", "scripts")
PROJECT_FILES = (
    "langgraph.json",
    "langgraph.postgres.json",
    "pyproject.toml",
    "requirements-weights.txt",
    "README.md",
    ".env.example",
)

#: Lines of a server log that mean a turn lost its memory, or that the server
#: caught a blocking call on its event loop. Any of them fails a server test.
TROUBLE = re.compile(r"BlockingError|Blocking call to|load_memory failed|memory write failed")

#: The development secret of every test checkout (tests only; a person's
#: checkout gets a random one from ./scripts/dev).
TEST_SECRET = "mnemo-test-secret-" + "0123456789abcdef" * 2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(
    url: str, proc: subprocess.Popen[bytes], output: Callable[[], str], *, what: str, timeout: float
) -> None:
    """Until ``url`` answers 200 (asked every half second): a ``RuntimeError`` when
    ``proc`` exits first, a ``TimeoutError`` after ``timeout`` s, each with ``output()``.
    The servers of the tests and of the benchmarks (``bench.llama_server``) are awaited here."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited ({proc.returncode}):\n{output()}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{what} did not start in {timeout:g} s:\n{output()}")


class DevServer:
    """``./scripts/dev`` on a free port, started from ``workdir``; its log
    goes to a file beside (not inside) the watched project directory."""

    def __init__(self, workdir: Path, env: dict[str, str], *, config: str | None = None):
        self.workdir, self.env, self.config = workdir, env, config
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.logfile = workdir.parent / f"server-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def launch(self) -> None:
        self.log = open(self.logfile, "w")
        args = [str(self.workdir / "scripts" / "dev"), "--port", str(self.port)]
        if self.config:
            args += ["--config", self.config]
        # The start-up model check (one more request to the stub, at a moment no test controls) is
        # asked for by the tests of it only (tests/e2e/test_model_errors.py).
        env = {"MNEMO_DEV_MODEL_CHECK": "0", **self.env}
        self.proc = subprocess.Popen(
            args, cwd=self.workdir, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, timeout: float = 180) -> None:
        assert self.proc is not None, "launch() first"
        wait_ready(f"{self.url}/ok", self.proc, self.output, what="./scripts/dev", timeout=timeout)

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

    def console_url(self) -> str:
        """The console URL ``./scripts/dev`` printed, with this start's sign-in code."""
        m = re.search(r"(http://127\.0\.0\.1:\d+/ui#code=\S+)", self.output(tail=10**8))
        assert m, f"./scripts/dev printed no console URL:\n{self.output()}"
        return m.group(1)

    def dev_code(self) -> str:
        return self.console_url().split("#code=", 1)[1]

    def trouble(self) -> list[str]:
        """Log lines showing a blocking call or a turn that lost its memory."""
        return [line for line in self.output(tail=10**8).splitlines() if TROUBLE.search(line)]


def copy_project(dest: Path) -> Path:
    """A user's checkout of mnemo at ``dest`` (sharing this one's ``.venv``)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_DIRS:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    secret = dest / DEV_SECRET_PATH
    secret.parent.mkdir(mode=0o700)
    secret.write_text(TEST_SECRET)
    secret.chmod(0o600)
    return dest


def write_dotenv(workdir: Path, stub: StubServer, **extra: str) -> Path:
    """``.env`` from ``.env.example``, filled in as a user with an
    OpenAI-compatible server would: key, base URL, model; plus ``extra``."""
    values = {
        "OPENAI_API_KEY": "stub-key",
        "OPENAI_BASE_URL": stub.base_url,
        "MNEMO_MODEL": "openai:stub-model",
        "MNEMO_ALLOWED_MODELS": "openai:stub-model,openai:stub-assistant-model",
        **extra,
    }
    lines = []
    for line in (workdir / ".env.example").read_text().splitlines():
        name = line.split("=", 1)[0]
        lines.append(f"{name}={values.pop(name)}" if "=" in line and name in values else line)
    lines += [f"{k}={v}" for k, v in values.items()]
    path = workdir / ".env"
    path.write_text("\n".join(lines) + "\n")
    return path


def server_environment() -> dict[str, str]:
    """This process's environment less anything that would override the
    ``.env`` (a user's shell has none of the test runner's settings)."""
    prefixes = ("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "MNEMO_", "POSTGRES_URI", "VIRTUAL_ENV", "PYTHONPATH")
    return {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}


def token(user_id: str, *, admin: bool = False, **kwargs) -> str:
    """A token the test servers accept (see :func:`mnemo.access.tokens.mint_token`)."""
    return mint_token(user_id, secret=TEST_SECRET, role="admin" if admin else "user", **kwargs)


def cli(*args: str, url: str) -> subprocess.CompletedProcess:
    """``python -m mnemo *args`` against the server at ``url``, as an operator runs it: an
    admin token, as an app backend holds."""
    env = {**os.environ, "MNEMO_URL": url, "MNEMO_TOKEN": token("ops", admin=True)}
    return subprocess.run(
        [sys.executable, "-m", "mnemo", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def client(server: DevServer, user_id: str, *, admin: bool = False):
    """An SDK client of ``server`` signed in as ``user_id``."""
    from langgraph_sdk import get_client

    return get_client(url=server.url, headers={"Authorization": f"Bearer {token(user_id, admin=admin)}"})


def system_prompts(stub: StubServer) -> list[str]:
    """System prompts of the chat calls the stub received (extraction, summary
    and instruction-rewrite calls left out), each request's system messages joined."""
    return [
        system_text(r)
        for r in stub.requests
        if r["messages"][0]["role"] == "system"
        and not str(r["messages"][0]["content"]).startswith(MEMORY_WORK)
        and "response_format" not in r
        and not any(t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))
    ]


async def chat(
    client, text: str, *, user_id: str | None, thread_id: str | None = None, assistant_id: str = "agent"
) -> dict:
    """One run of the agent through the SDK, on a new thread unless given; returns the finished run."""
    if thread_id is None:
        thread_id = (await client.threads.create())["thread_id"]
    context = {} if user_id is None else {"user_id": user_id}
    run = await client.runs.create(
        thread_id, assistant_id, input={"messages": [{"role": "user", "content": text}]}, context=context
    )
    await client.runs.join(thread_id, run["run_id"])
    return await client.runs.get(thread_id, run["run_id"])


async def resolved_case(server: DevServer, user_id: str, said: str) -> dict:
    """``said`` in a new thread of ``user_id``, then the thread closed as resolved by that user
    (``POST /feedback``): the episode the route kept."""
    run = await chat(client(server, user_id), said, user_id=user_id)
    assert run["status"] == "success", server.output()
    closed = httpx.post(
        f"{server.url}/feedback",
        json={"thread_id": run["thread_id"], "outcome": "resolved"},
        headers={"Authorization": f"Bearer {token(user_id)}"},
        timeout=60,
    )
    assert closed.status_code == 200, closed.text
    return closed.json()["episode"]
