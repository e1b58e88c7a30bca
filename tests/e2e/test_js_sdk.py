"""The JavaScript SDK (``@langchain/langgraph-sdk``, what web front-ends such as
LangChain's agent-chat-ui use) against ``./scripts/dev`` with the user token as
its ``apiKey`` (sent as ``X-Api-Key``): Node runs
``tests/js/sdk_smoke.mjs`` and this test checks what it saw.

Needs ``node`` and ``npm ci`` in ``tests/js`` (``./scripts/test`` runs it when
``npm`` exists); outside CI the test is skipped when either is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.devserver import DevServer, client, token
from tests.skips import enable_with

pytestmark = pytest.mark.e2e

JS = Path(__file__).parents[1] / "js"
NODE = shutil.which("node")


@pytest.fixture
def node() -> str:
    missing = enable_with("node and npm are not installed", "apt-get install nodejs npm") if NODE is None else None
    if NODE and not (JS / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        missing = enable_with("the JS SDK test's packages are not installed", "npm ci --prefix tests/js")
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the JS SDK test: {missing}")
        pytest.skip(missing)
    assert NODE is not None
    return NODE


async def test_js_sdk_streams_and_reads_own_memory_with_a_token(node, workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        admin = client(server, "ops", admin=True)  # another user's items, put there by an operator
        await admin.store.put_item(["u_li", "app"], "n1", {"text": "Li's secret"}, index=False)
        lis = await admin.threads.create(metadata={"owner": "u_li", "graph_id": "agent"})  # found by metadata...
        env = {
            **server_env,
            "MNEMO_URL": server.url,
            "MNEMO_TOKEN": token("u_ada"),
            "MNEMO_USER": "u_ada",
            "MNEMO_OTHER_USER": "u_li",
        }
        done = subprocess.run(
            [node, str(JS / "sdk_smoke.mjs")], cwd=JS, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr + server.output()
        seen = json.loads(done.stdout.strip().splitlines()[-1])

        # A streamed run under the token's identity: the thread is stamped as theirs.
        assert seen["owner"] == "u_ada"
        assert seen["tools"] == ["remember_note"] and seen["chunks"] > 1
        # the stub echoes the tool's result: the note is queued, written after the reply
        assert seen["answer"].startswith("ok: Will be remembered once this reply is sent:\n<user_memory>")
        assert seen["messages"] >= 4  # user, tool call, tool result, answer
        # Memory written by the run, read back through the store API.
        assert seen["profile"] == {"name": "Ada", "city": "Lisbon"}
        assert seen["notes"] == ["I have a cat"]
        assert seen["threads"] == [seen["thread_id"]]
        # What agent-chat-ui reads: the thread's history (newest state first), threads by metadata.
        assert seen["history"][0] == seen["messages"] and seen["history"] == sorted(seen["history"], reverse=True)
        assert seen["first_said"].startswith("Hi, I'm Ada")
        assert seen["listed"] == [seen["thread_id"]]  # ...but not by ada
        assert lis["thread_id"] in {t["thread_id"] for t in await admin.threads.search(metadata={"graph_id": "agent"})}
        # Refused: another user's memory, a run claiming another user, no token.
        assert (seen["foreign_store"], seen["foreign_run"], seen["anonymous"]) == (403, 403, 401)
        assert "Li's secret" not in done.stdout
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
