"""A whole agent turn of a user with 20 notes against one with 20,000, notes
written before the note index existed (on PostgreSQL that user's every turn
once failed, 5.6 s instead of 1.1 s, "long-term memory is unavailable").

    python -m bench.reindex_turn                        # both backends, 20 and 20,000 notes
    python -m bench.reindex_turn --backends memory --sizes 20 2000   # quick

Per backend (mnemo's in-memory store, the embedded PostgreSQL), one store
holds one user per size, whose notes are put raw, without index items (as
before the index existed, or written around mnemo); then, per user

* ``first_turn_ms``: the first turn, which builds the index once, in bounded
  batches (:func:`mnemo.notes.index.arebuild_once`); ``indexed_by_first_turn``:
  the notes its index counts;
* ``reindex_s``: ``python -m mnemo reindex <user>``'s work
  (:func:`mnemo.notes.index.arebuild`), run again on the built index;
* ``turn_ms``: p50 / p95 of the next :data:`TURNS` turns, after ``ANALYZE``
  on PostgreSQL (as autovacuum within a minute of a load) (each in its own
  thread, a question naming one note's word; the users' turns interleaved),
  whole graph: ``load_memory``, the model, ``write_memory`` with its
  extraction.

The chat model and the extractor are scripted (answers at once), and the
vectors are synthetic (:class:`ItemEmbeddings`: a question lands near the
note it asks about),
so the figures are the memory layer's own; a real model adds the same
latency at every size. ``ratio`` = p50 at the largest size / p50 at the
smallest (the target: at most 1.3). Results: ``<out>/reindex_turn.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp

from bench.common import result_header, write_json
from bench.stats import ms_percentiles
from bench.store_scale import DIMS, SyntheticEmbeddings
from bench.turn_script import scripted_model

REPO_ROOT = Path(__file__).resolve().parents[1]
#: Turns measured per size, after the first.
TURNS = 15
MODEL_NAME = "bench-reindex-scripted"


class ItemEmbeddings(SyntheticEmbeddings):
    """Meaning as a real model would give it: a note about ``item<i>`` is
    note ``i``'s vector, a question about ``item<i>`` a vector near it (a
    random vector for every text is HNSW's worst case, no user's)."""

    def vector(self, text: str) -> Any:
        found = re.search(r"\bitem(\d+)\b", text)
        if found is None:
            return super().vector(text)
        i = int(found.group(1))
        return super().vector(f"near:{i}:{len(text)}" if text.endswith("?") else f"note:{i}")


def old_notes(label: str, count: int) -> list[PutOp]:
    """Notes as written before the index existed: the note items alone."""
    return [
        PutOp(
            (label, "notes"),
            f"k{i:06d}",
            {
                "id": f"k{i:06d}",
                "text": f"The user bought item{i} in year {2000 + i % 25}.",
                "updated_at": f"2026-01-01T00:00:00.{i:06d}+00:00",
            },
        )
        for i in range(count)
    ]


async def run_backend(name: str, uri: str | None, sizes: list[int], turns: int) -> dict[str, Any]:
    """Every size's user in one store (as in a deployment: the small user's
    search runs beside the large one's notes), their turns interleaved, so a
    load that changes during the run weighs on every size alike."""
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import builder
    from mnemo import User
    from mnemo.notes import arebuild
    from mnemo.stores import open_store
    from nodes.context import Context

    index = {"embed": ItemEmbeddings(), "dims": DIMS, "fields": ["text"]}
    async with open_store(postgres_uri=uri, index=index) as store:
        if uri is not None:
            import psycopg

            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                await conn.execute("TRUNCATE store CASCADE")
        users = {size: User.of(f"u_{size}") for size in sizes}
        for size, user in users.items():
            ops = old_notes(user.label, size)
            for start in range(0, len(ops), 1000):
                await store.abatch(ops[start : start + 1000])
        graph = builder.compile(store=store, checkpointer=InMemorySaver())

        async def turn(size: int, i: int) -> float:
            user = users[size]
            start = time.perf_counter()
            await graph.ainvoke(
                {"messages": [HumanMessage(f"What do you know about item{(i * 7) % size}?")]},
                {"configurable": {"thread_id": f"{user.label}-{i}"}},
                context=Context(user_id=user.id, model=MODEL_NAME),
            )
            return time.perf_counter() - start

        rows: dict[int, dict[str, Any]] = {}
        for size, user in users.items():
            first = await turn(size, 0)
            head = await store.aget((user.label, "note_index"), "head")
            rows[size] = {
                "notes": size,
                "indexed_by_first_turn": head.value["count"] if head is not None else 0,
                "first_turn_ms": round(first * 1000, 1),
            }
        if uri is not None:
            # What autovacuum does within a minute of a bulk load: the planner's
            # statistics, which choose how each search reads (mnemo.stores.postgres_search).
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                await conn.execute("ANALYZE store, store_vectors")
        samples: dict[int, list[float]] = {size: [] for size in sizes}
        for i in range(1, turns + 1):
            for size in sizes:
                samples[size].append(await turn(size, i))
        for size, user in users.items():
            began = time.perf_counter()
            rows[size]["indexed"] = await arebuild(store, user)
            rows[size]["reindex_s"] = round(time.perf_counter() - began, 2)
            rows[size]["turn_ms"] = ms_percentiles(samples[size])
            print(f"{name} {size}: {rows[size]}", file=sys.stderr)
    out: dict[str, Any] = {"sizes": [rows[size] for size in sizes]}
    out["ratio"] = round(rows[sizes[-1]]["turn_ms"]["p50"] / rows[sizes[0]]["turn_ms"]["p50"], 3)
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    from tests.scripted import tool_call

    def respond(messages: list, tool_names: list[str]) -> Any:
        from langchain_core.messages import AIMessage

        return tool_call("MemoryExtraction") if "MemoryExtraction" in tool_names else AIMessage(content="Sure.")

    result: dict[str, Any] = {**result_header("reindex_turn"), "turns_per_size": args.turns, "backends": {}}
    with scripted_model(MODEL_NAME, respond):
        if "memory" in args.backends:
            result["backends"]["memory"] = await run_backend("memory", None, args.sizes, args.turns)
        if "postgres" in args.backends:
            from mnemo.stores.embedded_postgres import running as running_embedded_postgres

            with tempfile.TemporaryDirectory() as tmp:
                with running_embedded_postgres(Path(tmp) / "pgdata", database="reindex", cleanup="delete") as pg:
                    result["backends"]["postgres"] = await run_backend("postgres", pg.uri, args.sizes, args.turns)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reindex_turn", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 20_000])
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--backends", nargs="+", default=["memory", "postgres"], choices=["memory", "postgres"])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "bench" / "results")
    args = parser.parse_args(argv)
    path = write_json(args.out / "reindex_turn.json", asyncio.run(main_async(args)))
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
