"""Settings every store mnemo opens shares, and the startup check of ``dims``.

:func:`acheck_dims` embeds a probe and refuses a store whose ``dims`` differ, on
every backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.store.base import TTLConfig
from langgraph.store.base.embed import ensure_embeddings

from mnemo.core import DimsMismatchError
from mnemo.stores.embeddings import index_config

#: TTL behaviour of every store mnemo opens. Items written without a ``ttl``
#: never expire; items written with ``ttl`` (minutes) expire that long after
#: their last write **or read** (``refresh_on_read``), are invisible to reads
#: as soon as they expire (``omit_expired``) and are deleted by the sweeper.
DEFAULT_TTL: TTLConfig = {"refresh_on_read": True, "omit_expired": True, "sweep_interval_minutes": 1}

#: Text embedded at startup to learn the model's real dimension.
PROBE_TEXT = "mnemo dimension probe"


def store_index_config(index: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A private copy of ``index``, default :func:`mnemo.stores.embeddings.index_config`."""
    return dict(index_config() if index is None else index)


def ttl_config(ttl: Mapping[str, Any] | None = None) -> TTLConfig:
    """:data:`DEFAULT_TTL` updated with ``ttl``."""
    return TTLConfig(**{**DEFAULT_TTL, **(ttl or {})})  # type: ignore[typeddict-item]


async def acheck_dims(index: Mapping[str, Any]) -> int:
    """Embed :data:`PROBE_TEXT` (as a document and as a query) and compare the
    vector length with ``index["dims"]``; return the length.

    Raises:
        DimsMismatchError: the lengths differ, or ``dims``/``embed`` is missing.
    """
    dims = index.get("dims")
    if index.get("embed") is None or not isinstance(dims, int) or dims <= 0:
        raise DimsMismatchError(f"the store index needs 'embed' and a positive integer 'dims', got dims={dims!r}")
    embeddings = ensure_embeddings(index["embed"])
    doc = (await embeddings.aembed_documents([PROBE_TEXT]))[0]
    query = await embeddings.aembed_query(PROBE_TEXT)
    for kind, vector in (("document", doc), ("query", query)):
        if len(vector) != dims:
            raise DimsMismatchError(
                f"the embedding model returns {len(vector)}-dimensional {kind} vectors but the store index "
                f'is configured with dims={dims}; set "dims": {len(vector)} (langgraph.json / index_config) '
                "or use the model the store was built with. Vectors of two models are not comparable: "
                "a store indexed with one model must be re-indexed for another."
            )
    return dims
