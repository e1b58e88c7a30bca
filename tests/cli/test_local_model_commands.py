"""``python -m mnemo local-model``: ``plan`` serves a local model only when no
model is configured (environment or ``./.env``, read as the server reads it) and
the setting does not turn it off; ``wait`` returns when the server answers and
fails with its log when it stopped; the sidecar ends with its parent. The model
itself runs in tests/e2e/test_local_model.py."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from mnemo.cli import main
from mnemo.models import LOCAL_MODELS, local_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A user's checkout with nothing in the shell; what ``plan`` loads from ``.env`` is put back."""
    saved = dict(os.environ)
    for name in [n for n in os.environ if n.startswith(("OPENAI_", "MNEMO_"))]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    os.environ.clear()
    os.environ.update(saved)


def plan(capsys) -> tuple[int, dict[str, str], str]:
    status = main(["local-model", "plan"])
    captured = capsys.readouterr()
    values = {}
    for line in captured.out.splitlines():
        words = shlex.split(line)
        assert words[0] == "export" and len(words) == 2, line
        name, value = words[1].split("=", 1)
        values[name] = value
    return status, values, captured.err


def test_with_no_model_configured_the_local_one_is_planned(checkout, capsys):
    (checkout / ".env").write_text((ROOT / ".env.example").read_text())  # copied as is
    status, values, _ = plan(capsys)
    assert status == 0
    qwen = LOCAL_MODELS["qwen2.5-1.5b"]
    assert values["MNEMO_LOCAL_MODEL"] == "qwen2.5-1.5b" and values["MNEMO_MODEL"] == f"openai:{qwen.alias}"
    assert values["OPENAI_BASE_URL"].startswith("http://127.0.0.1:") and values["OPENAI_BASE_URL"].endswith("/v1")
    assert values["OPENAI_API_KEY"].startswith("sk-local-") and len(values["OPENAI_API_KEY"]) > 30
    assert values["MNEMO_MODEL_TIMEOUT_S"] == "300"
    status, again, _ = plan(capsys)
    assert again["OPENAI_API_KEY"] != values["OPENAI_API_KEY"]  # a key per start


@pytest.mark.parametrize("name", ["MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"])
@pytest.mark.parametrize("where", ["environment", ".env"])
def test_any_configured_model_setting_means_no_local_model(checkout, capsys, monkeypatch, name, where):
    assert plan(capsys)[0] == 0  # the precondition: unconfigured, it is planned
    if where == "environment":
        monkeypatch.setenv(name, "openai:x" if name == "MNEMO_MODEL" else "http://127.0.0.1:9/v1")
    else:
        (checkout / ".env").write_text(f"{name}=something\n")
    status, values, _ = plan(capsys)
    assert (status, values) == (1, {})


def test_the_setting_turns_it_off_or_names_the_small_model(checkout, capsys, monkeypatch):
    (checkout / ".env").write_text("MNEMO_LOCAL_MODEL=off\n")
    assert plan(capsys)[:2] == (1, {})
    monkeypatch.delenv("MNEMO_LOCAL_MODEL")  # loaded from .env by the call above; a new start reads it anew
    (checkout / ".env").write_text("MNEMO_LOCAL_MODEL=smollm2-135m\n")
    status, values, _ = plan(capsys)
    assert status == 0 and values["MNEMO_MODEL"] == "openai:smollm2-135m-instruct"


def test_an_unknown_model_is_a_clear_error(checkout, capsys):
    (checkout / ".env").write_text("MNEMO_LOCAL_MODEL=gpt-5\n")
    status, values, err = plan(capsys)
    assert (status, values) == (2, {})
    assert "MNEMO_LOCAL_MODEL is one of qwen2.5-1.5b, smollm2-135m, off; got 'gpt-5'" in err


@pytest.mark.parametrize("name", ["MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"])
def test_an_empty_env_line_that_would_undo_the_local_model_is_named(checkout, capsys, name):
    """langgraph dev applies ``NAME=`` over the environment: the exports would be undone."""
    assert plan(capsys)[0] == 0  # the precondition: unconfigured, it is planned
    (checkout / ".env").write_text(f"MNEMO_LOCAL_MODEL=smollm2-135m\n{name}=\n")
    status, values, err = plan(capsys)
    assert (status, values) == (1, {})
    assert f".env has empty {name}= lines, which langgraph dev would apply over the local model's settings" in err


