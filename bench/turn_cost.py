"""What one turn of the agent costs: store round trips, embeddings, latency, tokens.

The compiled graph (``graphs.builder.compile(store=..., checkpointer=...)``)
is driven by a scripted chat model (``tests/scripted.py``: it answers by
rule, extraction included, so no model server and no network are needed and
the memory code runs unchanged) over a scripted conversation
(:mod:`bench.turn_script`) of several
users, each in two threads, in English and Chinese, with tool calls
(``remember_note``, ``recall_notes``) on some turns. One extra user starts
with a few hundred notes, to show how the cost grows with the size of the
memory (``load_memory`` lists every note to find the most recent ones).

Per turn it records:

* store round trips (``abatch`` calls, which every ``BaseStore`` method goes
  through) and their operations, per graph node;
* embedding calls and texts embedded, and the time spent in them, per node;
* wall time of ``load_memory``, ``write_memory``, ``call_model`` and
  ``tools`` (LangChain callbacks around each node run), with the embedding
  time shown apart (the remainder is store and Python work);
* tokens of the memory block injected into the prompt, against the
  full-context alternative (every earlier message of that user, across
  threads, plus the notes seeded for the large-memory user).

The scripted model answers instantly, so the node times are the memory
system's own overhead; a real model adds its latency to ``call_model`` and
the extraction inside ``write_memory``.

**Per write mode** (``memory_write_mode``), the same conversation again on a
fresh store, with the extractor made to take :data:`EXTRACTION_LATENCY_S`
(a small hosted model's structured call; the chat model stays instant): the
time a user waits per turn, from sending the message to the run's end
(what ``runs.wait`` / ``runs.join`` return after). ``hot`` never extracts,
``after_turn`` extracts before the run ends, ``background`` only schedules the
``memory_writer`` run; in-process there is no server to schedule on, so the
scheduling call is replaced by a no-op and its cost (one in-process
``runs.create``) is not included.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from tqdm import tqdm

from bench.common import TokenCounter, meta, write_json
from bench.counting import CountingEmbeddings, CountingStore, NodeTimer, SparseMeter
from bench.stats import summary
from bench.turn_script import Script, ScriptedTurn, conversation, scripted_model, seed_notes

#: The scripted model's name (:func:`bench.turn_script.scripted_model`) for the run only.
MODEL_NAME = "bench-scripted"
NODES = ("load_memory", "compact_history", "call_model", "tools", "write_memory")
WRITE_MODES: tuple[Literal["hot", "after_turn", "background"], ...] = ("hot", "after_turn", "background")
#: Simulated extractor latency for the per-write-mode comparison.
EXTRACTION_LATENCY_S = 0.5


async def _drive(turns: list[ScriptedTurn], big_notes: int, counter: TokenCounter) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import builder
    from mnemo import User, aremember_many
    from mnemo.stores import index_config
    from mnemo.stores.embeddings import embeddings
    from nodes.context import Context

    emb = CountingEmbeddings(embeddings)
    store = CountingStore(index=index_config(emb))
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    script = Script(turns)
    with scripted_model(MODEL_NAME, script), SparseMeter() as meter:
        await embeddings.aembed_query("warm up")  # model load is a one-off, not a turn's cost
        seeded = seed_notes(big_notes) if any(t.user == "u_big" for t in turns) else []
        if seeded:
            await aremember_many(store, User.of("u_big"), seeded)
        history: dict[str, list[str]] = defaultdict(list)  # full-context alternative, per user
        history["u_big"] = [f"(earlier) {n}" for n in seeded]
        records = []
        for i, turn in enumerate(tqdm(turns, desc="scripted turns", unit="turn", file=sys.stderr, disable=None)):
            store.calls.clear()
            emb.calls.clear()
            script.extractor_inputs.clear()
            meter.calls.clear()
            timer = NodeTimer(NODES)
            memory = ""
            reply = ""
            config: RunnableConfig = {"configurable": {"thread_id": turn.thread}, "callbacks": [timer]}
            start = time.perf_counter()
            async for update in graph.astream(
                {"messages": [HumanMessage(turn.text)]},
                config,
                context=Context(user_id=turn.user, model=MODEL_NAME),
                stream_mode="updates",
            ):
                for node, value in update.items():
                    if node == "load_memory" and isinstance(value, dict):
                        memory = value.get("memory", "")
                    if node == "call_model" and isinstance(value, dict):
                        reply = value["messages"][-1].text
            total = time.perf_counter() - start

            node_ms: dict[str, float] = defaultdict(float)
            for name, seconds in timer.runs:
                node_ms[name] += seconds * 1000
            trips: Counter = Counter(c.node for c in store.calls)
            ops: dict[str, Counter] = defaultdict(Counter)
            for c in store.calls:
                ops[c.node].update(c.ops)
            sparse_ms: dict[str, float] = defaultdict(float)
            sparse_texts: Counter = Counter()
            for node, kind, seconds in meter.calls:  # per node, and per kind ("query", "write")
                for key in (node, kind):
                    sparse_ms[key] += seconds * 1000
                    sparse_texts[key] += 1
            embed_ms: dict[str, float] = defaultdict(float)
            embed_calls: Counter = Counter()
            embed_texts: Counter = Counter()
            for call in emb.calls:
                embed_ms[call.node] += call.seconds * 1000
                embed_calls[call.node] += 1
                embed_texts[call.node] += call.texts
            full_context = "\n".join(history[turn.user])
            records.append(
                {
                    "turn": i + 1,
                    "user": turn.user,
                    "thread": turn.thread,
                    "tool": turn.tool[0] if turn.tool else None,
                    "notes_extracted": len(turn.extract.get("notes", [])),
                    "total_ms": round(total * 1000, 1),
                    "node_ms": {n: round(node_ms[n], 1) for n in NODES if n in node_ms},
                    "embedding_ms": {n: round(v, 1) for n, v in embed_ms.items()},
                    "store_round_trips": {**{n: trips[n] for n in trips}, "total": sum(trips.values())},
                    "store_ops": {n: dict(c) for n, c in ops.items()},
                    "embedding_calls": {**dict(embed_calls), "total": sum(embed_calls.values())},
                    "texts_embedded": {**dict(embed_texts), "total": sum(embed_texts.values())},
                    "sparse_cpu_ms": {
                        **{n: round(v, 1) for n, v in sparse_ms.items()},
                        "total": round(sparse_ms["query"] + sparse_ms["write"], 1),
                    },
                    "sparse_texts": {**dict(sparse_texts), "total": sparse_texts["query"] + sparse_texts["write"]},
                    "memory_tokens": counter.count(memory),
                    "extractor_tokens": sum(counter.count(sent) for sent in script.extractor_inputs),
                    "full_context_tokens": counter.count(full_context),
                }
            )
            history[turn.user] += [f"user: {turn.text}", f"assistant: {reply}"]
        return {"records": records, "seeded_notes": len(seeded)}


async def _drive_write_modes(turns: list[ScriptedTurn], extraction_latency_s: float) -> dict[str, Any]:
    """Wall time of each turn's run in each write mode (fresh store each)."""
    from unittest import mock

    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import builder
    from mnemo.stores import index_config
    from mnemo.stores.embeddings import embeddings
    from nodes import write_memory as write_node
    from nodes.context import Context

    async def schedule(*args: Any, **kwargs: Any) -> dict:
        return {}

    out: dict[str, Any] = {}
    with scripted_model(MODEL_NAME, Script(turns, extraction_latency_s)):
        await embeddings.aembed_query("warm up")
        for mode in WRITE_MODES:
            store = CountingStore(index=index_config(embeddings))
            graph = builder.compile(store=store, checkpointer=InMemorySaver())
            waits = []
            with (
                mock.patch.object(write_node, "on_platform", lambda config: True),
                mock.patch.object(write_node, "aschedule_extraction", schedule),
            ):
                for turn in tqdm(turns, desc=f"write mode {mode}", unit="turn", file=sys.stderr, disable=None):
                    mode_config: RunnableConfig = {"configurable": {"thread_id": f"{mode}-{turn.thread}"}}
                    start = time.perf_counter()
                    await graph.ainvoke(
                        {"messages": [HumanMessage(turn.text)]},
                        mode_config,
                        context=Context(user_id=turn.user, model=MODEL_NAME, memory_write_mode=mode),
                    )
                    waits.append((time.perf_counter() - start) * 1000)
            out[mode] = summary(waits)
        return out


