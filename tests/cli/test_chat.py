"""The terminal client, ``python -m mnemo chat``, as a person runs it against
``./scripts/dev``: lines typed on stdin, answers streamed back on stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.devserver import DevServer, client, system_prompts, token

pytestmark = pytest.mark.e2e


def run_chat(workdir: Path, env: dict[str, str], *args: str, lines: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mnemo", "chat", *args],
        cwd=workdir,  # a user's checkout: the development secret is in its .mnemo/
        env=env,
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=300,
    )


async def test_terminal_chat_streams_and_remembers(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        # No $MNEMO_TOKEN: the client mints a user token with the checkout's development secret.
        assert "MNEMO_TOKEN" not in server_env
        done = run_chat(
            workdir,
            server_env,
            "--user",
            "u_zhou",
            "--url",
            server.url,
            lines=[
                "Hi, I'm Zhou and I live in Hangzhou. Remember that I have a parrot.",
                "What is your refund policy?",
                "/new",
                "How long is delivery to my city?",
            ],
        )
        assert done.returncode == 0, done.stderr + server.output()
        replies = done.stdout.splitlines()
        assert "[using remember_note]" in replies and "[using search_policy]" in replies, done.stdout
        assert '"title": "Refund processing time"' in done.stdout  # the answer quoting the policy it found
        # The reply's model was asked to stream (the run streams "messages-tuple"), and its words reached
        # stdout; the memory calls (the extraction) were not (mnemo.models.build.MEMORY_CALLS).
        replying = [
            r for r in stub.requests if any(t["function"]["name"] == "remember_note" for t in r.get("tools", []))
        ]
        extracting = [r for r in stub.requests if r not in replying and r["messages"][0]["role"] == "system"]
        assert replying and extracting
        assert all(r.get("stream") for r in replying) and not any(r.get("stream") for r in extracting)
        # After /new, a new thread of the same user knows the profile.
        assert "Hangzhou" in system_prompts(stub)[-1]
        zhou = client(server, "u_zhou")
        profile = (await zhou.store.search_items(["u_zhou", "profile"], limit=50))["items"]
        assert {i["key"]: i["value"]["value"] for i in profile} == {"name": "Zhou", "city": "Hangzhou"}
        threads = await zhou.threads.search(limit=10)
        assert len(threads) == 2

        # Someone else's token cannot chat as u_zhou: refused by the server, said plainly.
        before = len(stub.requests)
        refused = run_chat(
            workdir,
            {**server_env, "MNEMO_TOKEN": token("u_li")},
            "--user",
            "u_zhou",
            "--url",
            server.url,
            lines=["What do you know about me?"],
        )
        assert refused.returncode == 1
        assert "403" in refused.stderr, refused.stderr
        assert len(stub.requests) == before  # no model call was made

        # Without a token or a user id: a clear error, nothing sent.
        nobody = run_chat(workdir, server_env, "--url", server.url, lines=["hello"])
        assert nobody.returncode == 2 and "--user" in nobody.stderr
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
