"""nodes.background_writer.arun_in_progress: whether the run that queued a note
is still in progress, as the server says (a rolled-back run is gone: ended)."""

from __future__ import annotations

import httpx
import pytest
from langgraph_sdk.errors import NotFoundError

from nodes.background_writer import arun_in_progress
from tests.agent_harness import ON_PLATFORM


class Runs:
    def __init__(self, status: str | None):
        self.status = status

    async def get(self, thread_id: str, run_id: str) -> dict:
        if self.status is None:
            request = httpx.Request("GET", f"http://server/threads/{thread_id}/runs/{run_id}")
            raise NotFoundError("not found", response=httpx.Response(404, request=request), body=None)
        return {"run_id": run_id, "status": self.status}


class Client:
    def __init__(self, status: str | None):
        self.runs = Runs(status)


@pytest.mark.parametrize(
    ("status", "running"),
    [("pending", True), ("running", True), ("success", False), ("error", False), ("interrupted", False), (None, False)],
)
async def test_the_server_says_whether_a_run_is_in_progress(status, running):
    assert await arun_in_progress({}, "t1", "run-a", client=Client(status)) is running


async def test_without_a_server_or_ids_it_cannot_tell():
    assert await arun_in_progress({"configurable": {"thread_id": "t1"}}, "t1", "run-a") is None
    assert await arun_in_progress({"configurable": ON_PLATFORM}, "t1", None, client=Client("running")) is None
