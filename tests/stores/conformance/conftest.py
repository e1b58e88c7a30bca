"""The conformance suite's stores, shared by its files: each test runs once per backend of
:data:`harness.store_backends.BACKENDS` (a case marked ``platform_gap`` is a strict xfail on the
platform's store)."""

from __future__ import annotations

import pytest
from langgraph.store.base import PutOp

from harness.store_backends import BACKENDS, import_platform_store_module, open_backend, truncate
from mnemo.core import NOTES
from mnemo.stores.factory import open_store

#: Sweep every second so TTL tests take seconds, not minutes.
FAST_TTL = {"sweep_interval_minutes": 1 / 60}


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    gap = request.node.get_closest_marker("platform_gap")
    if request.param == "platform" and gap is not None:
        request.applymarker(pytest.mark.xfail(reason=f"platform store: {gap.args[0]}", strict=True))
    return request.param


@pytest.fixture
def uri(backend, request) -> str | None:
    """The PostgreSQL URI on the ``postgres`` backend, else ``None``."""
    return request.getfixturevalue("pg").uri if backend == "postgres" else None


@pytest.fixture(scope="session")
def platform_dir(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("langgraph_api")
    import_platform_store_module(workdir)
    return workdir


@pytest.fixture
async def store(backend, uri, cached_index, request, tmp_path):
    if backend == "platform":
        async with open_backend(backend, uri, cached_index, tmp_path, request) as opened:
            yield opened
        return
    async with open_store(postgres_uri=uri, index=cached_index, ttl=FAST_TTL) as opened:
        if uri is not None:
            await truncate(uri)
        yield opened


@pytest.fixture
def put_raw_notes(store, user):
    """Puts ``count`` notes straight into ``user``'s namespace (no embedding, index or audit):
    ``fact 0`` to ``fact count-1``, updated in that order, more than a backend's page."""

    async def put(count: int) -> None:
        await store.abatch(
            [
                PutOp(
                    user.namespace(NOTES),
                    f"k{i:03d}",
                    {"id": f"k{i:03d}", "text": f"fact {i}", "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}"},
                    index=False,
                )
                for i in range(count)
            ]
        )

    return put
