"""The served part of ``python -m bench overhead``: three graphs under one ``langgraph dev``.

One server per store, started the way the README does (``./scripts/dev`` in
a copy of the project, through ``harness/devserver.py``, the stub model of
``harness/stub_openai.py``), whose copied config serves beside mnemo's
``agent`` (as shipped) the bare agent (:mod:`bench.bare_agent`) and
LangChain's memory-agent template (:mod:`bench.memory_agent`): the same model,
the same embedder and store index.

Each turn is streamed (``client.runs.stream``, ``stream_mode="messages"``):
its time to first token runs from sending the request to the first chunk of an
AI message with text in it (a tool call has none); ``ttft_run_ms`` runs from
the moment a worker took the run from the queue (the server's log,
:func:`run_starts`) to that chunk, ``queue_ms`` before it. ``langgraph dev``'s
queue looks for runs every 0.5 s when it found none (``langgraph_runtime_inmem``'s
``Runs.next``), so the wait before a run starts (0.7 to 1 s here) depends on
when the previous run ended, not on the graph; ``ttft_run_ms`` is what the
graph adds (its factory, its steps, the model's answer). Its wall time to the end of
the stream (the run's end: mnemo's ``write_memory`` included), and its CPU is
the server's process tree over the same interval (every thread of every
process in the server's session, ``/proc/<pid>/task/<tid>/schedstat``; the
embedded PostgreSQL runs in processes of its own, outside it). The server's
idle CPU rate is measured before the turns; ``cpu_net_ms`` subtracts it pro
rata of each turn's wall time.

*Sequential*: the users' mixed conversations (:meth:`bench.load.SimUser.mixed`)
one turn at a time, the graphs taking turns at going first, so that the load
other work puts on the machine falls on all alike. *Concurrent*: per graph,
other users all at once, each one turn after another: time to first token and
turns per second (turns over the time from the first request to the last
answer).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT
from bench.load import KINDS, SimUser
from bench.stats import summary

#: What each graph is served as, and the file of the peers the benchmark adds to its copy.
GRAPHS = {"bare": "bare", "memory_agent": "memory_agent", "mnemo": "agent"}
PEERS = {"bare": "bare_agent.py", "memory_agent": "memory_agent.py"}
#: Users of the concurrent part are others than the sequential part's (u100...).
CONCURRENT_FIRST_USER = 100
#: What ``langgraph_api.worker`` logs when a worker takes a run from the queue.
RUN_STARTED = "Starting background run"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RUN_ID = re.compile(r"\brun_id=([0-9a-f-]{36})")
_STARTED_AT = re.compile(r"\brun_started_at=(\S+)")


def run_starts(log: str) -> dict[str, float]:
    """Run id -> when a worker took the run from the queue (epoch seconds), read
    from the server's log (``run_started_at`` of :data:`RUN_STARTED`; the
    console format, colours and all). A retried run keeps its first start."""
    starts: dict[str, float] = {}
    for line in log.splitlines():
        if RUN_STARTED not in line:
            continue
        plain = _ANSI.sub("", line)
        run_id, at = _RUN_ID.search(plain), _STARTED_AT.search(plain)
        if run_id and at:
            starts.setdefault(run_id.group(1), datetime.fromisoformat(at.group(1)).timestamp())
    return starts


def anchor(turns: list[dict[str, Any]], starts: dict[str, float]) -> None:
    """Each turn's ``queue`` (request sent to the run's start) and ``ttft_run``
    (the run's start to its first token), in seconds; None for a run the log
    does not show starting."""
    for t in turns:
        started, first = starts.get(t["run_id"] or ""), t["first_token_at"]
        t["queue"] = started - t["sent_at"] if started is not None else None
        t["ttft_run"] = first - started if started is not None and first is not None else None


def session_cpu_ns(sid: int) -> int:
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


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return content or ""


def _answer_started(part: Any) -> bool:
    """Whether a stream part carries the first text of an AI message."""
    if part.event not in ("messages/partial", "messages/complete") or not isinstance(part.data, list):
        return False
    return any(m.get("type") in ("ai", "AIMessageChunk") and _text(m).strip() for m in part.data)


async def stream_turn(client: Any, graph: str, thread_id: str, user: SimUser, turn: int, sid: int) -> dict[str, Any]:
    """One turn, streamed: ``ok``, ``ttft``, ``wall``, ``cpu`` (seconds), ``tools`` (the tools the model
    called), ``run_id``, and the wall clock when it was sent and its first token came (for :func:`anchor`)."""
    cpu0, start, sent_at = session_cpu_ns(sid), time.perf_counter(), time.time()
    ttft, tools, ok, run_id, first_token_at = None, set(), True, None, None
    try:
        async for part in client.runs.stream(
            thread_id,
            GRAPHS[graph],
            input={"messages": [{"role": "user", "content": user.mixed(turn)}]},
            context={"user_id": user.uid},
            stream_mode="messages",
        ):
            if part.event == "error":
                ok = False
            if part.event == "metadata" and isinstance(part.data, dict) and run_id is None:
                run_id = part.data.get("run_id")
            if ttft is None and _answer_started(part):
                ttft, first_token_at = time.perf_counter() - start, time.time()
            if part.event in ("messages/partial", "messages/complete") and isinstance(part.data, list):
                tools |= {c["name"] for m in part.data if m.get("type") == "ai" for c in m.get("tool_calls") or []}
    except Exception:  # a dropped connection: the turn failed
        ok = False
    wall, cpu = time.perf_counter() - start, (session_cpu_ns(sid) - cpu0) / 1e9
    return {
        "kind": user.kind(turn),
        "ok": ok and ttft is not None,
        "ttft": ttft,
        "wall": wall,
        "cpu": cpu,
        "tools": tools,
        "run_id": run_id,
        "sent_at": sent_at,
        "first_token_at": first_token_at,
    }


def _by_kind(turns: list[dict[str, Any]], value: Any) -> dict[str, Any]:
    """``summary`` of ``value(turn)`` in milliseconds, per kind of turn and over all (``all``);
    a turn without the value (None) is left out (``unanchored`` counts them)."""

    def ms(kind: str | None) -> list[float]:
        values = [value(t) for t in turns if t["ok"] and kind in (None, t["kind"])]
        return [v * 1000.0 for v in values if v is not None]

    kinds = [k for k in KINDS if any(t["kind"] == k for t in turns)]
    return {**{k: summary(ms(k)) for k in kinds}, "all": summary(ms(None))}


def unanchored(turns: list[dict[str, Any]]) -> int:
    """Successful turns whose run the server's log does not show starting (no ``ttft_run``)."""
    return sum(t["ok"] and t.get("ttft_run") is None for t in turns)


def report(turns: list[dict[str, Any]], idle_per_s: float) -> dict[str, Any]:
    """One graph's sequential turns: per kind, time to first token, CPU, wall (ms)."""
    return {
        "turns": len(turns),
        "turns_failed": sum(not t["ok"] for t in turns),
        # Per kind of turn, the tools the model called, and in how many turns.
        "tool_calls": {k: dict(Counter(c for t in turns if t["kind"] == k for c in sorted(t["tools"]))) for k in KINDS},
        "ttft_ms": _by_kind(turns, lambda t: t["ttft"]),
        "ttft_run_ms": _by_kind(turns, lambda t: t["ttft_run"]),
        "queue_ms": _by_kind(turns, lambda t: t["queue"]),
        "unanchored": unanchored(turns),
        "cpu_ms": _by_kind(turns, lambda t: t["cpu"]),
        "cpu_net_ms": _by_kind(turns, lambda t: t["cpu"] - idle_per_s * t["wall"]),
        "wall_ms": _by_kind(turns, lambda t: t["wall"]),
        "wall_s_total": round(sum(t["wall"] for t in turns), 1),
    }


async def _sequential(server: Any, sid: int, users: int, turns: int) -> dict[str, list[dict[str, Any]]]:
    from harness.devserver import client

    sims = [SimUser(i) for i in range(users)]
    clients = {u.uid: client(server, u.uid) for u in sims}
    threads = {(g, u.uid): (await clients[u.uid].threads.create())["thread_id"] for g in GRAPHS for u in sims}
    results: dict[str, list[dict[str, Any]]] = {g: [] for g in GRAPHS}
    for turn in range(turns):
        for user in sims:
            shift = (turn * len(sims) + user.index) % len(GRAPHS)  # each graph goes first in turn
            for g in list(GRAPHS)[shift:] + list(GRAPHS)[:shift]:
                results[g].append(await stream_turn(clients[user.uid], g, threads[(g, user.uid)], user, turn, sid))
    return results


async def _converse(c: Any, graph: str, tid: str, user: SimUser, turns: int, sid: int) -> list[dict[str, Any]]:
    return [await stream_turn(c, graph, tid, user, turn, sid) for turn in range(turns)]


async def _concurrent(
    server: Any, sid: int, users: int, turns: int
) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """Per graph, the figures of its users at once, and its turns (for :func:`anchor`)."""
    from harness.devserver import client

    out, every = {}, {}
    for g in GRAPHS:
        sims = [SimUser(CONCURRENT_FIRST_USER + i) for i in range(users)]
        clients = [client(server, u.uid) for u in sims]
        threads = [(await c.threads.create())["thread_id"] for c in clients]
        cpu0, start = session_cpu_ns(sid), time.perf_counter()
        talks = [_converse(c, g, tid, u, turns, sid) for c, tid, u in zip(clients, threads, sims, strict=True)]
        done = [t for talk in await asyncio.gather(*talks) for t in talk]
        elapsed, cpu = time.perf_counter() - start, (session_cpu_ns(sid) - cpu0) / 1e9
        ok = [t for t in done if t["ok"]]
        every[g] = done
        out[g] = {
            "turns": len(done),
            "turns_failed": len(done) - len(ok),
            "ttft_ms": _by_kind(done, lambda t: t["ttft"]),
            "elapsed_s": round(elapsed, 2),
            "turns_per_s": round(len(ok) / elapsed, 3),
            "cpu_ms_per_turn": round(cpu * 1000.0 / max(1, len(ok)), 1),
        }
    return out, every


async def _serve(
    config: str, *, users: int, turns: int, concurrent_users: int, concurrent_turns: int, idle_seconds: float
) -> dict[str, Any]:
    from harness.devserver import DevServer, client, copy_project, server_environment, write_dotenv
    from harness.stub_openai import StubServer

    started, load_before = time.perf_counter(), os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="mnemo-overhead-") as tmp, StubServer() as stub:
        workdir = copy_project(Path(tmp) / "mnemo")
        settings = json.loads((workdir / config).read_text())
        for graph, source in PEERS.items():
            (workdir / source).write_text((REPO_ROOT / "bench" / source).read_text())
            settings["graphs"][graph] = f"./{source}:graph"
        (workdir / "langgraph.bench-overhead.json").write_text(json.dumps(settings, indent=2))
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(Path(tmp) / "pgdata"), POSTGRES_URI="")
        server = DevServer(workdir, server_environment(), config="langgraph.bench-overhead.json")
        server.start()
        try:
            assert server.proc is not None
            sid = server.proc.pid  # start_new_session: the server's process group and session
            # Warm-up (imports, model clients, the embedders) with a user of its own, then the idle rate.
            warm = SimUser(99)
            for g in GRAPHS:
                tid = (await client(server, warm.uid).threads.create())["thread_id"]
                for turn in range(2):
                    await stream_turn(client(server, warm.uid), g, tid, warm, turn, sid)
            await asyncio.sleep(2.0)
            cpu0, wall0 = session_cpu_ns(sid), time.perf_counter()
            await asyncio.sleep(idle_seconds)
            idle_per_s = (session_cpu_ns(sid) - cpu0) / 1e9 / (time.perf_counter() - wall0)
            sequential = await _sequential(server, sid, users, turns)
            concurrent, together = await _concurrent(server, sid, concurrent_users, concurrent_turns)
            trouble = len(server.trouble())
            starts = run_starts(server.output(tail=10**9))
            for turns_of in [*sequential.values(), *together.values()]:
                anchor(turns_of, starts)
            for g, turns_of in together.items():
                concurrent[g]["ttft_run_ms"] = _by_kind(turns_of, lambda t: t["ttft_run"])
                concurrent[g]["unanchored"] = unanchored(turns_of)
        finally:
            server.stop()
    return {
        "config": config,
        "idle_cpu_ms_per_s": round(idle_per_s * 1000, 2),
        "graphs": {g: report(t, idle_per_s) for g, t in sequential.items()},
        "concurrent": concurrent,
        "server_log_trouble": trouble,
        "loadavg_1min_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "elapsed_s": round(time.perf_counter() - started, 1),
    }


def serve(config: str, **kw: Any) -> dict[str, Any]:
    """Both parts on one server of ``config`` (``langgraph.json``, ``langgraph.postgres.json``)."""
    return asyncio.run(_serve(config, **kw))
