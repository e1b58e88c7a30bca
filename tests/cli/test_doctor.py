"""``python -m mnemo doctor`` against the stub's profiles of real servers: the
table of what works, the way memory will be written, and exit status 1 when
memory cannot be written with the server (it reads ``./.env`` as the server does)."""

from __future__ import annotations

import json
import os
import re

import pytest

from harness.stub_openai import StubServer
from mnemo.cli import main
from mnemo.cli.doctor import SAID
from mnemo.models import WAYS
from mnemo.models.build import MODELS


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A user's checkout: a ``.env`` and nothing in the shell; the environment
    the command loads from ``.env`` is put back afterwards."""
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith(("OPENAI_", "MNEMO_"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    saved_models = dict(MODELS)
    MODELS.clear()
    yield tmp_path
    os.environ.clear()
    os.environ.update(saved)
    MODELS.clear()
    MODELS.update(saved_models)


def doctor(checkout, stub: StubServer, capsys, **settings: str) -> tuple[int, str]:
    lines = [f"OPENAI_BASE_URL={stub.base_url}", "OPENAI_API_KEY=stub-key", "MNEMO_MODEL=openai:stub-model"]
    (checkout / ".env").write_text("\n".join([*lines, *(f"{k}={v}" for k, v in settings.items())]) + "\n")
    status = main(["doctor"])
    return status, capsys.readouterr().out


def row(out: str, check: str) -> str:
    """The table's line of ``check``."""
    (line,) = [line for line in out.splitlines() if re.match(rf"(ok  |WARN|FAIL)  {re.escape(check)}\s", line)]
    return line


@pytest.mark.parametrize(
    ("profile", "status", "way", "failing"),
    [
        ("default", 0, "function_calling", ["structured: json_schema", "structured: text"]),
        (
            "llamacpp",
            0,
            "json_schema",
            ["structured: function_calling", "structured: tool_required", "structured: text"],
        ),
        ("nostructured", 1, None, ["tools offered", "structured: json_schema", "structured: function_calling"]),
    ],
)
def test_the_doctor_says_what_the_server_honours_and_the_way_memory_is_written(
    checkout, capsys, profile, status, way, failing
):
    with StubServer(profile=profile) as stub:
        got, out = doctor(checkout, stub, capsys)
        assert stub.requests  # the precondition: it asked the configured server
    assert got == status, out
    assert row(out, "plain answer").startswith("ok"), out
    assert row(out, "streaming").startswith("ok"), out
    for check in failing:
        assert row(out, check).startswith("FAIL"), out
    if way:
        assert row(out, f"structured: {way}").startswith("ok") and f"memory is written by: {way}" in out, out
    else:
        assert "memory cannot be written with this server" in out, out


def test_the_doctor_sees_a_tool_call_returned_as_one(checkout, capsys):
    with StubServer() as stub:  # the control of the next test: a server returning tool_calls
        _, out = doctor(checkout, stub, capsys)
    assert row(out, "tools offered").startswith("ok") and "called lookup_order" in out, out


def test_the_doctor_reports_tool_calls_that_come_back_as_text_and_what_to_do(checkout, capsys):
    with StubServer(profile="textcalls") as stub:
        got, out = doctor(checkout, stub, capsys)
    line = row(out, "tools offered")
    assert line.startswith("WARN") and "tool calls come back as text" in line, out
    assert "llama-server --jinja" in line and "docs/models.md" in line, out
    assert got == 0 and "memory is written by: function_calling" in out, out  # memory still works


def test_the_doctor_reports_a_model_that_never_stops_within_the_deadline(checkout, capsys):
    with StubServer(profile="looping") as stub:
        got, out = doctor(checkout, stub, capsys, MNEMO_MODEL_TIMEOUT_S="1")
        assert all(r.get("max_tokens") for r in stub.requests)
    assert got == 1, out
    assert "ModelDeadlineError" in row(out, "plain answer") and "the model server does not answer" in out, out


def test_the_doctors_structured_checks_carry_the_memory_calls_cap(checkout, capsys):
    with StubServer() as stub:
        got, out = doctor(checkout, stub, capsys, MNEMO_MODEL_MAX_TOKENS="1500", MNEMO_MEMORY_MAX_TOKENS="321")
        extraction = [json.dumps(SAID)[1:-1] in json.dumps(r["messages"]) for r in stub.requests]
        caps = [(asks_memory, r.get("max_tokens")) for asks_memory, r in zip(extraction, stub.requests, strict=True)]
    assert got == 0, out
    assert caps == [(False, 1500)] * 3 + [(True, 321)] * len(WAYS)  # plain, streamed, tools; then each way
    assert "memory calls max_tokens=321" in out, out


@pytest.mark.parametrize(("pinned", "status"), [("function_calling", 1), ("json_schema", 0)])
def test_the_doctor_reports_the_pinned_way_memory_will_use(checkout, capsys, pinned, status):
    with StubServer(profile="llamacpp") as stub:  # json_schema works, a forced call does not
        got, out = doctor(checkout, stub, capsys, MNEMO_STRUCTURED_OUTPUT=pinned)
    assert row(out, "structured: json_schema").startswith("ok"), out  # the precondition: a way works
    assert row(out, "structured: function_calling").startswith("FAIL"), out
    assert got == status, out
    if status == 0:
        assert "memory is written by: json_schema" in out, out
        return
    assert "memory is written by" not in out, out
    assert (
        "memory cannot be written with this server: MNEMO_STRUCTURED_OUTPUT pins function_calling, which failed "
        "above; it works with json_schema" in out
    ), out


def test_the_doctor_with_no_model_configured_prints_one_fail_line_and_no_traceback(checkout, capsys):
    (checkout / ".env").write_text("MNEMO_MODEL=\n")  # a fresh checkout: nothing set
    status = main(["doctor"])
    out, err = capsys.readouterr()
    assert status == 1, out
    line = row(out, "model setup")
    assert line.startswith("FAIL") and "no chat model is configured" in line and "OPENAI_API_KEY" in line
    assert "Traceback" not in out + err
    assert "the model cannot be used as configured" in out


@pytest.mark.parametrize(
    ("status", "said"),
    [(401, "refused the key (HTTP 401)"), (404, "does not serve the model 'stub-model' (HTTP 404)")],
)
def test_the_doctor_names_a_refused_key_or_an_unknown_model(checkout, capsys, status, said):
    with StubServer() as stub:
        stub.refuse, stub.refuse_status = "model", status
        got, out = doctor(checkout, stub, capsys, MNEMO_MODEL_MAX_RETRIES="0")
    assert got == 1, out
    assert row(out, "plain answer").startswith("FAIL") and said in row(out, "plain answer"), out
    assert "Traceback" not in out


def test_the_doctor_names_a_server_nobody_answers(checkout, capsys):
    from harness.devserver import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    lines = [f"OPENAI_BASE_URL={url}", "OPENAI_API_KEY=k", "MNEMO_MODEL=openai:m", "MNEMO_MODEL_MAX_RETRIES=0"]
    (checkout / ".env").write_text("\n".join(lines) + "\n")
    status = main(["doctor"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"nobody answers at the model server {url}" in row(out, "plain answer"), out