def _aggregate(records: list[dict]) -> dict[str, Any]:
    """p50/p95 per node of wall time, embedding time and the remainder; mean
    round trips and embeddings per turn; token means."""
    out: dict[str, Any] = {"turns": len(records)}
    latency = {}
    for node in NODES:
        ran = [r for r in records if node in r["node_ms"]]
        if not ran:
            continue
        wall = [r["node_ms"][node] for r in ran]
        emb = [r["embedding_ms"].get(node, 0.0) for r in ran]
        latency[node] = {
            "wall_ms": summary(wall),
            "embedding_ms": summary(emb),
            "without_embedding_ms": summary([w - e for w, e in zip(wall, emb, strict=True)]),
            "store_round_trips": summary([r["store_round_trips"].get(node, 0) for r in ran]),
            "embedding_calls": summary([r["embedding_calls"].get(node, 0) for r in ran]),
            "texts_embedded": summary([r["texts_embedded"].get(node, 0) for r in ran]),
            "sparse_cpu_ms": summary([r["sparse_cpu_ms"].get(node, 0.0) for r in ran]),
            "sparse_texts": summary([r["sparse_texts"].get(node, 0) for r in ran]),
        }
    out["per_node"] = latency
    out["turn_total_ms"] = summary([r["total_ms"] for r in records])
    out["store_round_trips_per_turn"] = summary([r["store_round_trips"]["total"] for r in records])
    out["embedding_calls_per_turn"] = summary([r["embedding_calls"]["total"] for r in records])
    out["texts_embedded_per_turn"] = summary([r["texts_embedded"]["total"] for r in records])
    out["sparse_cpu_ms_per_turn"] = summary([r["sparse_cpu_ms"]["total"] for r in records])
    for kind in ("query", "write"):
        texts = sum(r["sparse_texts"].get(kind, 0) for r in records)
        cpu = sum(r["sparse_cpu_ms"].get(kind, 0.0) for r in records)
        out[f"sparse_cpu_ms_per_{kind}_text"] = round(cpu / texts, 1) if texts else None
    out["memory_tokens"] = summary([r["memory_tokens"] for r in records], 1)
    out["extractor_tokens"] = summary([r["extractor_tokens"] for r in records], 1)
    out["full_context_tokens"] = summary([r["full_context_tokens"] for r in records], 1)
    return out


