"""PostgreSQL-only checks of mnemo's PostgreSQL store (the cross-backend
behaviour is in tests/test_store_conformance.py)."""

from __future__ import annotations

import pytest

from mnemo import DimsMismatchError
from mnemo.postgres_setup import HNSW_EF_SEARCH
from mnemo.stores import open_store
from tests.store_backends import HashEmbeddings


async def test_postgres_database_indexed_with_another_model_is_refused(pg, cached_index):
    uri = pg.create_database("other_model")
    async with open_store(
        postgres_uri=uri, index={"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    ) as store:
        await store.aput(("u", "notes"), "k", {"text": "indexed with a 16-dimensional model"})
    with pytest.raises(DimsMismatchError, match=r"vector\(16\)"):
        async with open_store(postgres_uri=uri, index=cached_index):
            pytest.fail("opened a vector(16) database with a 384-dimensional model")
    pg.drop_database("other_model")


async def test_postgres_index_is_hnsw_cosine_and_iterative(pg, cached_index):
    async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
        async with store.conn.connection() as conn:
            row = await (
                await conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'store_vectors_embedding_idx'")
            ).fetchone()
            assert "hnsw" in row["indexdef"] and "vector_cosine_ops" in row["indexdef"]
            assert (await (await conn.execute("SHOW hnsw.iterative_scan")).fetchone())[
                "hnsw.iterative_scan"
            ] == "strict_order"
            assert (await (await conn.execute("SHOW hnsw.ef_search")).fetchone())["hnsw.ef_search"] == str(
                HNSW_EF_SEARCH
            )
