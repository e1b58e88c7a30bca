"""``bench.llama_server.serve`` yields the server only once it answers ``/health``
(its model loaded), and says why when the server ends first: the wait is
``harness/devserver.py``'s ``wait_ready``, as for the e2e tests' servers. A
stand-in (a Python script) plays ``python -m mnemo local-model serve``, which
bench runs with the arguments ./scripts/dev gives it."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from bench.llama_server import MODELS, command, serve
from harness.devserver import free_port

SMOL = MODELS["smollm2-135m"]

#: Answers 503 on /health for its first second (loading), then 200; with
#: ``--alias broken`` it prints an error and exits instead.
STAND_IN = """
import sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

args = sys.argv[1:]
if args[args.index("--model") + 1] == "broken":
    print("error: failed to load model", flush=True)
    sys.exit(1)
loaded_at = time.monotonic() + 1.0


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if time.monotonic() >= loaded_at else 503)
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", int(args[args.index("--port") + 1])), Health).serve_forever()
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    return script


def _args(script: Path, port: int, model: str = "smollm2-135m") -> list[str]:
    return [sys.executable, str(script), "--model", model, "--port", str(port)]


def test_the_command_is_the_sidecar_of_scripts_dev(tmp_path: Path):
    args = command(SMOL, 8123, log=tmp_path / "log")
    assert args[:5] == [sys.executable, "-m", "mnemo", "local-model", "serve"]
    assert args[args.index("--model") + 1] == "smollm2-135m" and args[args.index("--port") + 1] == "8123"
    assert args[args.index("--log") + 1] == str(tmp_path / "log")


def test_the_server_is_yielded_once_its_health_answers(stand_in: Path, tmp_path: Path):
    port = free_port()
    with serve(SMOL, port, tmp_path / "log", ready_s=30, args=_args(stand_in, port)) as base_url:
        assert base_url == f"http://127.0.0.1:{port}/v1"
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200  # loaded already
    with pytest.raises(httpx.ConnectError):  # stopped with the block
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)


def test_a_server_that_ends_first_is_reported_with_what_it_said(stand_in: Path, tmp_path: Path):
    port = free_port()
    with pytest.raises(RuntimeError, match=r"the local model server exited \(1\):\n.*failed to load model"):
        with serve(SMOL, port, tmp_path / "log", ready_s=10, args=_args(stand_in, port, "broken")):
            pass