def run(out: Path, *, smoke: bool = False, counter: TokenCounter | None = None) -> dict[str, Any]:
    """Write ``out/turn_cost.json``; returns the result."""
    started = time.time()
    counter = counter or TokenCounter()
    turns = conversation(smoke)
    big_notes = 300
    driven = asyncio.run(_drive(turns, big_notes, counter))
    latency = 0.05 if smoke else EXTRACTION_LATENCY_S
    write_modes = asyncio.run(_drive_write_modes(turns, latency))
    records = driven["records"]
    by_user = {}
    for user in dict.fromkeys(r["user"] for r in records):
        by_user[user] = _aggregate([r for r in records if r["user"] == user])
    result = {
        "benchmark": "turn_cost",
        "setup": {
            "users": sorted({t.user for t in turns}),
            "turns": len(turns),
            "seeded_notes_for_u_big": driven["seeded_notes"],
            "chat_model": "scripted (tests/scripted.py): instant answers, so times are mnemo's own overhead",
            "store": (
                "InMemoryStore with the bundled multilingual-e5-small index "
                "(round trips as a networked store would make them)"
            ),
            "tokenizer": counter.name,
        },
        "summary": _aggregate(records),
        "write_modes": {"extraction_latency_ms": round(latency * 1000), "user_wait_ms": write_modes},
        "summary_by_user": by_user,
        "turns": records,
    }
    result["meta"] = meta("turn-cost", started, tokenizer=counter.name)
    write_json(out / "turn_cost.json", result)
    print_summary(result)
    return result


def print_summary(result: dict[str, Any]) -> None:
    s = result["summary"]
    print(f"\nPer-turn cost over {s['turns']} scripted turns (scripted model: times are mnemo's overhead)")
    print(f"{'node':<14}{'p50 ms':>9}{'p95 ms':>9}{'embed p50':>11}{'round trips p50':>17}{'texts embedded p50':>20}")
    for node, row in s["per_node"].items():
        print(
            f"{node:<14}{row['wall_ms']['p50']:>9}{row['wall_ms']['p95']:>9}{row['embedding_ms']['p50']:>11}"
            f"{row['store_round_trips']['p50']:>17}{row['texts_embedded']['p50']:>20}"
        )
    print(
        f"learned sparse encoder CPU: {s['sparse_cpu_ms_per_turn']['mean']} ms per turn (mean), "
        f"{s['sparse_cpu_ms_per_query_text']} ms per query, {s['sparse_cpu_ms_per_write_text']} ms per note written"
    )
    memory, full = s["memory_tokens"], s["full_context_tokens"]
    print(
        f"memory tokens injected: mean {memory['mean']} vs full context mean {full['mean']}"
        f" (p95 {memory['p95']} vs {full['p95']})\n"
    )
    if wm := result.get("write_modes"):
        print(f"User wait per turn by memory_write_mode (extractor takes {wm['extraction_latency_ms']} ms):")
        for mode, row in wm["user_wait_ms"].items():
            print(f"  {mode:<11} p50 {row['p50']:>8} ms   p95 {row['p95']:>8} ms")
        print()
