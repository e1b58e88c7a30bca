from __future__ import annotations

import pytest
from langgraph.store.memory import InMemoryStore

from mnemo import User
from mnemo.embeddings import index_config


@pytest.fixture(scope="session")
def index():
    """The real bundled embedder (multilingual-e5-small), loaded once."""
    return index_config()


@pytest.fixture
def store(index) -> InMemoryStore:
    return InMemoryStore(index=index)


@pytest.fixture
def user() -> User:
    return User.of("u_zhou")
