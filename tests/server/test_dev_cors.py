"""Local front-ends under ``./scripts/dev`` (server/dev_cors.py): the shipped
configs allow no origin; the development server adds the usual local origins
and those of ``MNEMO_DEV_CORS_ORIGINS``. The end-to-end test is a page on
another local origin in headless Chromium (tests/frontend_page.html): it
streams a run with ``X-Api-Key`` from the development server and resumes it
with ``Last-Event-ID``, and is refused by a server on the config as deployed.
"""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from harness.devserver import DevServer, copy_project, token, write_dotenv
from server.dev_cors import EXTRA_ENV, dev_cors, main

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("langgraph.json", "langgraph.postgres.json")
LOCAL = ("http://localhost:3000", "http://127.0.0.1:3000")  # what ./scripts/dev adds
HEADERS = "x-api-key,content-type,last-event-id"  # what the SDKs send; custom headers make browsers preflight


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_configs_allow_no_origin_and_the_sdks_headers(name):
    cors = json.loads((ROOT / name).read_text())["http"]["cors"]
    assert cors["allow_origins"] == [] and "allow_origin_regex" not in cors
    # What the SDKs send once an origin is allowed: the key, JSON, and the resume of a dropped stream.
    assert {"authorization", "content-type", "x-api-key", "last-event-id"} <= set(cors["allow_headers"])


def test_dev_cors_adds_origins_once_in_order_and_keeps_the_rest():
    config = json.loads((ROOT / "langgraph.json").read_text())
    cors = dev_cors(
        config, "http://localhost:3000, http://127.0.0.1:3000,,http://localhost:5173/ http://localhost:3000"
    )
    assert cors["allow_origins"] == ["http://localhost:3000", "http://127.0.0.1:3000", "http://localhost:5173"]
    assert {k: v for k, v in cors.items() if k != "allow_origins"} == {
        k: v for k, v in config["http"]["cors"].items() if k != "allow_origins"
    }
    assert config["http"]["cors"]["allow_origins"] == []  # the config itself is left alone
    assert dev_cors({"http": {"cors": {"allow_origins": ["https://a.example"]}}}, "http://b")["allow_origins"] == [
        "https://a.example",
        "http://b",
    ]
    assert dev_cors({}, "http://b") == {"allow_origins": ["http://b"]}


@pytest.fixture
def shell(monkeypatch):
    """A shell without the settings main() reads."""
    for name in ("CORS_CONFIG", EXTRA_ENV):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_dev_cors_reads_the_config_langgraph_dev_is_given(shell, tmp_path, capsys):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"http": {"cors": {"allow_headers": ["x-other"]}}}))
    for args in (
        ["--config", str(other)],
        ["--port", "8123", "-c", str(other)],
        [f"--config={other}", "--n-jobs-per-worker", "4"],
    ):
        assert main(["http://localhost:3000", *args]) == 0
        out = capsys.readouterr()
        assert json.loads(out.out) == {"allow_headers": ["x-other"], "allow_origins": ["http://localhost:3000"]}
        assert "http://localhost:3000 may call the API" in out.err
    assert main(["http://localhost:3000", "--config", str(tmp_path / "missing.json")]) == 1
    assert "no development CORS origins" in capsys.readouterr().err


def test_more_origins_come_from_the_environment_or_env_and_a_users_cors_config_wins(shell, tmp_path, capsys):
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"env": ".env", "http": {"cors": {"allow_origins": []}}}))
    dotenv = tmp_path / ".env"

    def allowed() -> list[str] | None:
        assert main(["http://localhost:3000", "--config", str(config)]) == 0
        out = capsys.readouterr().out
        return json.loads(out)["allow_origins"] if out else None

    dotenv.write_text(f"{EXTRA_ENV}=http://localhost:5173,http://127.0.0.1:5173\n")
    assert allowed() == ["http://localhost:3000", "http://localhost:5173", "http://127.0.0.1:5173"]
    shell.setenv(EXTRA_ENV, "http://localhost:8080")  # the shell's wins, as for langgraph dev
    assert allowed() == ["http://localhost:3000", "http://localhost:8080"]
    dotenv.write_text('CORS_CONFIG=\'{"allow_origins": ["https://app.example"]}\'\n')
    assert allowed() is None  # the user's configuration, untouched
    dotenv.write_text("")
    assert allowed() == ["http://localhost:3000", "http://localhost:8080"]
    shell.setenv("CORS_CONFIG", '{"allow_origins": []}')
    assert allowed() is None


