"""Backend-neutral reads over ``BaseStore``.

Every listing and semantic read in mnemo goes through these helpers: they page
explicitly and check that pages join, keep exact namespaces only, never call ``get``
(on InMemoryStore it makes ghost namespaces, which :func:`alist_users` sees through)
and treat ``score is None`` as no hit. Reads by key are kept to the few keys mnemo
derives (docs/architecture.md says which). The store traps: ``docs/design.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Item, Op, Result, SearchItem, SearchOp

from mnemo.core.errors import IndexMissingError, ListingChangedError
from mnemo.core.limits import bounded_query
from mnemo.core.namespaces import RESERVED_ROOTS

#: Page size for listing; the store default (10) is never relied upon.
PAGE_SIZE = 100

#: Listings of one namespace before :func:`alist_rest` gives up on a
#: namespace that keeps changing under it.
LIST_ATTEMPTS = 5

AnyItem = TypeVar("AnyItem", bound=Item)


def now_iso() -> str:
    """UTC timestamp kept inside values: backends disagree on ``created_at``
    semantics and on the time zone of ``updated_at``, so mnemo keeps its own."""
    return datetime.now(UTC).isoformat()


def search_result(result: Result) -> list[SearchItem]:
    """The result of a ``SearchOp`` in an ``abatch`` (typed as any op's result)."""
    return cast(list[SearchItem], result)


def only_in_namespace(items: Sequence[AnyItem], namespace: tuple[str, ...]) -> list[AnyItem]:
    """Drop items of deeper namespaces that a prefix search also returned."""
    return [it for it in items if tuple(it.namespace) == tuple(namespace)]


async def alist_all(
    store: BaseStore, namespace: tuple[str, ...], *, filter: dict[str, Any] | None = None, page_size: int = PAGE_SIZE
) -> list[Item]:
    """Every item of exactly ``namespace`` (matching ``filter``, an equality
    filter on value fields that every backend evaluates), however many, each
    once, in no promised order.

    Raises:
        ListingChangedError: the namespace changed under every one of
            :data:`LIST_ATTEMPTS` listings (see :func:`alist_rest`).
    """
    first_page = await store.asearch(namespace, filter=filter, limit=page_size, offset=0)
    return await alist_rest(store, namespace, first_page, filter=filter, page_size=page_size)


async def alist_rest(
    store: BaseStore,
    namespace: tuple[str, ...],
    first_page: Sequence[Item],
    *,
    filter: dict[str, Any] | None = None,
    page_size: int = PAGE_SIZE,
) -> list[Item]:
    """Complete a listing whose first page (``offset=0, limit=page_size``) was
    already fetched, e.g. inside a batch with other reads.

    The store pages only by ``offset``, and an offset counts positions, not
    items: the pages partition the namespace only while its order stays the
    same between two reads. Two things break that:

    * an order that is not total (PostgreSQL's ``updated_at DESC`` over the
      items of one batch: ties came back in a different order per page,
      repeating some items and skipping others; fixed at the source by
      :class:`mnemo.stores.postgres.MnemoPostgresStore`);
    * a write between two pages: deleting (or expiring) an item already read
      moves every later one a place forward, so one is never read; on
      PostgreSQL an update moves the item to the front, so it is never read.

    So each later page starts one item early, and that item must be the last
    one read (same key, same ``updated_at``): when it is not, the positions
    moved and the listing starts over (up to :data:`LIST_ATTEMPTS` times). A
    key is returned once whatever happens. Two writes between the same two
    pages whose moves cancel out (a read item deleted and an unread one moved
    to the front) are not seen: an item written during a listing may be
    missed, one that stood still is not. Destructive callers list again until
    nothing is left (:func:`mnemo.access.privacy.aerase_user`).
    """
    page: Sequence[Item] = first_page
    for attempt in range(LIST_ATTEMPTS):
        if attempt:
            page = await store.asearch(namespace, filter=filter, limit=page_size, offset=0)
        found = await _alist_from(store, namespace, page, filter=filter, page_size=page_size)
        if found is not None:
            unique = {it.key: it for it in only_in_namespace(found, namespace)}
            return list(unique.values())
    raise ListingChangedError(
        f"{'/'.join(namespace)} changed while it was being listed, {LIST_ATTEMPTS} times in a row; try again"
    )


async def _alist_from(
    store: BaseStore,
    namespace: tuple[str, ...],
    first_page: Sequence[Item],
    *,
    filter: dict[str, Any] | None,
    page_size: int,
) -> list[Item] | None:
    """One listing from ``first_page`` on, or ``None`` when the order moved
    between two pages (see :func:`alist_rest`)."""
    found: list[Item] = list(first_page)
    full = len(first_page) >= page_size
    while full:
        last = found[-1]
        page = await store.asearch(namespace, filter=filter, limit=page_size + 1, offset=len(found) - 1)
        if not page or _identity(page[0]) != _identity(last):
            return None
        found.extend(page[1:])
        full = len(page) > page_size
    return found


def _identity(item: Item) -> tuple[tuple[str, ...], str, datetime]:
    return tuple(item.namespace), item.key, item.updated_at


async def abatch_named(store: BaseStore, reads: Mapping[str, Sequence[Op]]) -> dict[str, list[Result]]:
    """One ``abatch`` of named groups of reads; their results under the same
    names, each group's in its order (a group added shifts no other's)."""
    ops = [op for group in reads.values() for op in group]
    results = await store.abatch(ops) if ops else []
    out: dict[str, list[Result]] = {}
    start = 0
    for name, group in reads.items():
        out[name] = list(results[start : start + len(group)])
        start += len(group)
    return out


def list_op(namespace: tuple[str, ...], *, page_size: int = PAGE_SIZE) -> SearchOp:
    """The first page of :func:`alist_all`, for use inside ``abatch``."""
    return SearchOp(namespace_prefix=namespace, limit=page_size, offset=0)


def query_op(namespace: tuple[str, ...], query: str, *, limit: int) -> SearchOp:
    """A semantic search of ``namespace``, its text bounded (:func:`mnemo.core.limits.bounded_query`)."""
    return SearchOp(namespace_prefix=namespace, query=bounded_query(query), limit=limit)


def semantic_hits(items: list[SearchItem], namespace: tuple[str, ...], *, min_score: float) -> list[SearchItem]:
    """Real hits of a semantic search: exact namespace, a score, above threshold.

    An item without a score is not a hit: a store without an index returns
    every item so (see :func:`require_index`), and one with an index pads its
    results with the items that have no vector (e.g. imported through the
    store API with ``index: false``). Those are skipped here, by the dense
    half of recall only: the lexical half still finds them.
    """
    items = only_in_namespace(items, namespace)
    hits = [it for it in items if it.score is not None and it.score >= min_score]
    return sorted(hits, key=score_of, reverse=True)


def require_index(store: BaseStore) -> None:
    """Raises :class:`IndexMissingError` when ``store`` has no vector index:
    its semantic searches would silently list items instead.

    Told by the store's ``index_config`` (``InMemoryStore``, the PostgreSQL
    stores), looking through wrappers that keep the real store in ``_store``
    (the platform's batching store, :class:`mnemo.stores.guard.GuardedStore`).
    A store that does not say (e.g. :class:`mnemo.stores.remote.ServerStore`)
    passes: the server's store has its index.
    """
    seen: Any = store
    for _ in range(4):
        if hasattr(seen, "index_config"):
            if not seen.index_config:
                raise IndexMissingError(
                    "the store has no vector index, so a query would be ignored; "
                    "configure store.index (embed, dims, fields=['text'])"
                )
            return
        seen = getattr(seen, "_store", None)
        if seen is None:
            return


def store_embeddings(store: BaseStore) -> Embeddings | None:
    """The embedder ``store`` searches with (``InMemoryStore`` and the PostgreSQL
    stores keep it as ``embeddings``), looking through wrappers as
    :func:`require_index` does; ``None`` when no layer says (a remote store)."""
    seen: Any = store
    for _ in range(4):
        if seen is None:
            return None
        if getattr(seen, "embeddings", None) is not None:
            return cast(Embeddings, seen.embeddings)
        seen = getattr(seen, "_store", None)
    return None


def score_of(hit: SearchItem) -> float:
    """The score of a hit :func:`semantic_hits` returned (never ``None`` there)."""
    return cast(float, hit.score)


def most_recent(items: Sequence[AnyItem], n: int) -> list[AnyItem]:
    """The ``n`` most recently updated items, by mnemo's own ``updated_at``.

    Sorted explicitly: backends return different orders."""
    return sorted(items, key=lambda it: (it.value.get("updated_at", ""), it.key), reverse=True)[:n]


async def alist_every_namespace(
    store: BaseStore,
    *,
    prefix: tuple[str, ...] | None = None,
    suffix: tuple[str, ...] | None = None,
    max_depth: int | None = None,
    page_size: int = PAGE_SIZE,
) -> list[tuple[str, ...]]:
    """Every namespace ``list_namespaces`` finds with these arguments, page after
    page (one call returns at most a page), sorted and distinct. Ghost namespaces
    of ``InMemoryStore`` included (see :func:`alist_users`)."""
    found: set[tuple[str, ...]] = set()
    offset = 0
    while True:
        page = await store.alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=page_size, offset=offset
        )
        found.update(tuple(ns) for ns in page)
        if len(page) < page_size:
            return sorted(found)
        offset += page_size


async def alist_users(store: BaseStore, *, page_size: int = PAGE_SIZE) -> list[str]:
    """Labels of the users that really have memories, sorted.

    ``list_namespaces`` is not enough: ``InMemoryStore`` keeps a namespace
    after its last item is deleted and creates one on every ``get`` ("ghost"
    namespaces), PostgreSQL keeps none. So each root is confirmed by one
    ``limit=1`` read, and shared roots (``org`` and the other reserved roots of
    :mod:`mnemo.core.identity`) are never users.
    """
    roots = [ns[0] for ns in await alist_every_namespace(store, max_depth=1, page_size=page_size) if ns]
    candidates = sorted({r for r in roots if r.lower() not in RESERVED_ROOTS})
    if not candidates:
        return []
    found = await store.abatch([SearchOp(namespace_prefix=(label,), limit=1) for label in candidates])
    return [label for label, items in zip(candidates, found, strict=True) if items]
