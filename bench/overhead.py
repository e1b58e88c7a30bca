"""What memory costs a turn: mnemo next to a bare agent and to LangChain's memory-agent template.

``python -m bench overhead`` serves three graphs under one ``langgraph dev``
per store (:mod:`bench.overhead_serve`: the bare ``StateGraph`` of
:mod:`bench.bare_agent`, the template of :mod:`bench.memory_agent`, mnemo as
shipped), in memory (``langgraph.json``) and on the embedded PostgreSQL
(``langgraph.postgres.json``) in one run (``--only`` one of them for a quick
run), and drives the same mixed conversations through each, streamed: per
graph and kind of turn, time to first token (from the request, and from the
moment the server started the run: the dev server's queue wait left out, as
:mod:`bench.overhead_serve` says why), CPU and wall per turn; then users all at
once: time to first token and turns per second. The ``ttft_added`` goals read
the time from the run's start; ``ttft_added_from_request_p50_ms`` is the same
gap from the request.

What the turns encode (``encodings``) is counted in-process, not on the
server (:func:`count_encodings`): the same graph on the store
:func:`mnemo.stores.open_store` opens (in memory, or PostgreSQL), a scripted
model answering as the stub does; per kind of turn and step, the texts the
embedder is given as queries and as passages and those the SPLADE encoder is
given; and (``encoder_cpu_ms``) the CPU time of those calls in a turn as
shipped, each read on the thread that ran it. mnemo's CPU per turn on the
server less that, over the bare agent's, is its own work without the encoders
(``own_work_ratio_over_bare``).

Results: ``<out>/overhead.json``: per store the figures, a ``summary`` (the
worst kind of turn for each) and the issue's ``goals``, printed last.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from bench.common import meta, write_json
from bench.load import SimUser
from bench.turn_script import scripted_model

#: The stores measured, and the config each is served with.
STORES = {"memory": "langgraph.json", "postgres": "langgraph.postgres.json"}


def _step() -> str:
    from langgraph.config import get_config

    try:
        return str(get_config().get("metadata", {}).get("langgraph_node", "?"))
    except RuntimeError:  # outside a run
        return "?"


WriteMode = Literal["hot", "after_turn", "background"]


#: One encoding call: the step that asked, what it encoded, how many texts, its CPU seconds.
Encoding = tuple[str, str, int, float]


def _timed(log: list[Encoding], what: str, fn: Any, count: Any) -> Any:
    """``fn``, each call logged with its step, its number of texts and the
    CPU time of the thread it ran on (exact when calls overlap in threads)."""

    def call(arg: Any, *rest: Any, **kw: Any) -> Any:
        start = time.thread_time()
        try:
            return fn(arg, *rest, **kw)
        finally:
            log.append((_step(), what, count(arg), time.thread_time() - start))

    return call


def _encoding_log(
    turns: int, memory_write_mode: WriteMode, postgres_uri: str | None = None
) -> dict[str, list[list[Encoding]]]:
    """Per kind of turn (:data:`bench.load.KINDS`), each turn's encodings over
    ``turns`` turns of one :class:`bench.load.SimUser`'s mixed conversation (in-process, see above):
    the bundled E5 model's ``query`` / ``passage`` calls and SPLADE's ``encode``;
    on the in-memory store, or on PostgreSQL at ``postgres_uri`` (both opened
    by :func:`mnemo.stores.open_store`, as the product opens them)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import builder
    from harness.scripted import tool_call
    from harness.stub_openai import REMEMBER
    from mnemo.stores import open_store, sparse_encoder
    from mnemo.stores.embeddings import embeddings as default_embeddings
    from nodes.context import Context

    def respond(messages: list, tools: list[str]) -> AIMessage:  # the stub's answers (harness/stub_openai.py)
        last = messages[-1]
        if isinstance(last, HumanMessage) and "remember_note" in tools and (m := REMEMBER.search(last.text)):
            return tool_call("remember_note", text=m.group(1))
        if "MemoryExtraction" in tools:
            return tool_call("MemoryExtraction")
        return AIMessage(content="ok: " + last.text[:200] if last.type == "tool" else "ok")

    def texts(arg: Any) -> int:
        return 1 if isinstance(arg, str) else len(arg)

    log: list[Encoding] = []
    model, encoder = default_embeddings._get_model(), sparse_encoder()
    # (object, method, what it encodes): each method wrapped on the instance, the class's again after.
    patches = [(model, "query", "query"), (model, "passage", "passage")]
    patches += [(encoder, "encode", "sparse")] if encoder is not None else []
    for obj, method, what in patches:
        setattr(obj, method, _timed(log, what, getattr(obj, method), texts))
    name = "bench-overhead-scripted"
    user = SimUser(0)
    per_turn: dict[str, list[list[Encoding]]] = defaultdict(list)

    async def converse() -> None:
        async with open_store(postgres_uri=postgres_uri, sweep=False) as store:
            agent = builder.compile(checkpointer=InMemorySaver(), store=store)
            for turn in range(turns):
                log.clear()
                await agent.ainvoke(
                    {"messages": [HumanMessage(user.mixed(turn))]},
                    cast(Any, {"configurable": {"thread_id": "t"}}),
                    context=Context(user_id=user.uid, model=name, memory_write_mode=memory_write_mode),
                )
                per_turn[user.kind(turn)].append(list(log))

    try:
        with scripted_model(name, respond):
            asyncio.run(converse())
    finally:
        for obj, method, _ in patches:
            delattr(obj, method)
    return per_turn


