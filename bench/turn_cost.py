"""What one turn of the agent costs: store round trips, embeddings, latency, tokens.

The compiled graph (``graphs.agent.builder.compile(store=..., checkpointer=...)``)
is driven by a scripted chat model (``tests/scripted.py``: it answers by
rule, extraction included, so no model server and no network are needed and
the memory code runs unchanged) over a scripted conversation of several
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
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from tqdm import tqdm

from bench.common import CountingEmbeddings, CountingStore, TokenCounter, meta, summary, write_json

#: Registered under this name in ``nodes.chat_models._models`` for the run only.
MODEL_NAME = "bench-scripted"
NODES = ("load_memory", "compact_history", "call_model", "tools", "write_memory")
WRITE_MODES: tuple[Literal["hot", "after_turn", "background"], ...] = ("hot", "after_turn", "background")
#: Simulated extractor latency for the per-write-mode comparison.
EXTRACTION_LATENCY_S = 0.5


@dataclass
class ScriptedTurn:
    """One user message and what the scripted models do with it."""

    user: str
    thread: str
    text: str
    extract: dict[str, Any] = field(default_factory=dict)
    """Arguments of the ``MemoryExtraction`` the extractor returns."""
    tool: tuple[str, dict[str, Any]] | None = None
    """A tool call the chat model makes before answering."""


def conversation(smoke: bool) -> list[ScriptedTurn]:
    """Three users (English, Chinese, English), two threads each, turns
    interleaved across users as a server would see them."""
    ana = [
        ScriptedTurn("u_ana", "ana-1", "Hi, I'm Ana and I live in Lisbon.", {"name": "Ana", "city": "Lisbon"}),
        ScriptedTurn(
            "u_ana",
            "ana-1",
            "I'm allergic to peanuts, please keep that in mind.",
            {"notes": ["The user is allergic to peanuts."]},
        ),
        ScriptedTurn("u_ana", "ana-1", "Do you ship air purifiers to Portugal?"),
        ScriptedTurn(
            "u_ana", "ana-1", "I have two cats and a dog at home.", {"notes": ["The user has two cats and a dog."]}
        ),
        ScriptedTurn("u_ana", "ana-2", "Which of your snacks are safe for me?"),
        ScriptedTurn(
            "u_ana",
            "ana-2",
            "Remember that I prefer email over phone calls.",
            tool=("remember_note", {"text": "The user prefers email over phone calls."}),
        ),
        ScriptedTurn(
            "u_ana", "ana-2", "As I said, I have a peanut allergy.", {"notes": ["The user has a peanut allergy."]}
        ),
        ScriptedTurn("u_ana", "ana-2", "What do you remember about my pets?", tool=("recall_notes", {"query": "pets"})),
    ]
    zhou = [
        ScriptedTurn("u_zhou", "zhou-1", "你好，我叫周伟，住在杭州。", {"name": "周伟", "city": "杭州"}),
        ScriptedTurn("u_zhou", "zhou-1", "我家里有一台小米空气净化器。", {"notes": ["用户家里有一台小米空气净化器。"]}),
        ScriptedTurn("u_zhou", "zhou-1", "请回答得简洁一点。", {"response_style": "concise"}),
        ScriptedTurn("u_zhou", "zhou-1", "我对花生过敏。", {"notes": ["用户对花生过敏。"]}),
        ScriptedTurn("u_zhou", "zhou-2", "我的净化器滤网多久换一次？"),
        ScriptedTurn("u_zhou", "zhou-2", "我每个月去上海出差。", {"notes": ["用户每个月去上海出差。"]}),
        ScriptedTurn("u_zhou", "zhou-2", "你还记得我对什么过敏吗？", tool=("recall_notes", {"query": "过敏"})),
        ScriptedTurn("u_zhou", "zhou-2", "谢谢！"),
    ]
    max_ = [
        ScriptedTurn("u_max", "max-1", "Hello, my name is Max.", {"name": "Max"}),
        ScriptedTurn(
            "u_max", "max-1", "I work night shifts, so I order late.", {"notes": ["The user works night shifts."]}
        ),
        ScriptedTurn("u_max", "max-1", "Can you recommend a quiet fan for my bedroom?"),
        ScriptedTurn(
            "u_max",
            "max-1",
            "My daughter Mia is allergic to dust.",
            {"notes": ["The user's daughter Mia is allergic to dust."]},
        ),
        ScriptedTurn("u_max", "max-2", "Is there a purifier that helps with dust allergies?"),
        ScriptedTurn("u_max", "max-2", "I drive an electric car.", {"notes": ["The user drives an electric car."]}),
        ScriptedTurn("u_max", "max-2", "Any accessories for my car?"),
        ScriptedTurn("u_max", "max-2", "Thanks, that's all."),
    ]
    big = [
        ScriptedTurn("u_big", "big-1", "Hi again, do you have new coffee beans?"),
        ScriptedTurn("u_big", "big-1", "I switched to oat milk recently.", {"notes": ["The user drinks oat milk."]}),
        ScriptedTurn("u_big", "big-2", "What grinder would suit my espresso machine?"),
        ScriptedTurn("u_big", "big-2", "Thanks!"),
    ]
    users = [ana[:3], zhou[:3]] if smoke else [ana, zhou, max_, big]
    turns: list[ScriptedTurn] = []
    for i in range(max(len(u) for u in users)):  # round-robin across users
        turns.extend(u[i] for u in users if i < len(u))
    return turns


def seed_notes(n: int) -> list[str]:
    """``n`` distinct, made-up facts for the large-memory user (no third-party data)."""
    subjects = [
        "coffee",
        "tea",
        "running shoes",
        "headphones",
        "a road bike",
        "a standing desk",
        "house plants",
        "board games",
        "a sourdough starter",
        "a camera",
        "hiking boots",
        "a robot vacuum",
        "jazz records",
        "a fountain pen",
        "winter tyres",
        "a sewing machine",
        "an aquarium",
        "a telescope",
        "a kayak",
        "a piano",
    ]
    verbs = [
        "owns",
        "wants to buy",
        "recently returned",
        "gave away",
        "repaired",
        "is saving for",
        "borrowed",
        "collects",
        "sold",
        "is comparing prices of",
        "received as a gift",
        "is unhappy with",
        "cleans weekly",
        "upgraded",
    ]
    notes = []
    for i in range(n):
        s, v = subjects[i % len(subjects)], verbs[(i // len(subjects)) % len(verbs)]
        notes.append(f"The user {v} {s} (item {i + 1}, bought in year {2000 + i % 25}).")
    return notes


class Script:
    """Responder for :class:`tests.scripted.ScriptedChatModel`."""

    def __init__(self, turns: list[ScriptedTurn], extraction_latency_s: float = 0.0) -> None:
        self.by_text = {t.text: t for t in turns}
        self.extraction_latency_s = extraction_latency_s
        self.extractor_inputs: list[str] = []
        """Everything each extraction call was sent (its messages' text)."""

    def __call__(self, messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
        from tests.scripted import tool_call

        if "MemoryExtraction" in tool_names:
            time.sleep(self.extraction_latency_s)  # runs in a worker thread (ScriptedChatModel)
            self.extractor_inputs.append("\n".join(m.text for m in messages))
            # The extractor sees "- <user message>" lines (quoted: JSON strings); merge what the script says for each.
            args: dict[str, Any] = {}
            for line in messages[-1].text.split("<existing_notes>")[0].splitlines():
                said = line[2:].strip()
                try:
                    said = json.loads(said) if said.startswith('"') else said
                except ValueError:  # not a quoted message (an instruction line of an older prompt)
                    continue
                turn = self.by_text.get(said) if line.startswith("- ") else None
                if turn:
                    for key, value in turn.extract.items():
                        args[key] = args.get(key, []) + value if key == "notes" else value
            return tool_call("MemoryExtraction", **args)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(content="Done.")
        turn = self.by_text.get(last.text) if isinstance(last, HumanMessage) else None
        if turn and turn.tool:
            name, args = turn.tool
            return tool_call(name, **args)
        return AIMessage(content="Sure.")


class NodeTimer(BaseCallbackHandler):
    """Wall time of each graph node run, from LangChain's chain callbacks.

    A node's runnable reports ``on_chain_start`` with its own name and
    ``metadata["langgraph_node"]`` equal to it; runnables inside the node
    (the model, the parser) carry the same metadata under other names and
    are ignored.
    """

    def __init__(self) -> None:
        self._open: dict[Any, tuple[str, float]] = {}
        self.runs: list[tuple[str, float]] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
        name = kwargs.get("name")
        if name in NODES and (metadata or {}).get("langgraph_node") == name:
            self._open[run_id] = (name, time.perf_counter())

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        if run_id in self._open:
            name, start = self._open.pop(run_id)
            self.runs.append((name, time.perf_counter() - start))

    def on_chain_error(self, error, *, run_id, **kwargs):
        self.on_chain_end(None, run_id=run_id)


async def _drive(turns: list[ScriptedTurn], big_notes: int, counter: TokenCounter) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder
    from mnemo import User, aremember_many
    from mnemo.stores import default_embeddings as embeddings
    from mnemo.stores import index_config
    from nodes import chat_models
    from nodes.context import Context
    from tests.scripted import ScriptedChatModel

    emb = CountingEmbeddings(embeddings)
    store = CountingStore(index=index_config(emb))
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    script = Script(turns)
    chat_models._models[MODEL_NAME] = ScriptedChatModel(respond=script)
    meter = SparseMeter()
    try:
        meter.start()
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
            timer = NodeTimer()
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
    finally:
        meter.stop()
        chat_models._models.pop(MODEL_NAME, None)


class SparseMeter:
    """CPU time of every text the learned sparse encoder (SPLADE,
    :mod:`mnemo.stores.splade`) encodes, with the graph node that asked: the
    encoder runs in a worker thread, whose own CPU time is what is measured
    (numpy's BLAS limited to one thread: ``OPENBLAS_NUM_THREADS=1``)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float]] = []
        self._patch: Any = None

    def start(self) -> None:
        from unittest import mock

        from bench.common import current_node
        from mnemo.stores import SpladeEncoder

        original = SpladeEncoder.encode

        def metered(encoder: SpladeEncoder, text: str) -> dict[str, float]:
            # mnemo.notes.sparse_vectors encodes a query in _query_vector, a note in _stamp.
            kind = "query" if sys._getframe(1).f_code.co_name == "_query_vector" else "write"
            start = time.thread_time()
            try:
                return original(encoder, text)
            finally:
                self.calls.append((current_node(), kind, time.thread_time() - start))

        self._patch = mock.patch.object(SpladeEncoder, "encode", metered)
        self._patch.start()

    def stop(self) -> None:
        if self._patch is not None:
            self._patch.stop()


async def _drive_write_modes(turns: list[ScriptedTurn], extraction_latency_s: float) -> dict[str, Any]:
    """Wall time of each turn's run in each write mode (fresh store each)."""
    from unittest import mock

    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder
    from mnemo.stores import default_embeddings as embeddings
    from mnemo.stores import index_config
    from nodes import chat_models
    from nodes import write_memory as write_node
    from nodes.context import Context
    from tests.scripted import ScriptedChatModel

    async def schedule(*args: Any, **kwargs: Any) -> dict:
        return {}

    out: dict[str, Any] = {}
    chat_models._models[MODEL_NAME] = ScriptedChatModel(respond=Script(turns, extraction_latency_s))
    try:
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
    finally:
        chat_models._models.pop(MODEL_NAME, None)


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
