"""mnemo.stores.postgres_vectors: how embeddings reach PostgreSQL (the query-as-query routing is
checked across backends in tests/stores/conformance/test_memory.py)."""

from __future__ import annotations

from harness.store_backends import HashEmbeddings


async def test_a_vector_goes_to_postgres_as_one_literal_of_the_same_values(pg):
    """mnemo's embeddings reach psycopg as ``Vector``s, which it sends as pgvector's own text form
    instead of dumping each float of an array; PostgreSQL reads the same vector either way."""
    import psycopg
    from psycopg.adapt import PyFormat

    from mnemo.stores.postgres_vectors import QUERY_VECTORS, QueryAwareEmbeddings, Vector, _VectorDumper

    assert psycopg.adapters.get_dumper(Vector, PyFormat.AUTO) is _VectorDumper
    values = [0.1, -0.25, 1e-07, 0.3333333432674408, 12.0]
    uri = pg.create_database("vector_literal")
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        literal = await (await conn.execute("SELECT %s::vector::text", (Vector(values),))).fetchone()
        array = await (await conn.execute("SELECT %s::vector::text", (values,))).fetchone()
    pg.drop_database("vector_literal")
    assert literal == array and literal is not None and literal[0].startswith("[0.1,-0.25,1e-07,")

    embeddings = QueryAwareEmbeddings(HashEmbeddings(8))
    token = QUERY_VECTORS.set({})  # a search's queries
    try:
        searched = await embeddings.aembed_documents(["pets", "pets"])
    finally:
        QUERY_VECTORS.reset(token)
    stored = await embeddings.aembed_documents(["The user has two cats."])  # a put's passages
    assert all(type(v) is Vector and len(v) == len(stored[0]) for v in [*searched, *stored])
    assert all(type(v) is Vector for v in [embeddings.embed_documents(["x"])[0], await embeddings.aembed_query("x")])


async def test_a_calls_queries_are_embedded_beside_its_sql_not_after_it(pg, monkeypatch):
    """The encoder starts with the store call: the call's first SQL (the pooled
    connection's check, the reads by key, the counts) runs while the query is
    being embedded, instead of before it; each query text is embedded once."""
    import asyncio

    import psycopg
    from langgraph.store.base import GetOp, PutOp, SearchOp

    from mnemo.stores.factory import open_store

    started, sql_ran = asyncio.Event(), asyncio.Event()
    embedded: list[str] = []
    first_sql: list[bool] = []  # at the call's first SQL: had the encoder started?

    class SlowQueries(HashEmbeddings):
        async def aembed_query(self, text: str) -> list[float]:
            if watching:  # not the store's own probe when it opens
                started.set()
                await asyncio.wait_for(sql_ran.wait(), timeout=5)  # done only once the call's SQL ran
                embedded.append(text)
            return self.embed_query(text)

    execute = psycopg.AsyncCursor.execute

    async def watched(self, *args, **kwargs):
        if not sql_ran.is_set() and watching:
            first_sql.append(started.is_set())
            sql_ran.set()
        return await execute(self, *args, **kwargs)

    watching = False
    monkeypatch.setattr(psycopg.AsyncCursor, "execute", watched)
    uri = pg.create_database("early_queries")
    try:
        index = {"embed": SlowQueries(16), "dims": 16, "fields": ["text"]}
        async with open_store(postgres_uri=uri, index=index) as store:
            await store.abatch([PutOp(("u", "notes"), "k", {"text": "The user keeps bees."})])
            watching = True
            got, by_meaning, again = await store.abatch(
                [
                    GetOp(("u", "notes"), "k"),
                    SearchOp(("u", "notes"), query="bees", limit=5),
                    SearchOp(("u",), query="bees", limit=5),
                ]
            )
        assert got is not None and [h.key for h in by_meaning] == ["k"] == [h.key for h in again]
        assert first_sql == [True]  # the first SQL ran while the query was being embedded (it waits for it)
        assert embedded == ["bees"]
    finally:
        pg.drop_database("early_queries")
