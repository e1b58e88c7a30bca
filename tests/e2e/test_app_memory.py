"""An application writes memory through ``./scripts/dev`` (both shipped configs):
a note and a profile field through the ``/memory`` routes reach a new thread's
prompt, ``/memory/search`` shows why, the import round trip holds, and a
memory-agent deployment's memories (a second LangGraph server, items put as its
``upsert_memory`` tool puts them) are migrated with ``python -m mnemo import``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from harness.devserver import ROOT, DevServer, chat, cli, client, free_port, system_prompts, token, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres

pytestmark = pytest.mark.e2e

#: A LangGraph app of the memory-agent kind: a graph and the platform's store, no mnemo.
PEER_GRAPH = """
from langgraph.graph import MessagesState, StateGraph

graph = StateGraph(MessagesState).add_node("noop", lambda state: {}).add_edge("__start__", "noop").compile()
"""


@pytest.fixture(params=["langgraph.json", "langgraph.postgres.json"])
def config(request, workdir, stub, tmp_path) -> str:
    if request.param == "langgraph.postgres.json":
        if skip_postgres():
            pytest.skip(SKIP_POSTGRES_REASON)
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(tmp_path / "pgdata"), POSTGRES_URI="")
    return request.param


@pytest.fixture
def peer(tmp_path: Path, server_env):
    """``langgraph dev`` of a memory-agent-like app (its own directory and store)."""
    app = tmp_path / "peer"
    app.mkdir()
    (app / "graph.py").write_text(PEER_GRAPH)
    (app / "langgraph.json").write_text(json.dumps({"dependencies": ["."], "graphs": {"agent": "./graph.py:graph"}}))
    port = free_port()
    log = open(tmp_path / "peer.log", "w")
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "langgraph"), "dev", "--port", str(port), "--no-browser"],
        cwd=app,
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(360):
            try:
                if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                raise RuntimeError((tmp_path / "peer.log").read_text()[-3000:])
            subprocess.run(["sleep", "0.5"])
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        log.close()


def admin() -> dict[str, str]:
    return {"Authorization": f"Bearer {token('crm', admin=True)}"}


def kept(document: dict) -> tuple:
    """What the round trip keeps: notes, profile, the other kinds' values."""
    other = {k: sorted((it["key"], json.dumps(it["value"])) for it in v) for k, v in document["other"].items()}
    return document["notes"], document["profile"], other


