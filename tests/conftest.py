from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from graphs.agent import builder
from harness.scripted import ScriptedChatModel
from mnemo import User
from mnemo.access.entitlements import aadmit, aset_entitlement, ausage_today
from mnemo.audit import Origin
from mnemo.models.build import MODELS
from mnemo.stores.embeddings import index_config
from nodes import background_writer
from tests.agent_harness import FakeServer, Script
from tests.skips import (
    enable_with,
    pytest_terminal_summary,  # noqa: F401  (the hook, found here by pytest)
)


@pytest.fixture(autouse=True)
def fresh_structured_output(monkeypatch):
    """Each test learns the model servers' ways of structured output anew (and
    sees their warnings): the process-level memory of mnemo.models is emptied."""
    from mnemo.models import structured

    monkeypatch.setattr(structured, "_worked", {})
    monkeypatch.setattr(structured, "_warned", set())
    monkeypatch.delenv(structured.ENV, raising=False)


@pytest.fixture(scope="session")
def index():
    """The real bundled embedder (multilingual-e5-small), loaded once."""
    return index_config()


@pytest.fixture(scope="session")
def cached_index():
    """The same model behind a cache, so each text is embedded once per session
    whichever backend of the conformance suite asks first."""
    from harness.store_backends import CachedEmbeddings
    from mnemo.stores.embeddings import embeddings

    return index_config(CachedEmbeddings(embeddings))


@pytest.fixture(scope="session")
def pg(tmp_path_factory):
    """The embedded PostgreSQL, started once per session in a temporary
    directory; an error here fails the suite (``MNEMO_SKIP_POSTGRES=1`` skips)."""
    from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
    from mnemo.stores import embedded_postgres as pgserver

    if skip_postgres():
        pytest.skip(SKIP_POSTGRES_REASON)
    server = pgserver.start(tmp_path_factory.mktemp("pg") / "data", database="conformance", cleanup="delete")
    yield server
    server.stop()


@pytest.fixture
def store(index) -> InMemoryStore:
    return InMemoryStore(index=index)


class CountingStore(InMemoryStore):
    """Counts store round trips (every async method goes through ``abatch``) and
    keeps the ops they carried (``ops``; clear it with ``trips`` to watch one read)."""

    trips = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.ops: list = []

    async def abatch(self, ops):
        ops = list(ops)
        self.trips += 1
        self.ops.extend(ops)
        return await super().abatch(ops)


@pytest.fixture
def counting_store(index) -> CountingStore:
    return CountingStore(index=index)


@pytest.fixture
def user() -> User:
    return User.of("u_zhou")


@pytest.fixture
def admit_at_once(store, user):
    """Twenty calls of a tool by ``user`` at once, after an admin's daily quota
    when one is given: how many were admitted, checked to be what the usage
    counted (no lost update). The store is the test's own, so the conformance
    suite runs it on every backend."""

    async def admit(tool: str, *, daily_limit: int | None = None) -> int:
        if daily_limit is not None:
            await aset_entitlement(
                store, user, tool, daily_limit=daily_limit, origin=Origin(source="admin", actor="admin_1")
            )
        decisions = await asyncio.gather(*(aadmit(store, user, tool) for _ in range(20)))
        admitted = sum(d["allowed"] for d in decisions)
        assert await ausage_today(store, user) == ({tool: admitted} if admitted else {})
        return admitted

    return admit


@pytest.fixture
def stub():
    """A local OpenAI-compatible model server (harness/stub_openai.py)."""
    from harness.stub_openai import StubServer

    with StubServer() as server:
        yield server


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser():
    """Headless Debian Chromium through Playwright (no browser download); CI
    installs it (.ci/run), elsewhere a test that needs it is skipped without it."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide Chromium for the browser tests (.ci/run installs it)")
        pytest.skip(enable_with("Chromium is not installed", "apt-get install chromium"))
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A user's checkout of the project (see harness/devserver.py)."""
    from harness.devserver import copy_project

    return copy_project(tmp_path / "mnemo")


@pytest.fixture
def server_env(workdir, stub) -> dict[str, str]:
    """A user's shell, and a ``.env`` pointing the server at the stub model."""
    from harness.devserver import server_environment, write_dotenv

    write_dotenv(workdir, stub)
    return server_environment()


# --------------------------------------------------------------------------- the agent graph, scripted


@pytest.fixture
def script():
    return Script()


@pytest.fixture
def model(monkeypatch, script):
    model = ScriptedChatModel(respond=script)
    monkeypatch.setitem(MODELS, "scripted", model)
    return model


@pytest.fixture
def agent(store):
    return builder.compile(checkpointer=InMemorySaver(), store=store)


@pytest.fixture
def fake_platform(agent, monkeypatch):
    """The LangGraph server as the background writer sees it (FakeServer)."""
    fake = FakeServer(agent)
    monkeypatch.setitem(sys.modules, "langgraph_api", sys.modules.get("langgraph_api") or object())
    real = background_writer.aschedule_extraction
    monkeypatch.setattr(
        "nodes.write_memory.aschedule_extraction",
        lambda thread_id, context, *, delay_s: real(thread_id, context, delay_s=delay_s, client=fake),
    )
    import langgraph_sdk

    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **kw: fake)
    return fake
