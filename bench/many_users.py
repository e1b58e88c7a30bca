"""Many users on one PostgreSQL: per-user recall latency and quality.

    python -m bench.many_users                          # 200k notes, 2,000 users
    python -m bench.many_users --notes 20000 --users 200   # quick

A deployment keeps every user's notes in one ``store`` table with one global
HNSW index, and every query is filtered to one user's namespace. This loads
``--notes`` notes over ``--users`` users with a skewed spread (log-normal
sizes: most users have tens of notes, a few thousands), on the embedded
PostgreSQL opened by :func:`mnemo.stores.factory.open_store`, each user's notes
through :func:`mnemo.notes.aremember_bulk` (audited and indexed). The HNSW index is
dropped while loading and rebuilt afterwards (bulk load), with the
definition ``setup()`` created.

Then, for users sampled from each size band (small / medium / large), with
queries that are noisy copies of one of the user's notes:

* ``search_ms``: the store's filtered dense search (``asearch(ns, query,
  limit=10)``), and ``recall_at_10`` against the exact top 10 of that user
  (numpy over the user's own vectors: cheap, a user's rows are few);
* ``recall_ms``: :func:`mnemo.arecall` (``limit=5``), and ``load_memory_ms``:
  :func:`mnemo.turn.snapshot.aload_snapshot` with the agent's defaults;
* ``plan``: whether PostgreSQL used the HNSW index or scanned the user's rows
  (``EXPLAIN`` of the same filtered search).

for each search setting in ``--settings`` (``hnsw.iterative_scan`` /
``hnsw.ef_search``). Vectors are synthetic (seeded unit vectors; random
vectors are HNSW's worst case). Results: ``<out>/many_users.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import result_header, write_json
from bench.stats import ms_percentiles
from bench.store_scale import DIMS, SyntheticEmbeddings
from bench.turn_script import seed_notes

REPO_ROOT = Path(__file__).resolve().parents[1]
#: (name, SQL) of the search settings compared; mnemo's own is the first.
SETTINGS = {
    "strict_100": "SET hnsw.iterative_scan = strict_order; SET hnsw.ef_search = 100",
    "relaxed_40": "SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 40",
    "exact": "SET enable_indexscan = off; SET enable_bitmapscan = on",
}


def user_sizes(notes: int, users: int, seed: int = 11) -> list[int]:
    """Log-normal sizes (median ~40, a long tail), scaled to ``notes`` in total, at least 1 each."""
    rng = np.random.default_rng(seed)
    raw = rng.lognormal(mean=3.7, sigma=1.3, size=users)
    sizes = np.maximum(1, np.floor(raw / raw.sum() * notes)).astype(int)
    sizes[np.argmax(sizes)] += notes - int(sizes.sum())  # exact total
    return sorted((int(s) for s in sizes), reverse=True)


def vector_id(user: int, i: int) -> int:
    return user * 1_000_000 + i


class LoadEmbeddings(SyntheticEmbeddings):
    """:class:`SyntheticEmbeddings` that gives the notes of the user being
    loaded (``loading``: text -> vector id) their seeded vectors: a user's
    notes are readable words (what the index and recall read), each note its
    own random vector (HNSW's worst case) though users share texts."""

    def __init__(self) -> None:
        super().__init__()
        self.loading: dict[str, int] = {}

    def vector(self, text: str) -> np.ndarray:
        if text in self.loading:
            return self.note_vector(self.loading[text])
        return super().vector(text)


async def load(store: Any, emb: LoadEmbeddings, sizes: list[int], texts: list[str], batch: int) -> list[list[str]]:
    """Each user's notes through :func:`mnemo.notes.aremember_bulk` (no cap,
    no sparse vectors: the figures are the store's and the index's); per user,
    the ids of its notes in order."""
    from mnemo import User, aremember_bulk

    ids: list[list[str]] = []
    for u, size in enumerate(sizes):
        emb.loading = {texts[i]: vector_id(u, i) for i in range(size)}
        results = await aremember_bulk(
            store, User.of(f"u{u:05d}"), texts[:size], max_notes=None, batch=batch, sparse=False
        )
        ids.append([r["note"]["id"] for r in results])
    emb.loading = {}
    return ids


async def measure(
    store: Any, emb: SyntheticEmbeddings, ids: list[list[str]], picks: list[int], queries: int
) -> dict[str, Any]:
    from mnemo import User, arecall
    from mnemo.turn import aload_snapshot

    search_t, recall_t, load_t, overlap, plans = [], [], [], [], {"hnsw": 0, "exact": 0}
    for u in picks:
        user = User.of(f"u{u:05d}")
        ns = user.namespace("notes")
        size = len(ids[u])
        matrix = np.stack([emb.note_vector(vector_id(u, i)) for i in range(size)])
        rng = np.random.default_rng(u)
        for j in range(queries):
            target = int(rng.integers(size))
            query = f"near:{vector_id(u, target)}:{j}"
            exact = {ids[u][i] for i in np.argsort(-(matrix @ emb.vector(query)))[:10]}
            t = time.perf_counter()
            hits = await store.asearch(ns, query=query, limit=10)
            search_t.append(time.perf_counter() - t)
            overlap.append(len(exact & {h.key for h in hits}) / min(10, size))
            t = time.perf_counter()
            await arecall(store, user, query, limit=5, margin=None)
            recall_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            await aload_snapshot(store, user, query)
            load_t.append(time.perf_counter() - t)
        vec = "[" + ",".join(f"{x:.5f}" for x in emb.vector(f"near:{vector_id(u, 0)}:0")) + "]"
        async with store.conn.connection() as conn:  # the pool's one connection, with the settings under test
            plan = await (
                await conn.execute(
                    "EXPLAIN SELECT s.key FROM store s JOIN store_vectors v ON s.prefix = v.prefix AND s.key = v.key "
                    "WHERE s.prefix = %s ORDER BY v.embedding <=> %s::vector LIMIT 10",
                    (".".join(ns), vec),
                )
            ).fetchall()
        plans["hnsw" if any("embedding_idx" in str(r) for r in plan) else "exact"] += 1
    return {
        "search_ms": ms_percentiles(search_t),
        "recall_ms": ms_percentiles(recall_t),
        "load_memory_ms": ms_percentiles(load_t),
        "recall_at_10": round(float(np.mean(overlap)), 4),
        "recall_at_10_min": round(float(np.min(overlap)), 4),
        "plans": plans,
    }


async def run(uri: str, args: argparse.Namespace) -> dict[str, Any]:
    from mnemo.stores import open_store

    emb = LoadEmbeddings()
    sizes = user_sizes(args.notes, args.users)
    texts = seed_notes(max(sizes))
    index = {"embed": emb, "dims": DIMS, "fields": ["text"]}
    out: dict[str, Any] = {
        "sizes": {
            "users": len(sizes),
            "notes": sum(sizes),
            "max": sizes[0],
            "p50": int(np.median(sizes)),
            "p90": int(np.percentile(sizes, 90)),
            "min": sizes[-1],
        }
    }
    # No TTL sweeper: it would wait on the one pooled connection while the index builds.
    async with open_store(
        postgres_uri=uri, index=index, pool_config={"min_size": 1, "max_size": 1}, sweep=False
    ) as store:
        async with store.conn.connection() as conn:  # type: ignore[attr-defined]  # the PostgreSQL store's pool
            row = await (
                await conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'store_vectors_embedding_idx'")
            ).fetchone()
            await conn.execute("DROP INDEX store_vectors_embedding_idx")
        t0 = time.perf_counter()
        ids = await load(store, emb, sizes, texts, args.batch)
        out["load_s"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        async with store.conn.connection() as conn:  # type: ignore[attr-defined]
            await conn.execute("SET maintenance_work_mem = '512MB'")
            await conn.execute(row["indexdef"])
            await conn.execute("ANALYZE store")
            await conn.execute("ANALYZE store_vectors")
        out["index_build_s"] = round(time.perf_counter() - t0, 1)
        print(f"loaded {out['sizes']} in {out['load_s']} s, HNSW built in {out['index_build_s']} s", flush=True)
        n = len(sizes)
        bands = {
            "large": list(range(0, min(args.per_band, n))),
            "medium": list(range(n // 10, n // 10 + args.per_band)),
            "small": list(range(n // 2, n // 2 + args.per_band)),
        }
        out["bands"] = {
            b: {"users": len(p), "notes_min": sizes[p[-1]], "notes_max": sizes[p[0]]} for b, p in bands.items()
        }
        out["settings"] = {}
        for name in args.settings:
            # One pooled connection (max_size 1): session settings made here
            # are the ones every later search of the store runs with.
            async with store.conn.connection() as conn:  # type: ignore[attr-defined]
                await conn.execute("RESET ALL")
                for statement in SETTINGS[name].split(";"):
                    await conn.execute(statement)
            result = {}
            for band, picks in bands.items():
                result[band] = await measure(store, emb, ids, picks, args.queries)
                print(f"{name:>11} {band:>6}: {json.dumps(result[band])}", flush=True)
            out["settings"][name] = result
        # back to mnemo's own settings for later users of the pool
        from mnemo.stores.postgres_setup import configure_connection

        async with store.conn.connection() as conn:  # type: ignore[attr-defined]
            await conn.execute("RESET ALL")
            await configure_connection(conn)
    return out


def main(argv: list[str] | None = None) -> int:
    from mnemo.stores.embedded_postgres import running as running_embedded_postgres

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=200_000)
    parser.add_argument("--users", type=int, default=2_000)
    parser.add_argument("--per-band", type=int, default=20, help="users sampled per size band")
    parser.add_argument("--queries", type=int, default=5, help="queries per sampled user")
    parser.add_argument("--batch", type=int, default=500, help="notes per store call while loading")
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="mnemo-users-") as tmp:
        with running_embedded_postgres(Path(tmp) / "pgdata", database="users", cleanup="delete") as pg:
            result = asyncio.run(run(pg.uri, args))
    result = {
        **result_header("many_users"),  # the load average at the end
        "params": {
            "notes": args.notes,
            "users": args.users,
            "per_band": args.per_band,
            "queries": args.queries,
            "settings": {k: SETTINGS[k] for k in args.settings},
        },
        **result,
        "duration_s": round(time.time() - started, 1),
    }
    print(f"wrote {write_json(args.out / 'many_users.json', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