def preflight(url: str, origin: str) -> httpx.Response:
    return httpx.options(
        f"{url}/threads",
        timeout=10,
        headers={"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": HEADERS},
    )


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass


@pytest.fixture
def frontend():
    """The page's own origin: a static server on ``http://localhost:<port>``."""
    handler = partial(_Quiet, directory=str(Path(__file__).parents[1]))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def run_page(browser, frontend: str, server: DevServer, user_id: str, say: str) -> dict:
    page = browser.new_page()
    try:
        query = urlencode({"api": server.url, "key": token(user_id), "say": say})
        page.goto(f"{frontend}/frontend_page.html?{query}")
        page.wait_for_function("document.querySelector('#result').textContent !== 'waiting'", timeout=120_000)
        return json.loads(page.inner_text("#result"))
    finally:
        page.close()


def api(server: DevServer, path: str, body: dict, user_id: str) -> list | dict:
    res = httpx.post(f"{server.url}{path}", json=body, headers={"X-Api-Key": token(user_id)}, timeout=30)
    res.raise_for_status()
    return res.json()


@pytest.mark.e2e
def test_a_page_on_a_local_origin_streams_from_the_dev_server_only(
    browser, frontend, workdir, server_env, stub, tmp_path
):
    write_dotenv(workdir, stub, MNEMO_DEV_CORS_ORIGINS=f"{frontend},http://localhost:5173")  # as a user would
    dev = DevServer(workdir, server_env)
    # The config as deployed: the shipped http.cors as it is, no development origins.
    deployed_dir = copy_project(tmp_path / "deployed")
    write_dotenv(deployed_dir, stub)
    shipped = json.loads((deployed_dir / "langgraph.json").read_text())["http"]["cors"]
    deployed = DevServer(deployed_dir, {**server_env, "CORS_CONFIG": json.dumps(shipped)})
    dev.launch()
    deployed.launch()
    try:
        dev.wait_ready()
        deployed.wait_ready()

        # Preflights: the usual local origins and the added ones pass with the SDK's header...
        for origin in (*LOCAL, frontend, "http://localhost:5173"):
            res = preflight(dev.url, origin)
            assert res.status_code == 200, (origin, res.text)
            assert res.headers["access-control-allow-origin"] == origin
            allowed = res.headers["access-control-allow-headers"].lower().split(", ")
            assert {"x-api-key", "last-event-id"} <= set(allowed)
        # ...another origin does not; and as deployed, none does.
        assert "access-control-allow-origin" not in preflight(dev.url, "http://evil.example").headers
        for origin in (*LOCAL, frontend):
            res = preflight(deployed.url, origin)
            assert res.status_code == 400 and "access-control-allow-origin" not in res.headers, origin

        # The browser: preflight, thread, streamed run, from the page's origin.
        seen = run_page(browser, frontend, dev, "u_ada", "Remember that I have a cat.")
        assert "error" not in seen, seen
        assert (seen["created"], seen["streamed"], seen["owner"]) == (200, 200, "u_ada")
        assert {"metadata", "values", "messages"} <= set(seen["events"]) and seen["chunks"] > 1
        assert seen["answer"].startswith("ok: Will be remembered")
        # Resumed after its first event (Last-Event-ID, as the SDKs reconnect): the rest, the same answer.
        assert (seen["joined"], seen["resumed"], seen["resumed_answer"]) == (200, seen["all"] - 1, seen["answer"])
        notes = api(dev, "/store/items/search", {"namespace_prefix": ["u_ada", "notes"]}, "u_ada")
        assert [n["value"]["text"] for n in notes["items"]] == ["I have a cat"]

        # The same page against the deployed config: the browser refuses, nothing reaches the API.
        calls = len(stub.requests)
        refused = run_page(browser, frontend, deployed, "u_ada", "Remember that I have a dog.")
        assert refused == {"error": "TypeError: Failed to fetch"}
        assert api(deployed, "/threads/search", {}, "u_ada") == []
        assert len(stub.requests) == calls
        assert dev.trouble() == [] and deployed.trouble() == []
    finally:
        dev.stop()
        deployed.stop()
