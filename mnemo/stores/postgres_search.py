"""How the PostgreSQL store searches a namespace by meaning: exactly, or
through the HNSW index, per search.

Exactly (the namespace's rows through its index, every distance computed):
always right, and its cost grows with the namespace. HNSW with iterative
scans: the cost of a few hundred vectors whatever the size, but filtered to
one namespace it is only as good as the filter is loose: over a 200k-row
table, a 5k-note user's filtered scan missed most of the true top 10
(``bench.many_users``). So a namespace is searched by HNSW only where the
filter keeps most of the graph or where exact gets too slow; a search by
HNSW that returns fewer items than asked is run again exactly. Why and the
figures: ``docs/postgres.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import SearchOp
from psycopg import sql

#: Past this many rows (the planner's estimate) a namespace is always searched
#: through HNSW (exactly, 5,763 rows took p95 54 ms on a loaded 2-core machine
#: and 20,000 rows 84 ms, against 8 ms through HNSW; HNSW at 100k rows 12-24 ms).
EXACT_SEARCH_MAX_ROWS = 20_000

#: A namespace of at most this many rows is always searched exactly (a few ms).
ANN_MIN_ROWS = 1_000

#: A namespace holding at least this share of the table's vectors is searched
#: through HNSW: its filter keeps most of the graph, so the filtered scan
#: visits at most twice the vectors of an unfiltered one and finds what it does.
ANN_MIN_SHARE = 0.5


async def aexact_searches(cur: Any, search_ops: Sequence[tuple[int, SearchOp]]) -> set[int]:
    """The positions (as in ``search_ops``) of the searches by meaning to run
    exactly. Per search, one count through the namespace index, stopping past
    :data:`ANN_MIN_ROWS` (counting a large namespace whole cost 10 ms at
    20,000 rows, more than the search it decides); past it, the planner's
    estimates of the namespace's rows and of the table's vectors (its
    statistics: no scan), so a namespace that grew since the last ``ANALYZE``
    may be searched exactly a while longer."""
    exact: set[int] = set()
    total: float | None = None
    for idx, op in search_ops:
        if not op.query:
            continue
        namespace = ".".join(op.namespace_prefix)
        await cur.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM store WHERE prefix = %s LIMIT %s) AS rows",
            (namespace, ANN_MIN_ROWS + 1),
        )
        row = await cur.fetchone()
        if row is not None and int(row["n"]) <= ANN_MIN_ROWS:
            exact.add(idx)
            continue
        rows = await _aestimated_rows(cur, namespace)
        total = total if total is not None else await _avector_rows(cur)
        if rows <= EXACT_SEARCH_MAX_ROWS and rows < ANN_MIN_SHARE * total:
            exact.add(idx)
    return exact


async def _aestimated_rows(cur: Any, namespace: str) -> float:
    """The planner's estimate of the rows of ``namespace`` (from its statistics
    of ``store.prefix``)."""
    await cur.execute(
        sql.SQL("EXPLAIN (FORMAT JSON) SELECT 1 FROM store WHERE prefix = {}").format(sql.Literal(namespace))
    )
    row = await cur.fetchone()
    plan = next(iter(row.values())) if row is not None else None
    return float(plan[0]["Plan"]["Plan Rows"]) if plan else 0.0


async def _avector_rows(cur: Any) -> float:
    """The planner's estimate of the rows of ``store_vectors`` (its statistics
    scaled to the table's current size); infinite on a table never analysed
    (no namespace is then most of it)."""
    await cur.execute(
        "SELECT CASE WHEN c.relpages > 0 AND c.reltuples >= 0 THEN c.reltuples / c.relpages"
        " * (pg_relation_size(c.oid) / current_setting('block_size')::int) END AS n"
        " FROM pg_class c WHERE c.oid = to_regclass('store_vectors')"
    )
    row = await cur.fetchone()
    return float(row["n"]) if row is not None and row["n"] is not None else float("inf")
