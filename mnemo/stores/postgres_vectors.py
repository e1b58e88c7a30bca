"""How embeddings reach PostgreSQL: search queries embedded as queries, each
text of a batch once and from the batch's start (:class:`QueryAwareEmbeddings`,
:func:`start_queries`), and every vector sent as pgvector's own text form
(:class:`Vector`). Needs the ``postgres`` extra."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence

import psycopg
from langchain_core.embeddings import Embeddings
from psycopg.adapt import Dumper

#: While a search batch runs: its query vectors by text (``None``: not searching).
QUERY_VECTORS: contextvars.ContextVar[dict[str, list[float]] | None] = contextvars.ContextVar(
    "mnemo_query_vectors", default=None
)


#: While a store call runs: its search queries' vectors, embedded since the
#: call began (:func:`start_queries`; ``None``: none asked).
EARLY_VECTORS: contextvars.ContextVar[asyncio.Future[dict[str, list[float]]] | None] = contextvars.ContextVar(
    "mnemo_early_vectors", default=None
)


class Vector(list[float]):
    """An embedding on its way to pgvector: a list of floats that psycopg sends
    as one text literal (``[x,y,...]``, pgvector's own input form, read as the
    ``vector`` the SQL casts it to or the column it fills), where a plain list
    is sent as an array of 384 floats dumped one by one (about 0.8 ms of the
    event loop a vector, three per turn's read). Same values: both are each
    float's ``repr``."""


class _VectorDumper(Dumper):
    def dump(self, obj: Vector) -> bytes:
        return ("[" + ",".join(map(repr, obj)) + "]").encode()


psycopg.adapters.register_dumper(Vector, _VectorDumper)


class QueryAwareEmbeddings(Embeddings):
    """Routes ``aembed_documents`` to ``aembed_query`` while a search runs, each
    text of the batch once.

    ``AsyncPostgresStore`` (3.2.0) embeds search *queries* with
    ``aembed_documents``, ``InMemoryStore`` with ``aembed_query``: for E5
    (``query: `` / ``passage: ``) the scores, and so mnemo's thresholds, would
    differ per backend. And upstream embeds a query once per search, where a
    turn's snapshot runs several with one text (docs/postgres.md). The search
    path sets a context variable (per task: concurrent writes are unaffected).
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if (known := QUERY_VECTORS.get()) is not None:
            for text in dict.fromkeys(t for t in texts if t not in known):
                known[text] = Vector(self.inner.embed_query(text))
            return [known[t] for t in texts]
        return [Vector(v) for v in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return Vector(self.inner.embed_query(text))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if (known := QUERY_VECTORS.get()) is not None:
            for text in dict.fromkeys(t for t in texts if t not in known):
                known[text] = Vector(await self.inner.aembed_query(text))
            return [known[t] for t in texts]
        return [Vector(v) for v in await self.inner.aembed_documents(texts)]

    async def aembed_query(self, text: str) -> list[float]:
        return Vector(await self.inner.aembed_query(text))


def start_queries(embeddings: Embeddings, texts: Sequence[str]) -> asyncio.Future[dict[str, list[float]]]:
    """The query vectors of ``texts`` (each once), embedding from now: upstream
    embeds a batch's queries only after its reads by key and mnemo's counts ran,
    on a connection held in an open transaction, so a turn's read waited for the
    two in turn; started first, the encoder (its own thread) and the SQL overlap.
    A failure is raised where the vectors are awaited (never logged as unretrieved)."""

    async def embed() -> dict[str, list[float]]:
        return {text: await embeddings.aembed_query(text) for text in dict.fromkeys(texts)}

    early = asyncio.ensure_future(embed())
    early.add_done_callback(lambda done: done.cancelled() or done.exception())
    return early
