"""Export, audit, entitlements, reindex and erase through a real `langgraph dev`:
the command line with ``--url`` (the server runs each command on its own
store, ``POST /memory/operator/<name>``) and the thread erase, with the stub
model server as the model."""

from __future__ import annotations

import json

import pytest

from harness.devserver import DevServer, chat, cli, client
from mnemo.access.privacy import aerase_threads

pytestmark = pytest.mark.e2e


async def test_export_audit_entitle_and_erase_through_the_server(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        backend = client(server, "ops", admin=True)  # an app backend acting for its users
        mine = [(await backend.threads.create(metadata={"owner": "u_zhou"}))["thread_id"] for _ in range(2)]
        theirs = (await backend.threads.create(metadata={"owner": "u_li"}))["thread_id"]
        done = await chat(backend, "Hi, I'm Zhou and I live in Hangzhou.", user_id="u_zhou", thread_id=mine[0])
        assert done["status"] == "success", server.output()
        assert (await chat(backend, "I'm Li and I live in Beijing.", user_id="u_li", thread_id=theirs))[
            "status"
        ] == "success"

        # Export through the server: the profile, and an audit trail naming the run.
        exported = cli("export", "u_zhou", url=server.url)
        assert exported.returncode == 0, exported.stderr
        doc = json.loads(exported.stdout)
        assert {f: e["value"] for f, e in doc["profile"].items()} == {"name": "Zhou", "city": "Hangzhou"}
        sets = [r for r in doc["audit"] if r["action"] == "profile.set"]
        assert {r["target"] for r in sets} == {"name", "city"}
        assert all((r["source"], r["thread_id"], r["run_id"]) == ("extractor", mine[0], done["run_id"]) for r in sets)

        # An admin denies a tool: the model is no longer offered it.
        assert cli("entitle", "u_zhou", "--tool", "search_policy", "--deny", url=server.url).returncode == 0
        verified = cli("audit", "verify", "u_zhou", url=server.url)
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert json.loads(verified.stdout)["records"] == 3  # two profile fields, one entitlement
        assert json.loads(cli("reindex", "u_zhou", url=server.url).stdout) == {
            "notes_indexed": {"u_zhou": 0},
            "sparse_vectors_added": {"u_zhou": 0},
        }
        await chat(backend, "What is your refund policy?", user_id="u_zhou", thread_id=mine[1])
        chat_calls = [
            r for r in stub.requests if not any(t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))
        ]
        assert "search_policy" not in {t["function"]["name"] for t in chat_calls[-1].get("tools", [])}
        assert "search_policy" in {t["function"]["name"] for t in chat_calls[0].get("tools", [])}

        # Erase: found by meaning before, not after; threads gone; the other user untouched.
        found = await backend.store.search_items(["u_zhou"], query="Hangzhou", limit=20)
        assert any(it["value"].get("value") == "Hangzhou" for it in found["items"])
        erased = cli("erase", "u_zhou", "--yes", "--threads", url=server.url)
        assert erased.returncode == 0, erased.stderr
        assert json.loads(erased.stdout)["deleted"]["profile"] == 2
        assert sorted(json.loads(erased.stdout)["threads"]) == sorted(mine)
        assert await aerase_threads(backend, "u_zhou") == []
        left = await backend.threads.search(limit=100)
        assert [t["thread_id"] for t in left] == [theirs]
        found = await backend.store.search_items(["u_zhou"], query="Hangzhou", limit=20)
        assert [
            it for it in found["items"] if it["namespace"][1] not in ("audit", "audit_head", "entitlements", "usage")
        ] == []
        assert not any(
            it.get("score") is not None and it["namespace"][1] in ("profile", "notes") for it in found["items"]
        )
        assert json.loads(cli("export", "u_zhou", url=server.url).stdout)["profile"] == {}
        assert json.loads(cli("audit", "verify", "u_zhou", url=server.url).stdout)["ok"]  # the erase's new chain
        li = json.loads(cli("export", "u_li", url=server.url).stdout)
        assert li["profile"]["city"]["value"] == "Beijing"
        assert server.trouble() == []
    finally:
        server.stop()
