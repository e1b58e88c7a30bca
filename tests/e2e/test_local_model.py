"""The first run as a new user makes it: ``./scripts/dev`` in a checkout with no
model configured (``.env`` copied from ``.env.example``, nothing filled in)
serves the local model and answers a turn (issue 55). The smallest pinned
model (SmolLM2-135M, 98 MB, named by ``MNEMO_LOCAL_MODEL``) is downloaded
once into the user's model cache, outside the temporary checkout, so a rerun
reuses it; every other server test keeps the stub model."""

from __future__ import annotations

import asyncio
import os
import re
import time

import httpx
import pytest

from harness.devserver import DevServer, client, server_environment
from mnemo.models import local_cache_dir

pytestmark = pytest.mark.e2e

#: Generous, for a first download and a loaded 2-core machine; never a measure of speed.
START_S = 900
TURN_S = 900


@pytest.fixture
def local_server(workdir):
    example = (workdir / ".env.example").read_text()
    assert "\n# MNEMO_MODEL=" in example and not re.search(r"^(MNEMO_MODEL|OPENAI_\w+)=", example, re.M)
    settings = [
        "MNEMO_LOCAL_MODEL=smollm2-135m",
        "MNEMO_MODEL_TIMEOUT_S=600",  # a CPU under other tests' load reads a reply's prompt slowly
        "MNEMO_MODEL_MAX_TOKENS=48",  # a 135M model may ramble: the turn needs a reply, not a long one
    ]
    (workdir / ".env").write_text(example + "\n".join(settings) + "\n")
    env = {**server_environment(), "MNEMO_CACHE_DIR": str(local_cache_dir())}  # the runner's cache, or the user's
    server = DevServer(workdir, env)
    server.launch()
    server.wait_ready(timeout=START_S)
    yield server
    server.stop()


async def _turn(server: DevServer, text: str) -> tuple[dict, list[dict]]:
    sdk = client(server, "u_local")
    thread_id = (await sdk.threads.create())["thread_id"]
    run = await sdk.runs.create(
        thread_id, "agent", input={"messages": [{"role": "user", "content": text}]}, context={"user_id": "u_local"}
    )
    deadline = time.monotonic() + TURN_S
    while (run := await sdk.runs.get(thread_id, run["run_id"]))["status"] in ("pending", "running"):
        assert time.monotonic() < deadline, server.output()
        await asyncio.sleep(1)  # polled: a join would outlast the SDK's read timeout on a slow CPU
    state = await sdk.threads.get_state(thread_id)
    return run, state["values"]["messages"]


def test_a_checkout_with_no_model_configured_chats_with_the_local_model(local_server):
    said = local_server.output(tail=10**8)
    started = re.search(r"mnemo: no model configured: serving the local model smollm2-135m .* at (http://\S+)/v1", said)
    assert started, said
    assert f"cached in {local_cache_dir()}" in said and "MNEMO_LOCAL_MODEL=off" in said
    health = f"{started.group(1)}/health"
    assert httpx.get(health, timeout=10).status_code == 200
    # It answers only the key ./scripts/dev gave langgraph dev.
    assert httpx.get(f"{started.group(1)}/v1/models", timeout=10).status_code == 401

    run, messages = asyncio.run(_turn(local_server, "Hello! Who are you?"))
    assert run["status"] == "success", local_server.output()
    replies = [m for m in messages if m["type"] == "ai" and isinstance(m["content"], str) and m["content"].strip()]
    assert replies, messages
    assert local_server.trouble() == [], local_server.trouble()

    local_server.stop()  # the sidecar ends with ./scripts/dev (then langgraph dev)
    for _ in range(120):
        try:
            httpx.get(health, timeout=2)
        except httpx.ConnectError:
            break
        time.sleep(0.5)
    with pytest.raises(httpx.ConnectError):
        httpx.get(health, timeout=2)
    assert not [p for p in os.listdir(local_server.workdir) if p.startswith("mnemo-local-model")]


def test_an_unknown_local_model_stops_scripts_dev_with_a_clear_error(workdir):
    example = (workdir / ".env.example").read_text()
    (workdir / ".env").write_text(example + "MNEMO_LOCAL_MODEL=gpt-5\n")
    server = DevServer(workdir, server_environment())
    server.launch()
    try:
        assert server.proc is not None and server.proc.wait(timeout=300) == 2
    finally:
        server.stop()
    said = server.logfile.read_text()
    assert "error: MNEMO_LOCAL_MODEL is one of qwen2.5-1.5b, smollm2-135m, off; got 'gpt-5'" in said, said
    assert "Welcome to" not in said and "serving the local model" not in said  # stopped before either started
