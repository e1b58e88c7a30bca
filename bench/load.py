"""Load held: many simulated users talking to a served mnemo at once.

``python -m bench load`` starts the server the way the README does
(``./scripts/dev`` in a copy of the project, through the same harness as the
end-to-end tests, ``harness/devserver.py``) with the local OpenAI-compatible stub
(``harness/stub_openai.py``) as the model, then lets N users hold a T-turn
conversation each, all at the same time, through ``langgraph_sdk``, each
signed in with their own token:

* turn 1: "Hi, I'm <Name> and I live in <City>." (the profile, by extraction);
* turns 2..T: "Remember that my locker number is <user><turn>" (a note each,
  through the ``remember_note`` tool).

It reports turns that succeeded, the latency a user waited per turn (p50 /
p95, queueing included), the server's CPU time per turn (its process tree's,
over the whole phase, divided by the turns done: quiet, one user alone before
the load, against loaded, every user at once; issue 56), memory writes expected (from the turns that
succeeded) against those found in the store afterwards (fewer = lost, more =
doubled), and cross-user reads: system prompts that showed another user's
name, city or locker number (must be 0), next to the prompts that showed the
user's own name (the check's positive side). On PostgreSQL
(``--config langgraph.postgres.json``) a second run SIGKILLs the server's
process group once a third of the turns are done, restarts it, and lets the
users carry on (a turn that failed is tried again once, as a user would).

Traffic stays on the loopback interface; every run is bounded in turns and in
time (``--max-seconds``: no new turn starts after it). Results:
``<out>/load.json`` and ``load.png``.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import meta, write_json
from bench.stats import summary
from harness.stub_openai import system_text

_SYLLABLES_NAME = ["Ka", "Lo", "Mi", "Su", "Te", "Ra", "No", "Vi", "Ze", "Ha"]
_SYLLABLES_CITY = ["bor", "dan", "fel", "gor", "lin", "mar", "pol", "sen", "tar", "wen"]
_USER_TAG = re.compile(r"\[(u\d{3})\]")
#: The kinds of turn of a mixed conversation (:meth:`SimUser.kind`): the profile, a note to keep,
#: a question no memory answers, and one a kept note answers.
KINDS = ("profile", "remember", "question", "recall")


@dataclass
class SimUser:
    """One simulated user and what they said that should be remembered."""

    index: int
    uid: str = ""
    name: str = ""
    city: str = ""
    succeeded: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    failures: int = 0

    def __post_init__(self) -> None:
        i = self.index
        self.uid = f"u{i:03d}"
        self.name = _SYLLABLES_NAME[i % 10] + _SYLLABLES_NAME[(i // 10) % 10].lower() + "x"
        self.city = "Q" + _SYLLABLES_CITY[i % 10] + _SYLLABLES_CITY[(i // 10) % 10]

    def locker(self, turn: int) -> str:
        return f"{self.index + 100}{turn:02d}"

    def message(self, turn: int) -> str:
        if turn == 0:
            return f"[{self.uid}] Hi, I'm {self.name} and I live in {self.city}."
        return f"[{self.uid}] Remember that my locker number is {self.locker(turn)}"

    def kind(self, turn: int) -> str:
        """The kind of turn ``turn`` of a mixed conversation: the profile, then the other kinds in turn."""
        return KINDS[0] if turn == 0 else KINDS[1 + (turn - 1) % 3]

    def mixed(self, turn: int) -> str:
        """What the user says at turn ``turn`` of a mixed conversation (:meth:`kind`)."""
        kind = self.kind(turn)
        if kind == "question":
            return f"[{self.uid}] Can you suggest a quick dinner for tonight?"
        if kind == "recall":
            return f"[{self.uid}] What is my locker number?"
        return self.message(turn)

    def markers(self) -> list[str]:
        """Strings that appear in a prompt only if this user's memory is in it."""
        # As the prompt quotes remembered values (mnemo.core.quoting).
        return [f'name: "{self.name}"', f'city: "{self.city}"', f"number is {self.index + 100}"]


