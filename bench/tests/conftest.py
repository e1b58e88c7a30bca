"""Fixtures of every bench test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="session")
def _cache_dir(tmp_path_factory):
    """The default embedding cache of a run the tests start goes to a
    temporary folder, never the repository's ``bench/.cache``."""
    from bench import common

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(common, "CACHE_DIR", tmp_path_factory.mktemp("bench-cache"))
        yield


@pytest.fixture(params=["memory", "postgres"])
def postgres_uri(request, tmp_path):
    """``None`` for the in-memory store, or an embedded PostgreSQL's URI."""
    if request.param == "memory":
        yield None
        return
    from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
    from mnemo.stores.embedded_postgres import running as running_embedded_postgres

    if skip_postgres():
        pytest.skip(SKIP_POSTGRES_REASON)
    with running_embedded_postgres(tmp_path / "pgdata", database="bench", cleanup="delete") as pg:
        yield pg.uri
