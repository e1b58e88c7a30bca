"""Durability: SIGKILL the writer, then the whole database server, mid-stream;
no acknowledged write is lost and no batch is half-written.

The writer is :mod:`tests.crash_writer`, run as its own process.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil
import psycopg
import pytest

from harness.store_backends import ROOT, SKIP_POSTGRES_REASON, skip_postgres
from mnemo.stores import embedded_postgres as pgserver
from tests.crash_writer import BATCH_SIZE


def _start_writer(uri: str, phase: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.crash_writer", uri, phase],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _read_acks(proc: subprocess.Popen, until: int, timeout: float = 60) -> list[int]:
    assert proc.stdout is not None and proc.stderr is not None
    acks: list[int] = []
    deadline = time.monotonic() + timeout
    while len(acks) < until:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"writer exited early:\n{proc.stderr.read()[-3000:]}")
        if line.startswith("ack "):
            acks.append(int(line.split()[1]))
        assert time.monotonic() < deadline, "writer too slow"
    return acks


def _check_acknowledged(uri: str, phase: str, acks: list[int]) -> None:
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT key, value FROM store WHERE prefix = %s", (f"dur.{phase}",)).fetchall()
        vectors = {k for (k,) in conn.execute("SELECT key FROM store_vectors WHERE prefix = %s", (f"dur.{phase}",))}
    batches: dict[int, int] = {}
    for key, value in rows:
        assert value["text"].startswith(f"{phase} batch {value['batch']} item") and value["pad"] == "x" * 500
        assert key in vectors, f"{key} was written without its vector"
        batches[value["batch"]] = batches.get(value["batch"], 0) + 1
    missing = [b for b in acks if batches.get(b) != BATCH_SIZE]
    assert not missing, f"acknowledged batches lost or partial: {missing[:10]}"
    assert all(n == BATCH_SIZE for n in batches.values()), "a batch was half-written"
    print(
        f"{phase} crash: {len(acks)} batches acknowledged, all present; "
        f"{len(batches) - len(set(acks))} more committed but not yet acknowledged"
    )


def _kill_postgres(pid: int) -> None:
    """SIGKILL the postmaster and every backend: a power cut, not a shutdown."""
    root = psutil.Process(pid)
    procs = [root, *root.children(recursive=True)]
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


@pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)
def test_sigkill_mid_stream_loses_no_acknowledged_write(tmp_path):
    datadir = tmp_path / "pgdata"
    server = pgserver.start(datadir, database="durable", cleanup="delete")
    try:
        # 1. The writing process dies.
        writer = _start_writer(server.uri, "client")
        acks = _read_acks(writer, until=40)
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        acks += [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
        _check_acknowledged(server.uri, "client", acks)

        # 2. The database server dies (every postgres process, SIGKILL), then restarts.
        writer = _start_writer(server.uri, "server")
        acks = _read_acks(writer, until=40)
        _kill_postgres(server.pid)
        out, err = writer.communicate(timeout=60)
        assert writer.returncode != 0, "the writer must notice the server is gone"
        acks += [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
        server = pgserver.start(datadir, database="durable", cleanup="delete")  # crash recovery
        _check_acknowledged(server.uri, "server", acks)
        assert len(acks) >= 40
    finally:
        server.stop()
