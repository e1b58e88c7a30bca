"""What memory costs a turn: mnemo's graph next to a bare LangGraph agent.

``python -m bench overhead`` starts one server the way the README does
(``./scripts/dev`` in a copy of the project, through ``tests/devserver.py``,
the stub model of ``tests/stub_openai.py``) whose copied ``langgraph.json``
serves, beside mnemo's ``agent`` (run as shipped, and with
``memory_write_mode="hot"``: the turn without the extraction after the reply),
a bare agent (:mod:`bench.bare_agent`: START -> call_model -> END, no
memory). The same scripted conversations (:class:`bench.load.SimUser`: a
profile turn, then "Remember that ..." turns) go through each, one turn at a
time, the graphs taking turns at going first, so that the load other work
puts on the machine falls on all alike.

Per turn (run created to run joined) it reads the wall time and the CPU time
of the server's process tree (every thread of every process in the server's
session: ``/proc/<pid>/task/<tid>/schedstat``, nanoseconds). The server's
CPU while idle (reloader, timers) is measured over a few seconds before the
turns and reported beside (``idle_cpu_ms_per_s``); ``cpu_net_ms`` subtracts
it pro rata of each turn's wall time. The split by step comes from the
thread's checkpoints after the turn (the time between a step's checkpoint
and the next one, per node; checkpoint writes included), read after the
turn's CPU, so it costs the measurement nothing.

``--postgres``: the same on ``langgraph.postgres.json`` (mnemo's store in the
embedded PostgreSQL, which runs in processes of its own: its CPU is not in the
figures, the embedder's and the server's are).

What the turns encode (``encodings``) is counted in-process, not on the
server (:func:`count_encodings`): the same graph on an ``InMemoryStore`` with
``langgraph.json``'s index, a scripted model answering as the stub does; per
kind of turn and step, the texts the embedder is given as queries and as
passages and those the SPLADE encoder is given; and (``encoder_cpu_ms``) the
CPU time of those calls on the hot path's steps, each read on the thread that
ran it, with the server's hot path less that time over the bare agent's
(``ratio_mnemo_hot_path_without_encoders_over_bare``): what mnemo's steps and
store work cost without a model to run.

Results: ``<out>/overhead.json`` (``overhead_postgres.json`` with ``--postgres``).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from bench.common import REPO_ROOT, meta, summary, write_json
from bench.load import SimUser

#: What runs each turn: the graph served, and the context of its runs beside the user's id.
#: ``mnemo_hot_path`` is mnemo with ``memory_write_mode="hot"``: the turn without the
#: extraction after the reply, i.e. the CPU the user waits for.
GRAPHS: dict[str, tuple[str, dict[str, Any]]] = {
    "mnemo": ("agent", {}),
    "mnemo_hot_path": ("agent", {"memory_write_mode": "hot"}),
    "bare": ("bare", {}),
}
#: mnemo's steps the user waits for; ``write_memory`` runs after the reply.
HOT_PATH = ("load_memory", "compact_history", "call_model", "tools")


def _session_cpu_ns(sid: int) -> int:
    """CPU time (ns) of every thread of every live process in session ``sid``."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[3]) != sid:  # field 6 of stat: the session id
                continue
            for task in os.scandir(Path(entry.path, "task")):
                total += int(Path(task.path, "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue  # a process or thread that ended while we read
    return total


def _step_times(history: list[dict], run_id: str) -> dict[str, float]:
    """Seconds per node of one run, from the thread's checkpoints."""
    snaps = [s for s in history if (s.get("metadata") or {}).get("run_id") == run_id]
    snaps.sort(key=lambda s: s["created_at"])
    out: dict[str, float] = defaultdict(float)
    for before, after in zip(snaps, snaps[1:], strict=False):
        took = (
            datetime.fromisoformat(after["created_at"]) - datetime.fromisoformat(before["created_at"])
        ).total_seconds()
        nodes = [n for n in before.get("next", []) if not n.startswith("__")]
        for node in nodes:
            out[node] += took / len(nodes)
    return dict(out)


async def _turn(client: Any, graph: str, thread_id: str, text: str, user: SimUser, sid: int) -> dict[str, Any]:
    cpu0, wall0 = _session_cpu_ns(sid), time.perf_counter()
    run = await client.runs.create(
        thread_id,
        GRAPHS[graph][0],
        context={"user_id": user.uid, **GRAPHS[graph][1]},
        input={"messages": [{"role": "user", "content": text}]},
    )
    await client.runs.join(thread_id, run["run_id"])
    wall, cpu = time.perf_counter() - wall0, (_session_cpu_ns(sid) - cpu0) / 1e9
    status = (await client.runs.get(thread_id, run["run_id"]))["status"]
    history = await client.threads.get_history(thread_id, limit=100)
    return {"ok": status == "success", "wall": wall, "cpu": cpu, "steps": _step_times(history, run["run_id"])}


WriteMode = Literal["hot", "after_turn", "background"]


def _step() -> str:
    from langgraph.config import get_config

    try:
        return str(get_config().get("metadata", {}).get("langgraph_node", "?"))
    except RuntimeError:  # outside a run
        return "?"


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
    """Per kind of turn (``profile``, ``remember``), each turn's encodings over
    ``turns`` turns of one :class:`bench.load.SimUser` (in-process, see above):
    the bundled E5 model's ``query`` / ``passage`` calls and SPLADE's ``encode``;
    on the in-memory store, or on PostgreSQL at ``postgres_uri`` (both opened
    by :func:`mnemo.stores.open_store`, as the product opens them)."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder
    from mnemo.stores import default_embeddings, open_store, sparse_encoder
    from nodes import chat_models
    from nodes.context import Context
    from tests.scripted import ScriptedChatModel, tool_call
    from tests.stub_openai import REMEMBER

    def respond(messages: list, tools: list[str]) -> AIMessage:  # the stub's answers (tests/stub_openai.py)
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
    chat_models._models[name] = ScriptedChatModel(respond=respond)
    user = SimUser(0)
    per_turn: dict[str, list[list[Encoding]]] = defaultdict(list)

    async def converse() -> None:
        async with open_store(postgres_uri=postgres_uri, sweep=False) as store:
            agent = builder.compile(checkpointer=InMemorySaver(), store=store)
            for turn in range(turns):
                log.clear()
                await agent.ainvoke(
                    {"messages": [HumanMessage(user.message(turn))]},
                    cast(Any, {"configurable": {"thread_id": "t"}}),
                    context=Context(user_id=user.uid, model=name, memory_write_mode=memory_write_mode),
                )
                per_turn["profile" if turn == 0 else "remember"].append(list(log))

    try:
        asyncio.run(converse())
    finally:
        chat_models._models.pop(name, None)
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


def _cpu_ms(logs: list[list[Encoding]]) -> dict[str, float]:
    """The median CPU milliseconds a turn spends in E5 (``e5``) and in SPLADE
    (``sparse``) on the hot path's steps (not ``write_memory``'s)."""
    per: dict[str, list[float]] = {"e5": [0.0] * len(logs), "sparse": [0.0] * len(logs)}
    for i, log in enumerate(logs):
        for step, what, _, cpu in log:
            if step in HOT_PATH:
                per["sparse" if what == "sparse" else "e5"][i] += cpu * 1000.0
    return {k: round(float(np.median(v)), 1) for k, v in per.items()}


def count_encodings(
    *, turns: int = 4, memory_write_mode: WriteMode = "hot", postgres_uri: str | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Per kind of turn (``profile``, ``remember``), :func:`_counts`."""
    return {kind: _counts(logs) for kind, logs in _encoding_log(turns, memory_write_mode, postgres_uri).items()}


def encoder_cpu_ms(*, turns: int = 10, memory_write_mode: WriteMode = "hot") -> dict[str, dict[str, float]]:
    """Per kind of turn, :func:`_cpu_ms`: what the server's CPU per turn would lose without the encoders."""
    return {kind: _cpu_ms(logs) for kind, logs in _encoding_log(turns, memory_write_mode).items()}


def _report(turns: list[dict[str, Any]], idle_per_s: float) -> dict[str, Any]:
    ms = 1000.0
    steps: dict[str, list[float]] = defaultdict(list)
    for t in turns:
        for node, took in t["steps"].items():
            steps[node].append(took * ms)
    hot = [sum(v for k, v in t["steps"].items() if k in HOT_PATH) * ms for t in turns]
    return {
        "turns": len(turns),
        "turns_failed": sum(not t["ok"] for t in turns),
        "cpu_ms": summary([t["cpu"] * ms for t in turns]),
        "cpu_net_ms": summary([(t["cpu"] - idle_per_s * t["wall"]) * ms for t in turns]),
        "wall_ms": summary([t["wall"] * ms for t in turns]),
        # The profile turn (the model answers at once) apart from the "Remember ..." ones (a tool call).
        "cpu_ms_by_turn": {
            kind: summary([t["cpu"] * ms for t in turns if t["kind"] == kind]) for kind in ("profile", "remember")
        },
        "step_wall_ms": {node: summary(v) for node, v in sorted(steps.items())},
        "hot_path_wall_ms": summary(hot),
    }


async def _run(users: int, turns: int, idle_seconds: float, base: str) -> tuple[dict[str, Any], float, int]:
    from tests.devserver import DevServer, client, copy_project, server_environment, write_dotenv
    from tests.stub_openai import StubServer

    with tempfile.TemporaryDirectory(prefix="mnemo-overhead-") as tmp, StubServer() as stub:
        workdir = copy_project(Path(tmp) / "mnemo")
        (workdir / "bare_agent.py").write_text((REPO_ROOT / "bench" / "bare_agent.py").read_text())
        config = json.loads((workdir / base).read_text())
        config["graphs"]["bare"] = "./bare_agent.py:graph"
        (workdir / "langgraph.bench-overhead.json").write_text(json.dumps(config, indent=2))
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(Path(tmp) / "pgdata"), POSTGRES_URI="")
        server = DevServer(workdir, server_environment(), config="langgraph.bench-overhead.json")
        server.start()
        try:
            assert server.proc is not None
            sid = server.proc.pid  # start_new_session: the server's process group and session
            sims = [SimUser(i) for i in range(users)]
            clients = [client(server, u.uid) for u in sims]
            threads = {
                (g, u.uid): (await c.threads.create())["thread_id"]
                for g in GRAPHS
                for u, c in zip(sims, clients, strict=True)
            }
            # Warm-up (imports, model clients, the embedder) on a thread of its own, then the idle rate.
            warm = clients[0]
            for g in GRAPHS:
                tid = (await warm.threads.create())["thread_id"]
                await _turn(warm, g, tid, sims[0].message(0), sims[0], sid)
            await asyncio.sleep(2.0)
            cpu0, wall0 = _session_cpu_ns(sid), time.perf_counter()
            await asyncio.sleep(idle_seconds)
            idle_per_s = (_session_cpu_ns(sid) - cpu0) / 1e9 / (time.perf_counter() - wall0)
            results: dict[str, list[dict[str, Any]]] = {g: [] for g in GRAPHS}
            for turn in range(turns):
                for user, c in zip(sims, clients, strict=True):
                    shift = (turn * len(sims) + user.index) % len(GRAPHS)  # each graph goes first in turn
                    order = list(GRAPHS)[shift:] + list(GRAPHS)[:shift]
                    for g in order:
                        done = await _turn(c, g, threads[(g, user.uid)], user.message(turn), user, sid)
                        results[g].append({**done, "kind": "profile" if turn == 0 else "remember"})
            trouble = len(server.trouble())
        finally:
            server.stop()
    return {g: _report(r, idle_per_s) for g, r in results.items()}, idle_per_s, trouble


