"""A2A works, within the client's rule (issue 43 point 5), through a real
``./scripts/dev`` and httpx: ``message/send`` and ``message/stream``, in the
legacy and the v1 forms, run the agent; the platform's own A2A mark on the
messages it makes is admitted, a client's ``additional_kwargs`` are still
refused on every route (run input, A2A data parts, message metadata); the
input bounds answer 413 and the run cap holds (at most 3 runs at once, the
others refused saying why). The rules: tests/nodes/test_client_writes.py,
tests/server/test_platform_guards.py.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

from harness.devserver import DevServer, client, token
from server.run_cap import DEFAULT_MAX_RUNS_PER_USER
from tests.e2e.test_run_cap import REFUSED, lingering

pytestmark = pytest.mark.e2e

#: The two forms of each method the platform takes.
SEND = ("message/send", "SendMessage")
STREAM = ("message/stream", "SendStreamingMessage")
MARK = {"a2a": {"task_start_id": "01a2413b-6e72-745c-9122-7dcdb21a0aba"}}


def text(value: str) -> dict:
    return {"kind": "text", "text": value}


def request(method: str, parts: list, **message) -> dict:
    role = "ROLE_USER" if method[0].isupper() else "user"
    body = {"role": role, "parts": parts, "messageId": str(uuid.uuid4()), **message}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": body}}


async def a2a(server: DevServer, assistant: str, user: str, method: str, parts: list, **kw) -> httpx.Response:
    """One A2A request of ``user``; a stream is read whole."""
    accept = "text/event-stream" if method in STREAM else "application/json"
    headers = {"Authorization": f"Bearer {token(user)}", "Accept": accept, **kw.pop("headers", {})}
    async with httpx.AsyncClient(base_url=server.url, timeout=300) as http:
        return await http.post(f"/a2a/{assistant}", json=request(method, parts, **kw), headers=headers)


def results(res: httpx.Response) -> list[dict]:
    """The JSON-RPC answers of a response: one, or one per event of a stream."""
    assert res.status_code == 200, res.text[:300]
    if res.headers["content-type"].startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in res.text.splitlines() if line.startswith("data:")]
    return [res.json()]


def final_state(res: httpx.Response) -> str:
    """The task state the answer ends with; fails on a JSON-RPC error."""
    answers = results(res)
    assert all("error" not in a for a in answers), answers
    last = answers[-1]["result"]
    task = last.get("task", last)
    return task["status"]["state"]


async def check_a2a(server: DevServer, stub) -> None:
    alice = client(server, "alice")
    assistant = (await alice.assistants.search(graph_id="agent"))[0]["assistant_id"]

    # Both methods, both forms: the agent answers (the stub's "ok"), the thread holds the user's text.
    calls = len(stub.requests)
    for method in (*SEND, *STREAM):
        res = await a2a(server, assistant, "alice", method, [text(f"Hi over {method}")])
        assert final_state(res).lower().endswith("completed"), res.text[:600]
        if method in SEND:
            task = results(res)[0]["result"]
            task = task.get("task", task)
            turn = [p["text"] for m in task["history"] for p in m["parts"]]
            assert turn == [f"Hi over {method}", "ok"], task
    assert len(stub.requests) > calls
    threads = await alice.threads.search(limit=20)
    stored = [
        m
        for t in threads
        for m in (await alice.threads.get_state(t["thread_id"]))["values"].get("messages", [])
        if m["type"] == "human"
    ]
    assert sorted(m["content"] for m in stored) == sorted(f"Hi over {m}" for m in (*SEND, *STREAM))
    assert all(m["additional_kwargs"]["a2a"] for m in stored), stored  # the platform's mark, admitted

    # A client's additional_kwargs stay refused: in a run's input (the same mark), through an
    # A2A data part, as message metadata or an extension; a file part is not text.
    calls = len(stub.requests)
    thread = (await alice.threads.create())["thread_id"]
    marked = {"role": "user", "content": "hi", "additional_kwargs": MARK}
    res = httpx.post(
        f"{server.url}/threads/{thread}/runs/wait",
        json={"assistant_id": "agent", "input": {"messages": [marked]}},
        headers={"Authorization": f"Bearer {token('alice')}"},
        timeout=60,
    )
    assert res.status_code == 422 and "additional_kwargs" in res.json()["detail"], res.text
    smuggled = {"kind": "data", "data": {"messages": [marked]}}
    image = {"kind": "file", "file": {"uri": "https://example.com/a.png", "mimeType": "image/png"}}
    for method in (*SEND, *STREAM):
        for parts, extra, status, reason in (
            ([text("hi"), smuggled], {}, 422, "data part"),
            ([text("hi")], {"metadata": {"a2a": MARK}}, 422, "metadata"),
            ([text("hi")], {"headers": {"A2A-Extensions": "urn:x"}}, 422, "extensions"),
            ([image], {}, 415, "text only"),
            # The input bounds, as on the run routes.
            ([text("hi")] * 21, {}, 413, "at most 20"),
            ([text("x" * 8000)] * 5, {}, 413, "at most 32000"),
            ([text("x" * 8001)], {}, 413, "8000"),
        ):
            res = await a2a(server, assistant, "alice", method, parts, **extra)
            assert res.status_code == status and reason in res.json()["error"], (method, status, res.text[:300])
    assert len(stub.requests) == calls  # no run reached the model

    # The run cap: six held A2A requests of one user at once, both methods; the cap of them run.
    cap, user = DEFAULT_MAX_RUNS_PER_USER, "u_a2a"
    methods = (*SEND, *STREAM, *SEND)
    held = [asyncio.create_task(a2a(server, assistant, user, m, [text("linger")])) for m in methods]
    for _ in range(600):
        if lingering(stub) == cap and sum(t.done() for t in held) == len(held) - cap:
            break
        await asyncio.sleep(0.5)
    refused = [(m, t.result()) for m, t in zip(methods, held, strict=True) if t.done()]
    assert lingering(stub) == cap and len(refused) == len(held) - cap, (lingering(stub), refused)
    for method, res in refused:
        # Refused early (429, saying why) or ended at once by the lease (a failed task naming
        # the run's error, as MCP does); a stream whose run the lease ended is answered by the
        # platform without the reason (-32603).
        said = (res.status_code == 429 and REFUSED in res.text) or (
            "FAILED" in res.text.upper() and "RunCapReachedError" in res.text
        )
        assert said or (method in STREAM and "-32603" in res.text), (method, res.status_code, res.text[:600])
    # While the cap's runs are held, each method is refused at once with the run routes' 429, saying why.
    for method in (*SEND, *STREAM):
        res = await a2a(server, assistant, user, method, [text("linger")])
        assert res.status_code == 429 and REFUSED in res.json()["error"] and res.headers["retry-after"], res.text
    assert lingering(stub) == cap
    stub.release()
    finished = [r for r in await asyncio.gather(*held) if all(r is not res for _, res in refused)]
    assert len(finished) == cap and all(final_state(r).lower().endswith("completed") for r in finished)


async def test_a2a_send_and_stream_run_the_agent_within_the_rule(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        await check_a2a(server, stub)
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
