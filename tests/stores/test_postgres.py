"""PostgreSQL-only checks of mnemo's PostgreSQL store (the cross-backend
behaviour is in tests/stores/conformance/test_memory.py)."""

from __future__ import annotations

import math

import pytest

from harness.store_backends import HashEmbeddings, terminate_connections
from mnemo import DimsMismatchError
from mnemo.stores.factory import open_store
from mnemo.stores.postgres_setup import HNSW_EF_SEARCH


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


async def test_stale_pooled_connections_cost_no_read(pg, cached_index):
    """What a PostgreSQL restart does to a pool: every pooled connection's
    server process is gone. Each is checked before use and replaced."""
    import asyncio

    from mnemo import User, arecall, aremember

    uri = pg.create_database("stale_pool")
    user = User.of("u_zhou")
    async with open_store(postgres_uri=uri, index=cached_index) as store:
        await aremember(store, user, "The user has two cats.")
        await asyncio.gather(*(arecall(store, user, f"pets {i}") for i in range(8)))  # several pooled connections
        assert store.conn.get_stats()["pool_size"] > 1  # the precondition: connections wait in the pool
        assert terminate_connections(pg, "stale_pool") > 1
        outcomes = [await asyncio.gather(arecall(store, user, "pets"), return_exceptions=True) for _ in range(15)]
        assert [o for (o,) in outcomes if isinstance(o, BaseException)] == []
    pg.drop_database("stale_pool")


def test_the_embedded_servers_socket_is_private_even_on_a_long_path(tmp_path):
    """A data directory too long for a socket name puts the socket under the
    runtime directory; with trust authentication, whoever reaches it is a
    superuser, so it must be reachable only by the account running mnemo."""
    import os
    import shutil
    import stat
    import subprocess
    import sys

    import psycopg

    from mnemo.stores import embedded_postgres as pgserver

    datadir = tmp_path / ("d" * 60) / ("e" * 60) / "pgdata"
    server = pgserver.start(datadir, database="private", cleanup="delete")
    try:
        info = server.server.get_postmaster_info()
        assert info.socket_dir != server.datadir  # the precondition: the long-path case
        for path in (info.socket_dir, info.socket_path):
            assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path
        with psycopg.connect(server.uri) as conn:  # and for every later start (postgresql.auto.conf)
            row = conn.execute(
                "SELECT setting FROM pg_file_settings WHERE name = 'unix_socket_permissions' ORDER BY seqno DESC"
            ).fetchone()
        assert row is not None and row[0] == "0700"
        if os.geteuid() == 0 and shutil.which("runuser"):  # another account really cannot connect
            code = f"import socket; socket.socket(socket.AF_UNIX).connect({str(info.socket_path)!r})"
            other = subprocess.run(
                ["runuser", "-u", "nobody", "--", sys.executable, "-c", code], capture_output=True, text=True
            )
            assert other.returncode != 0 and "Permission denied" in other.stderr, other.stderr
    finally:
        server.stop()


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
            await store.abatch(
                [
                    PutOp(ns, f"k{i}", {"id": f"k{i}", "text": f"fact {i}", "norm": f"fact {i}"}, index=False)
                    for i in range(5000)
                ]
            )
            assert (await aremember(store, user, "Fact 4321."))["status"] == "duplicate"  # found by norm
            async with store.conn.connection() as conn:
                await conn.execute("ANALYZE store")
                # The store's rendering of the filter (langgraph-checkpoint-postgres 3.2.0):
                # the key is a parameter too; past five executions a prepared statement
                # may switch to a generic plan, which must still probe the index.
                await conn.execute(
                    "PREPARE dedupe(text, text) AS SELECT key FROM store WHERE "
                    "(prefix = 'u_norm.notes' OR prefix LIKE 'u_norm.notes.%') AND value->$1 = $2::jsonb "
                    "ORDER BY updated_at DESC LIMIT 1"
                )
                for i in range(8):
                    plan = [
                        r["QUERY PLAN"]
                        for r in await (
                            await conn.execute(f"EXPLAIN EXECUTE dedupe('norm', '\"fact {i}\"')")
                        ).fetchall()
                    ]
                    assert any("mnemo_store_norm_idx" in line for line in plan), plan
    finally:
        pg.drop_database("norm_index")


def exact_top(query: str, texts: dict[str, str], k: int) -> list[str]:
    """The keys of the ``k`` texts nearest ``query`` by cosine (HashEmbeddings(16)), computed here."""
    embed = HashEmbeddings(16)
    q = embed.embed_query(query)
    score = {key: sum(a * b for a, b in zip(q, embed.embed_query(t), strict=True)) for key, t in texts.items()}
    return sorted(score, key=lambda key: -score[key])[:k]


