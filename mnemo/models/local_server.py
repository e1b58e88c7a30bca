"""The local chat model's server: llama.cpp's own HTTP server, run in process
by the ``xllamacpp`` wheel (no compile), answering the OpenAI API on loopback
(docs/models.md, "The local model").

``./scripts/dev`` runs it as a sidecar (``python -m mnemo local-model serve``),
never inside the LangGraph server, whose auto-reload would load the model again
on every edit; the benchmarks run the same command. It serves one GGUF of
:mod:`mnemo.models.local_weights` under its alias, with llama.cpp's chat
template (``jinja``: tool calls written by the model's template) and, given a
key, answers only requests that carry it. ``xllamacpp`` is imported only here
and only when a server starts: it is in the ``local`` extra, never in a
deployed image.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemo.models.local_weights import LocalModel

#: Tokens of context, shared by :data:`SLOTS` (8,192 each: a reply request of
#: mnemo is about 1,400-2,300 tokens) and requests served at once (the reply
#: and a memory call of another turn).
CONTEXT_TOKENS = 16384
SLOTS = 2


@dataclass(frozen=True)
class Served:
    """A started server: what it serves, where, and how long loading took."""

    model: LocalModel
    gguf: Path
    base_url: str
    load_s: float
    server: Any
    """The ``xllamacpp.Server`` (serving while it is referenced)."""


def start(
    model: LocalModel,
    gguf: Path,
    port: int,
    *,
    api_key: str = "",
    ctx: int = CONTEXT_TOKENS,
    slots: int = SLOTS,
) -> Served:
    """llama.cpp's server on ``127.0.0.1:port`` serving ``gguf`` as ``model.alias``;
    returns once the model is loaded and the port listens. With ``api_key``,
    requests without it are refused (401); ``/health`` answers everyone."""
    import xllamacpp

    started = time.monotonic()
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.model_alias = {model.alias}  # a set of names: a bare string would be read as its letters
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx
    params.n_parallel = slots
    params.use_jinja = True
    if api_key:
        params.api_keys = [api_key]
    server = xllamacpp.Server(params)
    return Served(model, gguf, f"http://127.0.0.1:{port}/v1", time.monotonic() - started, server)


def startup_lines(served: Served, cache: Path, log: Path | None = None) -> list[str]:
    """What ``./scripts/dev`` says once the local model answers: which model (and its
    log), where its weights are cached, how to use a hosted one instead (one line each)."""
    model = served.model
    size = f"{model.size / 1e9:.1f} GB" if model.size >= 1e9 else f"{model.size / 1e6:.0f} MB"
    where = f" (its log: {log})" if log else ""
    return [
        f"mnemo: no model configured: serving the local model {model.name} ({model.title}, {size}) "
        f"at {served.base_url}, loaded in {served.load_s:.1f} s{where}.",
        f"mnemo: its weights are cached in {cache} (MNEMO_CACHE_DIR); "
        "MNEMO_LOCAL_MODEL=smollm2-135m serves a 98 MB one, fast and weak.",
        "mnemo: to use a hosted model instead, set MNEMO_MODEL and OPENAI_API_KEY (or OPENAI_BASE_URL) in .env; "
        "MNEMO_LOCAL_MODEL=off serves none (docs/models.md).",
    ]


def redirect_native_log(path: Path) -> None:
    """Send this process's standard error (llama.cpp writes a line per request
    there) to ``path``, so the terminal keeps mnemo's lines only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 2)
    os.close(fd)


def serve_while(parent: int | None, *, poll_s: float = 1.0) -> None:
    """Return when the process ``parent`` is no longer this one's parent (it died:
    the sidecar never outlives ``./scripts/dev``); with None, never."""
    while parent is None or os.getppid() == parent:
        time.sleep(poll_s)
