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
