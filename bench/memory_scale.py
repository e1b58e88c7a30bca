"""What one turn's memory read costs as a user's notes grow: 100 / 1k / 10k / 100k.

    python -m bench.memory_scale                                  # both backends
    python -m bench.memory_scale --sizes 100 1000 --backends memory   # quick

For each backend (mnemo's in-memory store and the embedded PostgreSQL with
the HNSW/cosine index, both opened by :func:`mnemo.stores.factory.open_store`) one
user's notes are loaded up to each size through :func:`mnemo.notes.aremember_bulk`
(audited and indexed as any write, ``--batch`` notes per store call, no cap,
no sparse vectors).
Then, per size, single client:

* ``load_memory``: :func:`mnemo.turn.snapshot.aload_snapshot` with the agent's
  defaults (what the ``load_memory`` node runs), p50/p95 latency, store round
  trips and operations per turn (:class:`CountedStore`);
* ``recall``: :func:`mnemo.arecall` (``limit=5``), the same figures;
* ``lexical_found``: how often a query naming one note's unique word (its
  item number) gets that note back with ``margin=math.inf`` (words alone):
  the lexical half works at every size (it was dropped above 2,000 notes).

Note texts are made-up facts over a small vocabulary (so common words such as
"coffee" are in thousands of notes and their postings are capped); vectors
come from a hash embedder (the real model's cost is one query embedding per
turn, measured once as ``embed_query_ms``), so the figures are the memory
layer's own. Results: ``<out>/memory_scale.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore

from bench.common import result_header, write_json
from bench.stats import ms_percentiles
from bench.store_scale import DIMS, SyntheticEmbeddings, embed_query_latency
from bench.turn_script import seed_notes

REPO_ROOT = Path(__file__).resolve().parents[1]


class CountedStore:
    """Counts ``abatch`` calls and their ops on any store (wraps the instance)."""

    def __init__(self, store: BaseStore) -> None:
        self.store = store
        self.trips = 0
        self.ops: Counter[str] = Counter()
        original = store.abatch

        async def abatch(ops: Any) -> Any:
            ops = list(ops)
            self.trips += 1
            self.ops.update(type(op).__name__ for op in ops)
            return await original(ops)

        store.abatch = abatch  # type: ignore[method-assign]

    def reset(self) -> None:
        self.trips = 0
        self.ops.clear()


async def load(store: BaseStore, user: Any, texts: list[str], batch: int) -> list[str]:
    """Write ``texts`` as ``user``'s notes through :func:`mnemo.notes.aremember_bulk`
    (no cap; no sparse vectors, as the notes of a load not yet reindexed: the
    figures are the store's and the index's); returns their ids, in order."""
    from mnemo import aremember_bulk

    results = await aremember_bulk(store, user, texts, max_notes=None, batch=batch, sparse=False)
    return [r["note"]["id"] for r in results]


async def measure(counted: CountedStore, user: Any, ids: list[str], queries: int) -> dict[str, Any]:
    from mnemo import arecall
    from mnemo.turn import aload_snapshot

    out: dict[str, Any] = {}
    size = len(ids)
    picks = [(size * (j + 1)) // (queries + 1) for j in range(queries)]
    for name in ("load_memory", "recall"):
        times: list[float] = []
        trips: list[int] = []
        ops: Counter[str] = Counter()
        found = 0
        for j, i in enumerate(picks):
            query = f"did I buy the thing with item {i + 1} last year? (q{j})"
            counted.reset()
            t = time.perf_counter()
            if name == "load_memory":
                await aload_snapshot(counted.store, user, query)
            else:
                await arecall(counted.store, user, query, limit=5)
            times.append(time.perf_counter() - t)
            trips.append(counted.trips)
            ops.update(counted.ops)
            if name == "recall":
                counted.reset()
                hits = await arecall(counted.store, user, f"item {i + 1}", limit=5, margin=math.inf)
                found += any(h["id"] == ids[i] for h in hits)
        out[name] = {
            "ms": ms_percentiles(times),
            "round_trips_max": max(trips),
            "ops_per_turn": {k: round(v / len(picks), 1) for k, v in ops.items()},
        }
        if name == "recall":
            out[name]["lexical_found"] = round(found / len(picks), 3)
    return out


async def run_backend(name: str, uri: str | None, sizes: list[int], args: argparse.Namespace) -> dict[str, Any]:
    from mnemo import User
    from mnemo.stores import open_store

    user = User.of("u_scale")
    index = {"embed": SyntheticEmbeddings(), "dims": DIMS, "fields": ["text"]}
    texts = seed_notes(max(sizes))
    out: dict[str, Any] = {}
    async with open_store(postgres_uri=uri, index=index, pool_config={"min_size": 1, "max_size": 1}) as store:
        counted = CountedStore(store)
        ids: list[str] = []
        for size in sizes:
            t0 = time.perf_counter()
            ids += await load(store, user, texts[len(ids) : size], args.batch)
            load_s = time.perf_counter() - t0
            if uri is not None:
                async with store.conn.connection() as conn:  # type: ignore[attr-defined]  # the PostgreSQL store's pool
                    await conn.execute("ANALYZE store")
                    await conn.execute("ANALYZE store_vectors")
            queries = args.queries if size < 100_000 or uri is not None else max(5, args.queries // 4)
            out[str(size)] = {"load_s": round(load_s, 1), **await measure(counted, user, ids, queries)}
            print(f"{name:>8} {size:>7}: {out[str(size)]}", flush=True)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from mnemo.stores.embedded_postgres import running as running_embedded_postgres

    sizes = sorted(set(args.sizes))
    started = time.time()
    result: dict[str, Any] = {
        **result_header("memory_scale"),  # the load average at the start
        "params": {
            "sizes": sizes,
            "queries": args.queries,
            "batch": args.batch,
            "dims": DIMS,
            "embedder": "hash vectors (bench.store_scale.SyntheticEmbeddings); one real query embedding "
            "per turn is embed_query_ms",
        },
        "backends": {},
    }
    if "memory" in args.backends:
        result["backends"]["memory"] = await run_backend("memory", None, sizes, args)
    if "postgres" in args.backends:
        with tempfile.TemporaryDirectory(prefix="mnemo-mscale-") as tmp:
            with running_embedded_postgres(Path(tmp) / "pgdata", database="mscale", cleanup="delete") as pg:
                result["backends"]["postgres"] = await run_backend("postgres", pg.uri, sizes, args)
    if not args.no_e5:
        result["embed_query_ms"] = await asyncio.to_thread(embed_query_latency)
    result["duration_s"] = round(time.time() - started, 1)
    return result


def main(argv: list[str] | None = None) -> int:

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    parser.add_argument("--backends", nargs="+", default=["memory", "postgres"], choices=["memory", "postgres"])
    parser.add_argument("--batch", type=int, default=500, help="notes per store call while loading")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--no-e5", action="store_true", help="skip measuring the real embedder")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    result = asyncio.run(main_async(args))
    print(f"wrote {write_json(args.out / 'memory_scale.json', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
