"""server.model_errors: A2A's and MCP's answers for a run that failed with
ModelUnavailableError carry the reason; nothing else is rewritten, streams and
other routes pass as they are."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from mnemo.core import ModelUnavailableError
from mnemo.models.unavailable import explain_setup
from server.model_errors import ModelErrorText, with_reason

A2A = {"parts": [{"kind": "text", "text": "Error executing assistant: ModelUnavailableError"}]}
MCP = {"result": {"isError": True, "content": [{"type": "text", "text": "ModelUnavailableError"}]}}


@pytest.fixture
def reason(monkeypatch):
    for name in ("MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    said = str(explain_setup(ValueError("Missing credentials: api_key"), "openai:gpt-4o-mini"))
    assert said.startswith("no chat model is configured")
    return said


def compact(value: dict) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def test_the_bare_type_gets_the_reason_in_both_answers(reason):
    for answer in (A2A, MCP):
        got = json.loads(with_reason(compact(answer)))
        assert f"ModelUnavailableError: {reason}" in json.dumps(got), got


def test_other_text_is_left_as_it_is(reason):
    other = {"text": "Error executing assistant: RunCapReachedError", "said": "ModelUnavailableError is a word"}
    assert with_reason(compact(other)) == compact(other)


def _app(body: dict, *, stream: bool = False) -> TestClient:
    async def answer(request):
        if stream:
            return StreamingResponse(iter([b"data: " + compact(body) + b"\n\n"]), media_type="text/event-stream")
        return JSONResponse(body)

    app = Starlette(routes=[Route(p, answer, methods=["POST"]) for p in ("/mcp", "/a2a/x", "/runs/wait")])
    return TestClient(ModelErrorText(app))


def test_the_layer_rewrites_mcp_and_a2a_answers_only(reason):
    for path, body in (("/mcp", MCP), ("/a2a/x", A2A)):
        got = _app(body).post(path)
        assert reason in got.text and int(got.headers["content-length"]) == len(got.content), got.text
    assert reason not in _app(MCP).post("/runs/wait").text  # another route: untouched
    assert reason not in _app(MCP, stream=True).post("/mcp").text  # a stream: untouched


def test_without_a_reason_of_its_own_the_process_points_at_the_doctor(monkeypatch):
    import mnemo.models.unavailable as unavailable

    monkeypatch.setattr(unavailable, "_last_reason", None)
    got = json.loads(with_reason(compact(MCP)))
    assert "python -m mnemo doctor" in json.dumps(got) and isinstance(ModelUnavailableError("x"), RuntimeError)
