"""mnemo.stores.postgres_vectors: how embeddings reach PostgreSQL (the query-as-query routing is
checked across backends in tests/stores/conformance/test_memory.py)."""

from __future__ import annotations

from tests.store_backends import HashEmbeddings


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
