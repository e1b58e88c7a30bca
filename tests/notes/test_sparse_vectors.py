"""mnemo.notes.sparse_vectors's memo of query vectors: a replay's repeated question is
encoded once within the block, and a turn (no block) encodes every time."""

from __future__ import annotations

from mnemo.notes import sparse_vectors
from mnemo.notes.sparse_vectors import memoized_query_vectors


async def test_a_query_is_encoded_once_within_the_memo_and_every_time_without(monkeypatch):
    encoded: list[str] = []

    def encode(query: str) -> dict[str, float]:
        encoded.append(query)
        return {query.split()[0].lower(): 1.0}

    monkeypatch.setattr(sparse_vectors, "_query_vector", encode)
    assert await sparse_vectors.aquery_vector("Jazz tonight?") == {"jazz": 1.0}
    assert await sparse_vectors.aquery_vector("Jazz tonight?") == {"jazz": 1.0}
    assert encoded == ["Jazz tonight?"] * 2  # the precondition: without the block, each call encodes

    memo: dict = {}
    with memoized_query_vectors(memo):
        assert await sparse_vectors.aquery_vector("Jazz tonight?") == {"jazz": 1.0}
        assert await sparse_vectors.aquery_vector("Coffee later?") == {"coffee": 1.0}
    with memoized_query_vectors(memo):  # shared between blocks
        assert await sparse_vectors.aquery_vector("Jazz tonight?") == {"jazz": 1.0}
    assert encoded == ["Jazz tonight?"] * 3 + ["Coffee later?"]
    assert await sparse_vectors.aquery_vector("Coffee later?") == {"coffee": 1.0}  # the block is over
    assert encoded[-1] == "Coffee later?" and len(encoded) == 5