def spy_exact_searches(monkeypatch) -> list[set[int]]:
    """Record, per batch, which searches the store chose to run exactly."""
    from mnemo.stores import postgres as postgres_store
    from mnemo.stores import postgres_search

    seen: list[set[int]] = []
    original = postgres_search.aexact_searches

    async def spy(cur, search_ops):
        seen.append(await original(cur, search_ops))
        return seen[-1]

    monkeypatch.setattr(postgres_store, "aexact_searches", spy)
    return seen


async def test_a_small_namespace_is_searched_exactly_and_the_setting_does_not_leak(pg, monkeypatch):
    """``MnemoPostgresStore`` searches a namespace of at most
    ``ANN_MIN_ROWS`` rows exactly (bench.many_users: the planner's filtered
    HNSW scan missed true neighbours of large users), a namespace that is
    neither large nor most of the table too, and resets the planner setting
    after the batch (the pooled connection serves every op)."""
    from langgraph.store.base import PutOp, SearchOp

    from mnemo.stores import postgres_search

    uri = pg.create_database("exact_search")
    seen = spy_exact_searches(monkeypatch)
    index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    u_texts = {f"k{i}": f"fact {i}" for i in range(30)}
    try:
        async with open_store(postgres_uri=uri, index=index, pool_config={"min_size": 1, "max_size": 1}) as store:
            await store.abatch([PutOp(("u", "notes"), k, {"text": t}) for k, t in u_texts.items()])
            await store.abatch([PutOp(("v", "notes"), f"k{i}", {"text": f"other {i}"}) for i in range(40)])
            hits = await store.asearch(("u", "notes"), query="fact 7", limit=5)
            assert [h.key for h in hits] == exact_top("fact 7", u_texts, 5)
            assert seen == [{0}]  # 30 rows: at most ANN_MIN_ROWS
            monkeypatch.setattr(postgres_search, "ANN_MIN_ROWS", 20)
            await store.abatch([SearchOp(("u", "notes"), query="fact 7", limit=5)])
            assert seen[-1] == {0}  # past ANN_MIN_ROWS, but no statistics yet: exact
            async with store.conn.connection() as conn:
                await conn.execute("ANALYZE store, store_vectors")
            await store.abatch([SearchOp(("u", "notes"), query="fact 7", limit=5)])
            assert seen[-1] == {0}  # 30 of 70 vectors: not most of the table
            monkeypatch.setattr(postgres_search, "EXACT_SEARCH_MAX_ROWS", 29)
            await store.abatch([SearchOp(("u", "notes"), query="fact 7", limit=5)])
            assert seen[-1] == set()  # past EXACT_SEARCH_MAX_ROWS: HNSW
            async with store.conn.connection() as conn:
                row = await (await conn.execute("SHOW enable_indexscan")).fetchone()
                assert row["enable_indexscan"] == "on"
    finally:
        pg.drop_database("exact_search")


async def test_a_namespace_holding_most_of_the_table_is_searched_through_hnsw(pg, monkeypatch):
    """Its filter keeps most of the graph: HNSW (a 20,000-note user's search
    took 84 ms exactly, 8 ms through HNSW); a small one beside it stays exact.
    Sizes past ``ANN_MIN_ROWS`` are the planner's estimates: exact until analysed."""
    from langgraph.store.base import PutOp, SearchOp

    from mnemo.stores import postgres_search

    uri = pg.create_database("ann_search")
    seen = spy_exact_searches(monkeypatch)
    monkeypatch.setattr(postgres_search, "ANN_MIN_ROWS", 20)
    index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    try:
        async with open_store(postgres_uri=uri, index=index) as store:
            await store.abatch([PutOp(("big", "notes"), f"k{i}", {"text": f"fact {i}"}) for i in range(60)])
            await store.abatch([PutOp(("small", "notes"), f"k{i}", {"text": f"other {i}"}) for i in range(10)])
            searches = [SearchOp(("big", "notes"), query="fact 7", limit=5), SearchOp(("small", "notes"), query="x")]
            await store.abatch(searches)
            assert seen[-1] == {0, 1}  # no statistics yet: exact
            async with store.conn.connection() as conn:
                await conn.execute("ANALYZE store, store_vectors")
            await store.abatch(searches)
            assert seen[-1] == {1}  # 60 of 70 vectors: HNSW; 10 rows: exact
    finally:
        pg.drop_database("ann_search")


class PlacedEmbeddings(HashEmbeddings):
    """Unit vectors at a chosen angle from the query's (``"<angle> <axis>"``:
    radians away from axis 0, towards ``axis``; anything else is the query)."""

    def _vec(self, text: str) -> list[float]:
        angle, axis = (float(text.split()[0]), int(text.split()[1])) if text[0].isdigit() else (0.0, 1)
        v = [0.0] * self.dims
        v[0], v[axis] = math.cos(angle), math.sin(angle)
        return v