def _counts(logs: list[list[Encoding]]) -> dict[str, dict[str, float]]:
    """Per step, the median number of texts a turn embeds as queries and as
    passages and encodes by SPLADE."""
    counts: list[Counter[tuple[str, str]]] = []
    for log in logs:
        c: Counter[tuple[str, str]] = Counter()
        for step, what, n, _ in log:
            c[(step, what)] += n
        counts.append(c)
    steps = sorted({step for c in counts for step, _ in c})
    return {
        step: {what: float(np.median([c[(step, what)] for c in counts])) for what in ("query", "passage", "sparse")}
        for step in steps
    }


def _cpu_ms(logs: list[list[Encoding]], steps: tuple[str, ...] | None = None) -> dict[str, float]:
    """The median CPU milliseconds a turn spends in E5 (``e5``) and in SPLADE
    (``sparse``) on ``steps`` (all when None)."""
    per: dict[str, list[float]] = {"e5": [0.0] * len(logs), "sparse": [0.0] * len(logs)}
    for i, log in enumerate(logs):
        for step, what, _, cpu in log:
            if steps is None or step in steps:
                per["sparse" if what == "sparse" else "e5"][i] += cpu * 1000.0
    return {k: round(float(np.median(v)), 1) for k, v in per.items()}


def count_encodings(
    *, turns: int = 4, memory_write_mode: WriteMode = "hot", postgres_uri: str | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Per kind of turn, :func:`_counts`."""
    return {kind: _counts(logs) for kind, logs in _encoding_log(turns, memory_write_mode, postgres_uri).items()}


def encoder_cpu_ms(
    *, turns: int = 10, memory_write_mode: WriteMode = "after_turn", steps: tuple[str, ...] | None = None
) -> dict[str, dict[str, float]]:
    """Per kind of turn, :func:`_cpu_ms`: what the server's CPU per turn would lose without the encoders."""
    return {kind: _cpu_ms(logs, steps) for kind, logs in _encoding_log(turns, memory_write_mode).items()}


def _worst(values: list[float | None], *, high: bool = True) -> float | None:
    """The worst of ``values`` (the highest, or the lowest), None when one is missing."""
    known = [v for v in values if v is not None]
    if not values or len(known) < len(values):
        return None
    return round(max(known) if high else min(known), 2)


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _minus(a: float | None, b: float | None) -> float | None:
    return a - b if a is not None and b is not None else None


def ttft_added(stores: dict[str, Any], store: str, what: str = "ttft_run_ms") -> float | None:
    """mnemo's p50 time to first token less the bare agent's, the worst kind of turn, on ``store``
    (None when not measured). ``what``: ``ttft_run_ms`` (from the run's start: what the graph adds)
    or ``ttft_ms`` (from the request: the dev server's queue wait in it)."""
    if store not in stores:
        return None
    graphs = stores[store]["graphs"]
    kinds = [k for k in graphs["mnemo"][what] if k != "all"]
    return _worst([_minus(graphs["mnemo"][what][k]["p50"], graphs["bare"][what][k]["p50"]) for k in kinds])


def summarize(stores: dict[str, Any], encoders: dict[str, dict[str, float]]) -> dict[str, float | None]:
    """The issue's figures, each the worst kind of turn (and store, for the ratios) measured."""

    def p50(store: str, graph: str, what: str, kind: str) -> float | None:
        return stores[store]["graphs"][graph][what][kind]["p50"]

    def kinds(store: str) -> list[str]:
        return [k for k in stores[store]["graphs"]["mnemo"]["cpu_ms"] if k != "all"]

    every = [(s, k) for s in stores for k in kinds(s)]
    return {
        "ttft_added_p50_ms": ttft_added(stores, "memory"),
        "ttft_added_p50_ms_postgres": ttft_added(stores, "postgres"),
        "cpu_ratio_over_memory_agent": _worst(
            [_ratio(p50(s, "mnemo", "cpu_ms", k), p50(s, "memory_agent", "cpu_ms", k)) for s, k in every]
        ),
        "own_work_ratio_over_bare": _worst(
            [
                _ratio(_minus(p50(s, "mnemo", "cpu_ms", k), sum(encoders[k].values())), p50(s, "bare", "cpu_ms", k))
                for s, k in every
            ]
        ),
        "concurrent_turns_per_s_ratio_over_memory_agent": _worst(
            [
                _ratio(
                    stores[s]["concurrent"]["mnemo"]["turns_per_s"],
                    stores[s]["concurrent"]["memory_agent"]["turns_per_s"],
                )
                for s in stores
            ],
            high=False,
        ),
    }


#: The issue's goals: (summary key, "max" or "min", the bound, what it says).
GOALS = (
    ("ttft_added_p50_ms", "max", 60.0, "time to first token at most the bare agent's + 60 ms at p50, in memory"),
    ("ttft_added_p50_ms_postgres", "max", 60.0, "the same on PostgreSQL"),
    ("cpu_ratio_over_memory_agent", "max", 1.5, "CPU per turn at most 1.5x memory-agent's"),
    ("own_work_ratio_over_bare", "max", 2.0, "own work without the encoders at most 2x the bare agent's"),
    ("concurrent_turns_per_s_ratio_over_memory_agent", "min", 0.7, "20 users at once: turns/s at least 0.7x"),
)


def goals(figures: dict[str, float | None]) -> list[dict[str, Any]]:
    """Each goal with its figure and ``pass`` / ``short`` (``not measured`` without one)."""
    out = []
    for key, way, bound, what in GOALS:
        value = figures[key]
        met = None if value is None else (value <= bound if way == "max" else value >= bound)
        out.append(
            {
                "key": key,
                "goal": what,
                "bound": bound,
                "value": value,
                "status": {None: "not measured", True: "pass", False: "short"}[met],
            }
        )
    return out


def run(
    out: Path,
    *,
    smoke: bool = False,
    only: str | None = None,
    users: int = 5,
    turns: int = 10,
    concurrent_users: int = 20,
    concurrent_turns: int = 5,
) -> dict[str, Any]:
    """Every store (or ``only`` one), the three graphs; writes ``overhead.json``.
    ``smoke``: 1 user x 4 turns (one of each kind), 2 users x 2 turns at once."""
    from bench.overhead_serve import serve

    if smoke:
        users, turns, concurrent_users, concurrent_turns = 1, 4, 2, 2
    started = time.time()
    shape = {"users": users, "turns": turns, "concurrent_users": concurrent_users, "concurrent_turns": concurrent_turns}
    stores = {
        name: serve(config, **shape, idle_seconds=2.0 if smoke else 5.0)
        for name, config in STORES.items()
        if only in (None, name)
    }
    # One in-process conversation per write mode: what each step encodes, and (as shipped) what that costs.
    logs = {mode: _encoding_log(4 if smoke else 10, mode) for mode in ("after_turn", "hot")}
    encoders = {kind: _cpu_ms(turn_logs) for kind, turn_logs in logs["after_turn"].items()}
    figures = summarize(stores, encoders)
    result: dict[str, Any] = {
        "meta": meta("overhead", started, **shape, stores={k: v["config"] for k, v in stores.items()}),
        "stores": stores,
        # In-process: texts embedded / encoded per step, median per turn; the encoders' CPU per turn as shipped.
        "encodings": {mode: {kind: _counts(tl) for kind, tl in by_kind.items()} for mode, by_kind in logs.items()},
        "encoder_cpu_ms": encoders,
        "summary": figures,
        # The same gap from the request (the dev server's queue wait in it: bench.overhead_serve).
        "ttft_added_from_request_p50_ms": {name: ttft_added(stores, name, "ttft_ms") for name in stores},
        "goals": goals(figures),
    }
    write_json(out / "overhead.json", result)
    for name, store in stores.items():
        for g, fig in store["graphs"].items():
            ttft = "  ".join(f"{k} {v['p50']}/{v['p95']}" for k, v in fig["ttft_run_ms"].items())
            cpu = fig["cpu_ms"]["all"]["p50"]
            print(f"{name:8} {g:12} ttft from the run's start p50/p95 ms: {ttft}; cpu p50 {cpu} ms")
    for goal in result["goals"]:
        print(f"{goal['status']:>12}  {goal['key']} = {goal['value']} ({goal['goal']})")
    return result
