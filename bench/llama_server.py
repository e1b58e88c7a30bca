"""A real OpenAI-compatible server for ``python -m bench real-model``,
``memory-quality`` and ``serve-model``: the local model ``./scripts/dev``
serves, by the same command (``python -m mnemo local-model serve``: llama.cpp's
server run in process by the ``xllamacpp`` wheel, no compile), one of
:data:`MODELS` (``mnemo.models.LOCAL_MODELS``: SmolLM2-135M-Instruct, the
weak-model profile, or Qwen2.5-Coder-1.5B-Instruct). The weights are pinned
in ``mnemo/data/local-models.txt`` and cached where ``./scripts/dev`` caches
them (``mnemo.models.local_cache_dir``, or ``--cache``).

What the server answers to mnemo's kinds of request is asked in
:mod:`bench.model_probe`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

from mnemo.models import LOCAL_MODELS, LocalModel, local_cache_dir, prepare_local_model

MODELS = LOCAL_MODELS
#: The benchmarks' default: the weak-model profile (./scripts/dev's is Qwen).
DEFAULT_MODEL = "smollm2-135m"


def runtime() -> str:
    """The runtime, for the results' provenance: ``xllamacpp <version>``."""
    return f"xllamacpp {version('xllamacpp')}"


def prepare(model: LocalModel, cache: Path | None = None) -> Path:
    """The GGUF of ``model``, downloaded and assembled into ``cache`` if missing."""
    return prepare_local_model(model, cache or local_cache_dir())


def command(model: LocalModel, port: int, *, log: Path | None = None, ctx: int = 16384, slots: int = 2) -> list[str]:
    """The command line of the server (``python -m mnemo local-model serve``)."""
    args = [sys.executable, "-m", "mnemo", "local-model", "serve", "--model", model.name, "--port", str(port)]
    args += ["--ctx", str(ctx), "--slots", str(slots)]
    return args + (["--log", str(log)] if log else [])


def _environment(cache: Path | None) -> dict[str, str]:
    # No key: the benchmarks' clients send a dummy one, which a keyless server accepts.
    child = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    if cache:
        child["MNEMO_CACHE_DIR"] = str(cache)
    return child


def serve_forever(model: LocalModel, port: int, *, cache: Path | None = None) -> int:
    """``python -m bench serve-model``: prints the command and what a checkout's ``.env``
    needs to use it, then becomes that server (one process to stop)."""
    args = command(model, port)
    print(shlex.join(args), file=sys.stderr)
    print(
        f"# .env of a checkout: OPENAI_BASE_URL=http://127.0.0.1:{port}/v1  OPENAI_API_KEY=sk-no-key  "
        f"MNEMO_MODEL=openai:{model.alias}",
        file=sys.stderr,
        flush=True,
    )
    os.execve(args[0], args, _environment(cache))
    return 1  # not reached


@contextmanager
def serve(
    model: LocalModel,
    port: int,
    log: Path,
    *,
    cache: Path | None = None,
    ctx: int = 16384,
    slots: int = 2,
    ready_s: float = 300,
    args: list[str] | None = None,
) -> Iterator[str]:
    """The local server of ``model`` on ``port`` (``slots`` requests at once, ``ctx`` tokens
    shared; llama.cpp's log to ``log``); yields its OpenAI base URL once ``/health``
    answers (within ``ready_s``: the model is loaded). ``args``: another command (tests)."""
    from harness.devserver import wait_ready

    if args is None:
        prepare(model, cache)  # downloaded before the wait starts: a first download is not a slow start
    log.write_text("")

    def said() -> str:  # what it printed, when it fails to start
        return out.read_text(errors="replace")[-3000:] + log.read_text(errors="replace")[-3000:]

    out = log.with_name(log.name + ".out")
    with open(out, "w") as stdout:
        proc = subprocess.Popen(
            args or command(model, port, log=log, ctx=ctx, slots=slots),
            stdout=stdout,
            stderr=subprocess.STDOUT,
            env=_environment(cache),
            start_new_session=True,
        )
        try:
            wait_ready(f"http://127.0.0.1:{port}/health", proc, said, what="the local model server", timeout=ready_s)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