async def test_a_search_through_hnsw_that_comes_back_short_is_run_again_exactly(pg, monkeypatch):
    """Never fewer hits than asked because the approximate scan filtered them
    out, and never another user's: here HNSW (iterative scans off, a small
    ``ef_search``, so the planner's index scan returns the 10 vectors nearest
    of the whole table) finds 2 of the user's 30 notes and 8 of the other
    user's, at distinct distances well apart: short, but not empty."""
    from langgraph.store.base import PutOp

    from mnemo.stores import postgres_search
    from mnemo.stores.postgres import MnemoPostgresStore

    async def approximate(conn):  # the HNSW scan at its most lossy, and chosen by the planner
        await conn.execute("SET hnsw.iterative_scan = off")
        await conn.execute("SET hnsw.ef_search = 10")
        await conn.execute("SET enable_sort = off")

    passes: list[tuple[bool, list[int]]] = []
    original = MnemoPostgresStore._asearch

    async def spy(self, search_ops, results, cur, *, exactly):
        await original(self, search_ops, results, cur, exactly=exactly)
        passes.append((exactly, [len(results[idx]) for idx, _ in search_ops]))

    monkeypatch.setattr(MnemoPostgresStore, "_asearch", spy)
    monkeypatch.setattr(postgres_search, "ANN_MIN_ROWS", 0)
    monkeypatch.setattr(postgres_search, "ANN_MIN_SHARE", 1e-6)  # every namespace through HNSW first
    uri = pg.create_database("short_search")
    index = {"embed": PlacedEmbeddings(16), "dims": 16, "fields": ["text"]}
    # Angles from the query: the user's nearest two, then the other user's
    # eight, then the user's other 28.
    near = {f"near{i}": f"{0.05 * (i + 1):.2f} {1 + i}" for i in range(2)}
    far = {f"far{i:02d}": f"{1.0 + 0.02 * i:.2f} {11 + i % 5}" for i in range(28)}
    theirs = {f"k{i}": f"{0.3 + 0.01 * i:.2f} {3 + i}" for i in range(8)}
    try:
        async with open_store(postgres_uri=uri, index=index, pool_config={"configure": approximate}) as store:
            await store.abatch([PutOp(("a", "notes"), k, {"text": t}) for k, t in {**near, **far}.items()])
            await store.abatch([PutOp(("b", "notes"), k, {"text": t}) for k, t in theirs.items()])
            async with store.conn.connection() as conn:
                await conn.execute("ANALYZE store, store_vectors")
            hits = await store.asearch(("a", "notes"), query="the query", limit=5)
            assert passes[0] == (False, [2])  # the precondition: HNSW came back short, not empty
            assert passes[1] == (True, [5])
            assert {h.namespace for h in hits} == {("a", "notes")}
            assert [h.key for h in hits] == ["near0", "near1", "far00", "far01", "far02"]
    finally:
        pg.drop_database("short_search")


async def test_only_searches_without_a_query_get_the_total_order():
    """``MnemoPostgresStore`` appends ``prefix, key`` to upstream's
    ``updated_at DESC`` of a listing (with or without a TTL refresh, and a
    query on a store without an index lists too); a search by meaning keeps
    upstream's SQL. The paging it fixes is in the conformance suite."""
    from langgraph.store.base import SearchOp
    from langgraph.store.postgres import AsyncPostgresStore

    from mnemo.stores.postgres import TOTAL_LIST_ORDER, MnemoPostgresStore

    ops = [
        (0, SearchOp(("u", "notes"), limit=10)),
        (1, SearchOp(("u", "notes"), limit=10, offset=10, refresh_ttl=True)),
        (2, SearchOp(("u", "notes"), query="tea", limit=5)),
    ]
    index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    for store_index, listings in ((None, [0, 1, 2]), (index, [0, 1])):
        upstream, _ = AsyncPostgresStore(None, index=store_index)._prepare_batch_search_queries(ops)
        ours, requests = MnemoPostgresStore(None, index=store_index)._prepare_batch_search_queries(ops)
        assert [i for i, (sql, _) in enumerate(ours) if TOTAL_LIST_ORDER in sql] == listings
        assert [i for i, (sql, _) in enumerate(upstream) if TOTAL_LIST_ORDER in sql] == []
        for i in set(range(len(ops))) - set(listings):
            assert ours[i] == upstream[i]
        assert [idx for idx, _ in requests] == [2][: 3 - len(listings)]


def test_a_listing_sql_upstream_no_longer_writes_is_refused():
    from mnemo.stores.postgres import total_order

    with pytest.raises(RuntimeError, match="changed its search SQL"):
        total_order("SELECT * FROM store ORDER BY store.created_at")