def test_a_configured_timeout_is_kept(checkout, capsys):
    (checkout / ".env").write_text("MNEMO_MODEL_TIMEOUT_S=60\n")
    status, values, _ = plan(capsys)
    assert status == 0 and "OPENAI_BASE_URL" in values and "MNEMO_MODEL_TIMEOUT_S" not in values


def test_the_cache_named_in_dotenv_reaches_the_sidecar(checkout, capsys, tmp_path):
    (checkout / ".env").write_text(f"MNEMO_CACHE_DIR={tmp_path / 'models'}\n")
    status, values, _ = plan(capsys)
    assert status == 0 and values["MNEMO_CACHE_DIR"] == str(tmp_path / "models")


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_wait_returns_once_the_server_answers(checkout, monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_port}/v1")
        assert main(["local-model", "wait", "--pid", str(os.getpid())]) == 0
    finally:
        server.shutdown()


def test_wait_fails_with_the_log_when_the_server_stopped(checkout, monkeypatch, capsys):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    log = checkout / "model.log"
    log.write_text("llama_model_load: error loading model: truncated file\n")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert main(["local-model", "wait", "--pid", str(gone.pid), "--log", str(log)]) == 1
    err = capsys.readouterr().err
    assert f"the local model stopped before it answered (its log: {log})" in err and "truncated file" in err


def test_wait_sees_a_server_that_exited_unreaped(checkout, monkeypatch, capsys):
    """./scripts/dev's shell may not have reaped its exited sidecar yet: a zombie is not a server."""
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    status = Path(f"/proc/{zombie.pid}/status")
    while status.exists() and "\nState:\tZ" not in status.read_text():
        threading.Event().wait(0.05)  # exited, not reaped: still answers kill(pid, 0)
    assert status.exists()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    try:
        assert main(["local-model", "wait", "--pid", str(zombie.pid)]) == 1
    finally:
        zombie.wait()
    assert "the local model stopped before it answered" in capsys.readouterr().err


def test_the_sidecar_ends_when_its_parent_does_not_before(tmp_path):
    """The parent (./scripts/dev, then langgraph dev) dies: the sidecar's wait returns,
    and only then (the parent's last word comes before the child's)."""
    child = (
        "import os, sys; from mnemo.models.local_server import serve_while; "
        "print('child', flush=True); serve_while(int(sys.argv[1]), poll_s=0.1); print('ended', flush=True)"
    )
    out = tmp_path / "out"
    # As ./scripts/dev does: the parent's pid ($$) is given, so a parent gone before the child looks is seen too.
    script = (
        f'{shlex.quote(sys.executable)} -c {shlex.quote(child)} "$$" >> {out} & '
        f"until grep -q child {out} 2>/dev/null; do sleep 0.1; done; sleep 1; echo parent-ends >> {out}"
    )
    parent = subprocess.Popen(["bash", "-c", script], cwd=ROOT)
    parent.wait(timeout=120)
    for _ in range(600):  # it polls every 0.1 s: ended long before 60 s, however loaded the machine
        if out.read_text().endswith("ended\n"):
            break
        threading.Event().wait(0.1)
    assert out.read_text().split() == ["child", "parent-ends", "ended"]


def test_the_start_up_lines_say_what_is_served_where_it_is_cached_and_how_to_switch(tmp_path):
    served = local_server.Served(LOCAL_MODELS["qwen2.5-1.5b"], tmp_path / "q.gguf", "http://127.0.0.1:5/v1", 4.2, None)
    lines = local_server.startup_lines(served, tmp_path / "cache", tmp_path / "log")
    assert len(lines) == 3 and all(line.startswith("mnemo: ") for line in lines)
    assert "local model qwen2.5-1.5b (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB)" in lines[0]
    assert "http://127.0.0.1:5/v1, loaded in 4.2 s" in lines[0] and str(tmp_path / "log") in lines[0]
    assert f"cached in {tmp_path / 'cache'} (MNEMO_CACHE_DIR)" in lines[1]
    assert "MNEMO_MODEL" in lines[2] and "OPENAI_API_KEY" in lines[2] and "MNEMO_LOCAL_MODEL=off" in lines[2]
