"""A model that is missing or wrong, through a real ``./scripts/dev`` (issue 55
point 2): no model configured, a key the server refuses, a model name it does
not serve, a server nobody answers. ``./scripts/dev`` says it at start-up, and
every client is told what is wrong and what to set, never "An internal error
occurred": the SDK's run (waited and streamed), ``mnemo chat`` (which stays at
its prompt), A2A and MCP. The messages: tests/models/test_unavailable.py."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx
import pytest

from harness.devserver import DevServer, client, token
from tests.e2e.test_a2a import a2a, results, text

pytestmark = pytest.mark.e2e

HIDDEN = "An internal error occurred"


def checked(env: dict[str, str]) -> dict[str, str]:
    """The user's shell: the start-up model check on (the tests' servers skip it by default)."""
    return {**env, "MNEMO_DEV_MODEL_CHECK": "1", "MNEMO_LOCAL_MODEL": "off", "MNEMO_MODEL_MAX_RETRIES": "0"}


def said_at_start(server: DevServer, reason: str) -> str:
    deadline = time.monotonic() + 120
    while "mnemo: the chat model" not in server.output(tail=10**7):
        assert time.monotonic() < deadline, server.output()
        time.sleep(0.5)
    (line,) = [ln for ln in server.output(tail=10**7).splitlines() if ln.startswith("mnemo: the chat model")]
    assert "cannot be used" in line and reason in line, line
    return line


async def every_client_is_told(server: DevServer, reason: str, workdir) -> None:
    c = client(server, "u_err")
    said = {"messages": [{"role": "user", "content": "Hello"}]}
    # The SDK, waited: the run's error carries the message.
    waited = await c.runs.wait(None, "agent", input=said, context={"user_id": "u_err"}, raise_error=False)
    assert waited["__error__"]["error"] == "ModelUnavailableError", waited
    assert reason in waited["__error__"]["message"] and HIDDEN not in str(waited), waited
    # The SDK, streamed (the console and Studio read this stream).
    thread = await c.threads.create()
    errors = [
        p.data
        async for p in c.runs.stream(thread["thread_id"], "agent", input=said, stream_mode="messages-tuple")
        if p.event == "error"
    ]
    assert len(errors) == 1 and reason in errors[0]["message"], errors
    # The terminal client: the failure said, and the next line still asked (it stays at its prompt).
    env = {k: v for k, v in server.env.items() if k != "MNEMO_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "mnemo", "chat", "--user", "u_err"],  # no --url: .mnemo/dev-url of the checkout
        cwd=workdir,
        env=env,
        input="Hello\nHello again\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stderr
    failures = [ln for ln in done.stderr.splitlines() if ln.startswith("error: the run failed:")]
    assert len(failures) == 2 and all(reason in ln for ln in failures), done.stderr
    # A2A and MCP, whose answers the platform makes of the error's type alone.
    assistant = (await c.assistants.search(graph_id="agent"))[0]["assistant_id"]
    answer = results(await a2a(server, assistant, "u_err", "message/send", [text("Hello")]))[-1]
    assert reason in str(answer) and HIDDEN not in str(answer), answer
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent", "arguments": said}}
    headers = {"X-Api-Key": token("u_err"), "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=server.url, timeout=300) as http:
        got = (await http.post("/mcp", json=call, headers=headers)).json()
    assert got["result"]["isError"] and reason in str(got), got


async def test_no_model_configured_is_said_at_start_and_to_every_client(workdir, server_env):
    (workdir / ".env").write_text((workdir / ".env.example").read_text())  # a fresh checkout's .env: nothing set
    server = DevServer(workdir, checked(server_env))
    server.start()
    try:
        said_at_start(server, "no chat model is configured")
        assert "Every run fails until this is fixed." in server.output(tail=10**7)  # the server's own word
        await every_client_is_told(server, "no chat model is configured", workdir)
    finally:
        server.stop()


async def test_a_refused_key_an_unknown_model_and_a_server_nobody_answers(workdir, server_env, stub):
    stub.refuse, stub.refuse_status = "model", 401  # every request names its model: every one refused
    server = DevServer(workdir, checked(server_env))
    server.start()
    try:
        said_at_start(server, "refused the key (HTTP 401)")
        await every_client_is_told(server, "refused the key (HTTP 401)", workdir)
        stub.refuse_status = 404
        await every_client_is_told(server, "does not serve the model 'stub-model' (HTTP 404)", workdir)
        stub.shutdown()  # nobody answers at its port any more
        stub.server_close()
        await every_client_is_told(server, f"nobody answers at the model server {stub.base_url}", workdir)
    finally:
        server.stop()


def test_the_console_says_what_is_missing(browser, workdir, server_env):
    from tests.e2e.test_web_ui import sign_in

    (workdir / ".env").write_text((workdir / ".env.example").read_text())  # nothing configured
    server = DevServer(workdir, checked(server_env))
    server.start()
    try:
        page = browser.new_page()
        page.goto(server.console_url())
        sign_in(page, "u_console")
        page.fill("#text", "hello")
        page.click("form button")
        page.wait_for_function(
            "document.querySelector('#log').textContent.includes('no chat model is configured')", timeout=120_000
        )
        log = page.inner_text("#log")
        assert "OPENAI_API_KEY" in log and HIDDEN not in log, log
    finally:
        server.stop()