async def _turn(client: Any, user: SimUser, turn: int, thread_id: str) -> bool:
    started = time.perf_counter()
    try:
        run = await client.runs.create(
            thread_id,
            "agent",
            context={"user_id": user.uid},
            input={"messages": [{"role": "user", "content": user.message(turn)}]},
        )
        await client.runs.join(thread_id, run["run_id"])
        ok = (await client.runs.get(thread_id, run["run_id"]))["status"] == "success"
    except Exception:  # a killed server, a dropped connection: the turn failed
        ok = False
    if ok:
        user.latencies.append(time.perf_counter() - started)
        user.succeeded.append(turn)
    else:
        user.failures += 1
    return ok


def server_cpu_s(server: Any) -> float:
    """CPU seconds (user and system) the server's process tree has used so far: ``./scripts/dev``'s
    process and every one below it (``langgraph dev``'s reloader and worker)."""
    import psutil

    total = 0.0
    try:
        root = psutil.Process(server.proc.pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return total
    for process in family:
        try:
            used = process.cpu_times()
        except psutil.Error:  # ended between the listing and the read
            continue
        total += used.user + used.system
    return total


async def _cpu_per_turn_ms(server: Any, users: list[SimUser], turns: range, deadline: float) -> float | None:
    """Milliseconds of the server's CPU per turn while ``users`` hold their conversations at once."""
    before, done = server_cpu_s(server), [0]
    await asyncio.gather(*(_converse(server, u, turns, deadline, done) for u in users))
    succeeded = sum(len(u.succeeded) for u in users)
    return round((server_cpu_s(server) - before) * 1000 / succeeded, 1) if succeeded else None


async def _converse(server: Any, user: SimUser, turns: range, deadline: float, done: list[int]) -> None:
    from harness.devserver import client as signed_in

    client = signed_in(server, user.uid)
    thread_id = None
    for turn in turns:
        if time.monotonic() > deadline:
            return
        for _attempt in range(2):  # a failed turn is tried again once, as a user would
            try:
                if thread_id is None:
                    thread_id = (await client.threads.create())["thread_id"]
            except Exception:
                await asyncio.sleep(1.0)
                continue
            if await _turn(client, user, turn, thread_id):
                break
            await asyncio.sleep(1.0)
        done[0] += 1


async def _stored(server: Any, user: SimUser) -> tuple[set[str], list[str]]:
    from harness.devserver import client as signed_in

    client = signed_in(server, user.uid)
    profile = {i["key"] for i in (await client.store.search_items((user.uid, "profile"), limit=50))["items"]}
    notes: list[str] = []
    for offset in range(0, 10_000, 100):
        page = (await client.store.search_items((user.uid, "notes"), limit=100, offset=offset))["items"]
        notes.extend(i["value"]["text"] for i in page)
        if len(page) < 100:
            break
    return profile, notes


def _prompt_checks(requests: list[dict], users: list[SimUser]) -> dict[str, int]:
    """Count chat prompts that carried another user's memory, and (the
    positive side) those that carried their own user's name."""
    by_uid = {u.uid: u for u in users}
    foreign = own = checked = 0
    for body in requests:
        messages = body.get("messages", [])
        if not messages or messages[0].get("role") != "system":
            continue
        said = [m for m in messages if m.get("role") == "user"]
        tag = _USER_TAG.search(str(said[-1].get("content", ""))) if said else None
        if tag is None or tag.group(1) not in by_uid:
            continue
        checked += 1
        # Every system message: the user's memory is in a later one (nodes.prompts).
        prompt = system_text(body)
        me = by_uid[tag.group(1)]
        own += me.markers()[0] in prompt
        foreign += any(marker in prompt for u in users if u is not me for marker in u.markers())
    return {"prompts_checked": checked, "prompts_with_own_name": own, "cross_user_reads": foreign}


async def _writes(server: Any, users: list[SimUser]) -> dict[str, int]:
    expected_fields = expected_notes = found_fields = found_notes = missing = doubled = 0
    for user in users:
        profile, notes = await _stored(server, user)
        wanted = {f"my locker number is {user.locker(t)}" for t in user.succeeded if t > 0}
        expected_fields += 2 if 0 in user.succeeded else 0
        found_fields += len(profile & {"name", "city"}) if 0 in user.succeeded else 0
        expected_notes += len(wanted)
        found_notes += len([n for n in notes if n in wanted])
        missing += len(wanted - set(notes))
        doubled += len(notes) - len(set(notes))
    return {
        "profile_fields_expected": expected_fields,
        "profile_fields_found": found_fields,
        "notes_expected": expected_notes,
        "notes_found": found_notes,
        "notes_missing": missing,
        "notes_doubled": doubled,
    }


async def _run_scenario(
    config: str | None, *, users: int, turns: int, max_seconds: float, kill_after: float | None
) -> dict[str, Any]:
    from harness.devserver import DevServer, copy_project, server_environment, write_dotenv
    from harness.stub_openai import StubServer

    sims = [SimUser(i) for i in range(users)]
    with tempfile.TemporaryDirectory(prefix="mnemo-load-") as tmp, StubServer() as stub:
        workdir = copy_project(Path(tmp) / "mnemo")
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(Path(tmp) / "pgdata"), POSTGRES_URI="")
        server = DevServer(workdir, server_environment(), config=config)
        server.start()
        started = time.monotonic()
        deadline = started + max_seconds
        done = [0]
        kills = 0
        quiet_user = SimUser(users)  # one more user, alone: the quiet side of the CPU figure
        try:
            cpu_quiet = await _cpu_per_turn_ms(server, [quiet_user], range(turns), deadline)
            cpu_before = server_cpu_s(server)
            tasks = [asyncio.create_task(_converse(server, u, range(turns), deadline, done)) for u in sims]
            if kill_after is not None:
                while done[0] < kill_after * users * turns and not all(t.done() for t in tasks):
                    await asyncio.sleep(0.2)
                assert server.proc is not None
                os.killpg(server.proc.pid, signal.SIGKILL)  # no shutdown, no flush
                server.proc.wait()
                kills += 1
                server = DevServer(workdir, server_environment(), config=config)
                server.start()  # same port is not guaranteed: users retry against the new one
                for task in tasks:  # turns in flight at the kill are tried again below
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                remaining = {u.uid: range((max(u.succeeded) + 1) if u.succeeded else 0, turns) for u in sims}
                tasks = [asyncio.create_task(_converse(server, u, remaining[u.uid], deadline, done)) for u in sims]
            await asyncio.gather(*tasks)
            elapsed = time.monotonic() - started
            loaded_turns = sum(len(u.succeeded) for u in sims)
            # Across a SIGKILL the killed server's CPU is lost: no loaded figure then.
            cpu_loaded = (
                round((server_cpu_s(server) - cpu_before) * 1000 / loaded_turns, 1)
                if loaded_turns and not kills
                else None
            )
            writes = await _writes(server, sims)
            prompts = _prompt_checks(stub.requests, [*sims, quiet_user])
            trouble = server.trouble()
        finally:
            server.stop()
    attempted = sum(len(u.succeeded) + u.failures for u in sims)
    return {
        "config": config or "langgraph.json",
        "users": users,
        "turns_per_user": turns,
        "sigkills": kills,
        "turns_succeeded": sum(len(u.succeeded) for u in sims),
        "turn_attempts": attempted,
        "turns_failed": sum(u.failures for u in sims),
        "latency_s": summary([x for u in sims for x in u.latencies]),
        "elapsed_s": round(elapsed, 1),
        "cpu_ms_per_turn_quiet": cpu_quiet,
        "cpu_ms_per_turn_loaded": cpu_loaded,
        "cpu_loaded_over_quiet": round(cpu_loaded / cpu_quiet, 2) if cpu_loaded and cpu_quiet else None,
        **writes,
        **prompts,
        "server_log_trouble": len(trouble),
    }


def run(
    out: Path, *, smoke: bool = False, users: int = 50, turns: int = 10, max_seconds: float = 900, postgres: bool = True
) -> dict[str, Any]:
    """Every scenario; writes ``load.json``. ``smoke``: 4 users x 3 turns."""
    if smoke:
        users, turns = 4, 3
    started = time.time()
    scenarios = [asyncio.run(_run_scenario(None, users=users, turns=turns, max_seconds=max_seconds, kill_after=None))]
    if postgres:
        for kill in (None, 1 / 3):
            scenarios.append(
                asyncio.run(
                    _run_scenario(
                        "langgraph.postgres.json", users=users, turns=turns, max_seconds=max_seconds, kill_after=kill
                    )
                )
            )
    result = {"meta": meta("load", started, users=users, turns=turns, max_seconds=max_seconds), "scenarios": scenarios}
    write_json(out / "load.json", result)
    return result
