"""The run cap's query (server/run_cap.py): how many of one owner's threads
have a run in progress. The handler that refuses the next run is tested in
tests/server/test_access.py with this query replaced; here the query itself
meets threads of several owners and states.

Served, the platform filters the in-process search by the caller again (the
loopback request inherits the handler's auth context, so ``on_threads``
returns the caller's owner filter for it too): the e2e cap test passes with
the query's own filter removed. The query does not lean on that."""

from __future__ import annotations

from typing import Any

import pytest

from server.access import OWNER


class Threads:
    """``client.threads.search`` of langgraph_sdk over threads in memory, with
    the server's semantics the query meets: metadata contained in the thread's,
    status equal, at most ``limit``; any other filter is refused."""

    def __init__(self, threads: list[tuple[str, str]]) -> None:
        self.threads: list[dict[str, Any]] = [
            {"thread_id": f"t{i}", "metadata": {OWNER: o}, "status": s} for i, (o, s) in enumerate(threads)
        ]
        self.searches: list[dict[str, Any]] = []

    async def search(self, *, metadata: dict | None = None, status: str | None = None, limit: int = 10) -> list[dict]:
        self.searches.append({"metadata": metadata, "status": status, "limit": limit})
        found = [
            t
            for t in self.threads
            if (metadata or {}).items() <= t["metadata"].items() and status in (None, t["status"])
        ]
        return found[:limit]


@pytest.fixture
def threads(monkeypatch) -> Threads:
    import langgraph_sdk

    threads = Threads(
        [("alice", "busy"), ("bob", "busy"), ("alice", "idle"), ("bob", "busy"), ("bob", "busy"), ("alice", "busy")]
        + [("alice", "error"), ("alice_2", "busy"), ("ALICE", "busy"), ("bob", "interrupted")]
    )
    client = type("Client", (), {"threads": threads})()
    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **_: client)
    return threads


async def test_the_run_cap_counts_only_the_owners_threads_with_a_run_in_progress(threads):
    from server.run_cap import abusy_threads

    busy = [t for t in threads.threads if t["status"] == "busy"]
    assert len(busy) == 7  # the precondition: other owners' runs are in progress too
    assert await abusy_threads("alice", limit=10) == 2  # not bob's, alice_2's, ALICE's; not idle or failed ones
    assert await abusy_threads("bob", limit=10) == 3
    assert await abusy_threads("carol", limit=10) == 0
    assert await abusy_threads("bob", limit=2) == 2  # counted only as far as the cap
    assert threads.searches[-1] == {"metadata": {OWNER: "bob"}, "status": "busy", "limit": 2}