async def test_an_application_writes_memory_a_new_thread_carries_it_search_says_why_and_import_and_migration_hold(
    workdir, server_env, stub, config, peer, tmp_path
):
    server = DevServer(workdir, server_env, config=config)
    server.start()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            note = {"user_id": "u_zhou", "text": "Prefers e-mail over phone."}
            added = await http.post("/memory/notes", json=note, headers=admin())
            assert added.status_code == 201, added.text
            patched = await http.patch(
                "/memory/profile", json={"user_id": "u_zhou", "city": "Hangzhou"}, headers=admin()
            )
            assert patched.status_code == 200 and patched.json()["profile"]["city"]["source"] == "app"
            refused = await http.patch("/memory/profile", json={"user_id": "u_zhou", "shoe": "42"}, headers=admin())
            assert refused.status_code == 400 and refused.json()["field"] == "shoe"

            # A new thread of the user: the prompt carries both.
            zhou = client(server, "u_zhou")
            assert (await chat(zhou, "How will you contact me?", user_id="u_zhou"))["status"] == "success"
            prompt = system_prompts(stub)[-1]
            assert "Prefers e-mail over phone." in prompt and "Hangzhou" in prompt

            # Why: the search shows the memory block the prompt carried, and what found the note.
            user = {"Authorization": f"Bearer {token('u_zhou')}"}
            found = (await http.get("/memory/search", params={"q": "How will you contact me?"}, headers=user)).json()
            assert found["memory"] in prompt
            top = found["relevant"][0]
            assert top["note"]["id"] == added.json()["note"]["id"] and top["in_prompt"] and "meaning" in top["found_by"]
            audit = (await http.get("/memory/export", headers=user)).json()["audit"]
            assert {(r["route"], r["actor"]) for r in audit if r.get("route")} == {
                ("POST /memory/notes", "crm"),
                ("PATCH /memory/profile", "crm"),
            }

        # Export -> erase -> import -> export: the same memory; importing again changes nothing.
        before = cli("export", "u_zhou", "--out", str(tmp_path / "zhou.json"), url=server.url)
        assert before.returncode == 0, before.stderr
        document = json.loads((tmp_path / "zhou.json").read_text())
        assert document["notes"] and document["profile"]
        assert cli("erase", "u_zhou", "--yes", url=server.url).returncode == 0
        assert json.loads(cli("export", "u_zhou", url=server.url).stdout)["notes"] == []
        imported = cli("import", "u_zhou", str(tmp_path / "zhou.json"), url=server.url)
        assert imported.returncode == 0, imported.stderr
        assert json.loads(imported.stdout)["written"]["notes"] == len(document["notes"])
        assert kept(json.loads(cli("export", "u_zhou", url=server.url).stdout)) == kept(document)
        again = json.loads(cli("import", "u_zhou", str(tmp_path / "zhou.json"), url=server.url).stdout)
        assert again["written"] == {}
        assert json.loads(cli("audit", "verify", "u_zhou", url=server.url).stdout)["ok"]

        # A memory-agent deployment's memories, put as its upsert_memory tool puts them.
        from langgraph_sdk import get_client

        old = get_client(url=peer)
        await old.store.put_item(
            ["memories", "u_zhou"],
            key=str(uuid.uuid4()),
            value={"content": "User has a dog called Max.", "context": "Talking about weekend plans."},
        )
        args = ("import", "u_zhou", "--from-langgraph-store", "memories/{user_id}", "--source-url", peer)
        dry = cli(*args, "--dry-run", url=server.url)
        assert dry.returncode == 0, dry.stderr
        assert [n["text"] for n in json.loads(dry.stdout)["notes"]] == ["User has a dog called Max."]
        moved = cli(*args, url=server.url)
        assert json.loads(moved.stdout)["notes_written"] == {"stored": 1}, moved.stdout + moved.stderr
        assert (await chat(zhou, "What is my dog called?", user_id="u_zhou"))["status"] == "success"
        assert "User has a dog called Max." in system_prompts(stub)[-1]
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


def test_the_cli_needs_a_file_or_a_namespace_template():
    res = subprocess.run([sys.executable, "-m", "mnemo", "import", "u_zhou"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 2 and "--from-langgraph-store" in res.stderr


def backend_examples() -> tuple[str, str]:
    """The Python and JavaScript blocks of docs/clients.md's "Writing memory from a backend"."""
    text = (ROOT / "docs" / "clients.md").read_text("utf-8")
    section = text.split("## Writing memory from a backend", 1)[1].split("\n## ", 1)[0]
    python = section.split("```python\n", 1)[1].split("```", 1)[0]
    js = section.split("```js\n", 1)[1].split("```", 1)[0]
    return python, js


async def test_the_backend_examples_of_the_client_docs_run_as_written(workdir, server_env, stub, tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (apt-get install nodejs)")
    python, js = backend_examples()
    server = DevServer(workdir, server_env)
    server.start()
    try:
        scope: dict = {"ADMIN_TOKEN": token("crm", admin=True)}
        exec(python.replace("http://127.0.0.1:2024", server.url), scope)
        assert scope["note"]["text"] == "Prefers e-mail over phone." and scope["why"]["relevant"]
        script = tmp_path / "backend.mjs"
        admin_token = json.dumps(token("crm", admin=True))
        script.write_text(
            f"const MNEMO_URL = {json.dumps(server.url)};\nconst ADMIN_TOKEN = {admin_token};\n"
            + js
            + "\nconsole.log(JSON.stringify({ status, note, why }));\n"
        )
        done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["status"] == "duplicate" and seen["note"]["id"] == scope["note"]["id"]  # the same fact, twice
        assert seen["why"]["profile"]["city"]["value"] == "Hangzhou"
    finally:
        server.stop()