def run(out: Path, *, smoke: bool = False, users: int = 5, turns: int = 10, postgres: bool = False) -> dict[str, Any]:
    """Both graphs, the same conversations; writes ``overhead.json`` (``overhead_postgres.json``
    on ``langgraph.postgres.json`` when ``postgres``). ``smoke``: 1 user x 2 turns."""
    if smoke:
        users, turns = 1, 2
    started = time.time()
    base = "langgraph.postgres.json" if postgres else "langgraph.json"
    graphs, idle_per_s, trouble = asyncio.run(_run(users, turns, idle_seconds=2.0 if smoke else 5.0, base=base))
    bare = graphs["bare"]

    def ratio(key: str, q: str = "p50", graph: str = "mnemo") -> float | None:
        a, b = graphs[graph][key][q], bare[key][q]
        return round(a / b, 2) if a and b and b > 0 else None

    # One in-process conversation per write mode: what each step encodes, and (hot) what that costs.
    logs = {mode: _encoding_log(3 if smoke else 10, mode) for mode in ("after_turn", "hot")}
    encoders = {kind: _cpu_ms(turn_logs) for kind, turn_logs in logs["hot"].items()}
    hot = graphs["mnemo_hot_path"]["cpu_ms_by_turn"]
    result = {
        "meta": meta("overhead", started, users=users, turns=turns, config=base),
        "idle_cpu_ms_per_s": round(idle_per_s * 1000, 2),
        "graphs": graphs,
        "ratio_mnemo_over_bare": {
            "cpu_ms_p50": ratio("cpu_ms"),
            "cpu_ms_mean": ratio("cpu_ms", "mean"),
            "cpu_net_ms_p50": ratio("cpu_net_ms"),
            "wall_ms_p50": ratio("wall_ms"),
            "wall_ms_p95": ratio("wall_ms", "p95"),
        },
        "ratio_mnemo_hot_path_over_bare": {
            "cpu_ms_p50": ratio("cpu_ms", graph="mnemo_hot_path"),
            "cpu_ms_mean": ratio("cpu_ms", "mean", graph="mnemo_hot_path"),
            "cpu_net_ms_p50": ratio("cpu_net_ms", graph="mnemo_hot_path"),
            "wall_ms_p50": ratio("wall_ms", graph="mnemo_hot_path"),
        },
        "server_log_trouble": trouble,
        # In-process (count_encodings): texts embedded / encoded per step, median per turn.
        "encodings": {mode: {kind: _counts(tl) for kind, tl in by_kind.items()} for mode, by_kind in logs.items()},
        # In-process (encoder_cpu_ms): the hot path's CPU in E5 and SPLADE per kind of turn, and what
        # the server's hot path would cost next to the bare agent without them (an estimate: the
        # server's p50 less the in-process median).
        "encoder_cpu_ms": encoders,
        "ratio_mnemo_hot_path_without_encoders_over_bare": {
            kind: round((hot[kind]["p50"] - sum(encoders[kind].values())) / bare["cpu_ms_by_turn"][kind]["p50"], 2)
            for kind in encoders
            if hot[kind]["p50"] and bare["cpu_ms_by_turn"][kind]["p50"]
        },
    }
    write_json(out / ("overhead_postgres.json" if postgres else "overhead.json"), result)
    return result
