"""``bench.llama_server.serve`` yields the server only once it answers ``/health``
(its model loaded), and says why when the server ends first: the wait is
``tests/devserver.py``'s ``wait_ready``, as for the e2e tests' servers. A
stand-in ``llama-server`` (a Python script) plays the server."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

from bench.llama_server import serve
from tests.devserver import free_port

#: Answers 503 on /health for its first second (loading), then 200; with
#: ``--alias broken`` it prints an error and exits instead.
STAND_IN = """
import sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

args = sys.argv[1:]
if args[args.index("--alias") + 1] == "broken":
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
    binary = tmp_path / "llama-server"
    binary.write_text(f"#!{sys.executable}\n{STAND_IN}")
    binary.chmod(0o755)
    return binary


def test_the_server_is_yielded_once_its_health_answers(stand_in: Path, tmp_path: Path):
    port = free_port()
    with serve(stand_in, tmp_path / "m.gguf", port, tmp_path / "log", alias="m", ready_s=30) as base_url:
        assert base_url == f"http://127.0.0.1:{port}/v1"
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200  # loaded already
    with pytest.raises(httpx.ConnectError):  # stopped with the block
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)


def test_a_server_that_ends_first_is_reported_with_what_it_said(stand_in: Path, tmp_path: Path):
    with pytest.raises(RuntimeError, match=r"llama-server exited \(1\):\n.*failed to load model"):
        with serve(stand_in, tmp_path / "m.gguf", free_port(), tmp_path / "log", alias="broken", ready_s=10):
            pass
