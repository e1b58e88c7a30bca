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
    async with open_store(postgres_uri=uri, index={"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}) as store:
        await store.aput(("u", "notes"), "k", {"text": "indexed with a 16-dimensional model"})
    with pytest.raises(DimsMismatchError, match=r"vector\(16\)"):
        async with open_store(postgres_uri=uri, index=cached_index):
            pytest.fail("opened a vector(16) database with a 384-dimensional model")
    pg.drop_database("other_model")


async def test_postgres_index_is_hnsw_cosine_and_iterative(pg, cached_index):
    async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
        async with store.conn.connection() as conn:
            row = await (await conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'store_vectors_embedding_idx'")).fetchone()
            assert "hnsw" in row["indexdef"] and "vector_cosine_ops" in row["indexdef"]
            assert (await (await conn.execute("SHOW hnsw.iterative_scan")).fetchone())["hnsw.iterative_scan"] == "strict_order"
            assert (await (await conn.execute("SHOW hnsw.ef_search")).fetchone())["hnsw.ef_search"] == str(HNSW_EF_SEARCH)


async def test_exact_dedupe_lookup_probes_the_norm_index_not_the_users_rows(pg):
    """The dedupe's ``filter={"norm": ...}`` is served by mnemo's hash index,
    so a write's cost does not grow with the user's notes (or the table).
    (Plans, not timings: the planner is what decides.)"""
    from langgraph.store.base import PutOp

    from mnemo import User, aremember

    uri = pg.create_database("norm_index")
    user = User.of("u_norm")
    ns = user.namespace("notes")
    try:
        index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
        async with open_store(postgres_uri=uri, index=index) as store:
            await store.abatch([PutOp(ns, f"k{i}", {"id": f"k{i}", "text": f"fact {i}", "norm": f"fact {i}"},
                                      index=False) for i in range(5000)])
            assert (await aremember(store, user, "Fact 4321."))["status"] == "duplicate"  # found by norm
            async with store.conn.connection() as conn:
                await conn.execute("ANALYZE store")
                # The store's rendering of the filter (langgraph-checkpoint-postgres 3.2.0):
                # the key is a parameter too; past five executions a prepared statement
                # may switch to a generic plan, which must still probe the index.
                await conn.execute(
                    "PREPARE dedupe(text, text) AS SELECT key FROM store WHERE "
                    "(prefix = 'u_norm.notes' OR prefix LIKE 'u_norm.notes.%') AND value->$1 = $2::jsonb "
                    "ORDER BY updated_at DESC LIMIT 1")
                for i in range(8):
                    plan = [r["QUERY PLAN"] for r in await (await conn.execute(
                        f"EXPLAIN EXECUTE dedupe('norm', '\"fact {i}\"')")).fetchall()]
                    assert any("mnemo_store_norm_idx" in line for line in plan), plan
    finally:
        pg.drop_database("norm_index")


async def test_a_small_namespace_is_searched_exactly_and_the_setting_does_not_leak(pg, monkeypatch):
    """``MnemoPostgresStore`` searches a namespace of at most
    ``EXACT_SEARCH_MAX_ROWS`` rows exactly (bench.many_users: the planner's
    filtered HNSW scan missed true neighbours of large users), and resets the
    planner setting after the batch (the pooled connection serves every op)."""
    from langgraph.store.base import PutOp, SearchOp

    from mnemo import postgres_store

    uri = pg.create_database("exact_search")
    seen: list[bool] = []
    original = postgres_store._all_small

    async def spy(cur, queries):
        seen.append(await original(cur, queries))
        return seen[-1]

    monkeypatch.setattr(postgres_store, "_all_small", spy)
    index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    try:
        async with open_store(postgres_uri=uri, index=index, pool_config={"min_size": 1, "max_size": 1}) as store:
            await store.abatch([PutOp(("u", "notes"), f"k{i}", {"text": f"fact {i}"}) for i in range(30)])
            exact = sorted(range(30), key=lambda i: -sum(
                a * b for a, b in zip(HashEmbeddings(16).embed_query("fact 7"),
                                      HashEmbeddings(16).embed_documents([f"fact {i}"])[0], strict=True)))
            hits = await store.asearch(("u", "notes"), query="fact 7", limit=5)
            assert [h.key for h in hits] == [f"k{i}" for i in exact[:5]]
            monkeypatch.setattr(postgres_store, "EXACT_SEARCH_MAX_ROWS", 29)
            await store.abatch([SearchOp(("u", "notes"), query="fact 7", limit=5)])
            assert seen == [True, False]  # 30 rows: small at 20,000, large at 29
            async with store.conn.connection() as conn:
                row = await (await conn.execute("SHOW enable_indexscan")).fetchone()
                assert row["enable_indexscan"] == "on"
    finally:
        pg.drop_database("exact_search")
