"""What mnemo remembers with a given model, through the server users run (issue 42).

``python -m bench memory-quality`` starts ``./scripts/dev`` in a copy of the
project (the e2e harness, ``harness/devserver.py``) pointed, through the
recording proxy of :mod:`bench.model_proxy`, at an OpenAI-compatible server:
one already running (``--base-url``/``--model-name``) or the llama-server that
``python -m bench real-model`` builds (``--model``). Each conversation of the
labelled set (:mod:`bench.quality_score`) is one user: its turns go, one run
each, to one thread through ``langgraph_sdk`` with the write mode as shipped;
once the runs have ended and the model server has been idle for ``--settle``
seconds (the writes landed), the user's profile and notes are read through
``GET /memory/export`` as that user, then each probe is asked in a new thread
and the system prompt of its first model request is taken from the proxy.
Results: ``<out>/memory_quality_<model>.json`` (figures, and what was scored); with a
server that reports its timings, also the prompt tokens it read and reused per
request (:mod:`bench.prompt_cache`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.common import DEFAULT_OUT, REPO_ROOT, display_path, meta, progress, write_json
from bench.model_proxy import RecordingProxy, mnemo_settings, reply_prompts, run_to_end, started_mnemo
from bench.prompt_cache import add_cache_figures, timed_requests
from bench.quality_score import DEFAULT_SET, digest, load_set, report, rescore, score

#: A log line of a warning or an error, as ``langgraph dev`` prints it (``[warning  ]``, colours
#: stripped) or as plain logging does.
_TROUBLE = re.compile(r"\[\s*(warning|error|critical)\s*\]|\b(WARNING|ERROR|CRITICAL)\b|Traceback")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")

#: A run polled until it ends (a join would hit the SDK's read timeout on a slow model).
POLL_S = 0.25


def add_arguments(p: Any) -> None:
    """The command line of ``python -m bench memory-quality``."""
    p.add_argument("--data", type=Path, default=DEFAULT_SET, help=f"the labelled set (default {DEFAULT_SET.name})")
    p.add_argument("--split", choices=("tune", "held_out", "all"), default="all", help="which conversations")
    p.add_argument("--only", default=None, help="comma-separated conversation ids (a quick look at a few)")
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible server already running (…/v1)")
    p.add_argument("--model-name", default=None, help="the model to ask it for (with --base-url)")
    p.add_argument(
        "--model", default=None, help="a local model bench.llama_server serves (as real-model: qwen2.5-1.5b, ...)"
    )
    p.add_argument("--api-key", default="sk-no-key", help="OPENAI_API_KEY of the server (default: a dummy)")
    p.add_argument("--cache", type=Path, default=None, help="where the local models are cached (--model)")
    p.add_argument("--model-timeout", type=float, default=None, help="MNEMO_MODEL_TIMEOUT_S (default: mnemo's)")
    p.add_argument("--extraction-timeout", type=float, default=None, help="extraction_timeout_s of each run")
    p.add_argument("--settle", type=float, default=3.0, help="seconds of an idle model server that end a write")
    p.add_argument("--rescore", type=Path, default=None, help="score this results file again against --data")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def main(args: Any) -> int:
    """Run the benchmark (or ``--rescore``) from parsed arguments; prints the table."""
    if args.rescore is not None:
        print(report(rescore(args.rescore, args.data)))
        return 0
    if (args.base_url is None) == (args.model is None) or (args.base_url and not args.model_name):
        raise SystemExit("give either --base-url URL --model-name NAME, or --model PROFILE")
    only = set(args.only.split(",")) if args.only else None
    result = run(
        args.out,
        data=args.data,
        split=args.split,
        only=only,
        server=_running(args.base_url, args.model_name) if args.base_url else _llama(args.model, args.cache),
        api_key=args.api_key,
        model_timeout_s=args.model_timeout,
        extraction_timeout_s=args.extraction_timeout,
        settle_s=args.settle,
    )
    print(report(result))
    return 0


@contextlib.contextmanager
def _running(base_url: str, name: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    yield base_url.rstrip("/"), name, {}


@contextlib.contextmanager
def _llama(model: str, cache: Path | None) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """The local model server as ``python -m bench real-model`` serves it."""
    from bench import llama_server
    from harness.devserver import free_port

    if model not in llama_server.MODELS:
        raise SystemExit(
            f"--model: bench.llama_server serves {', '.join(sorted(llama_server.MODELS))}; else use --base-url"
        )
    served = llama_server.MODELS[model]
    gguf = llama_server.prepare(served, cache)
    with tempfile.TemporaryDirectory(prefix="mnemo-mq-llama-") as tmp:
        log = Path(tmp) / "llama-server.log"
        with llama_server.serve(served, free_port(), log, cache=cache) as base_url:
            yield base_url, served.alias, {"gguf": gguf.name}


def fingerprint(base_url: str) -> dict[str, Any]:
    """What the model server says it serves: ``/v1/models`` and, on llama-server,
    ``/props`` (the model file, context, build), where they answer."""
    seen: dict[str, Any] = {}
    for name, url in (("models", f"{base_url}/models"), ("props", f"{base_url.removesuffix('/v1')}/props")):
        try:
            reply = httpx.get(url, timeout=10)
            seen[name] = reply.json() if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            seen[name] = None
    props = seen.get("props") or {}
    seen["props"] = {k: props[k] for k in ("model_path", "build_info", "total_slots") if k in props} or None
    return seen


def server_warnings(log: str, limit: int = 60) -> list[str]:
    """The warning and error lines of ``./scripts/dev``'s log, without colours."""
    lines = (_COLOUR.sub("", line) for line in log.splitlines())
    return [line[:400] for line in lines if _TROUBLE.search(line)][:limit]


def commit() -> str:
    """The checkout measured: ``git describe``-like hash, ``-dirty`` when edited."""
    git = ["git", "-C", str(REPO_ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True)
    return head + ("-dirty" if dirty.stdout.strip() else "")


def _chat_records(proxy: RecordingProxy, since: float, until: float) -> int:
    """Model requests begun in ``[since, until)``."""
    with proxy.lock:
        return sum(
            1 for r in proxy.records if r["path"].endswith("/chat/completions") and since <= r["started"] < until
        )


async def _stored(url: str, bearer: str) -> dict[str, Any]:
    """The user's profile values and note texts, as ``GET /memory/export`` gives them."""
    async with httpx.AsyncClient(timeout=60) as http:
        reply = await http.get(f"{url}/memory/export", headers={"Authorization": f"Bearer {bearer}"})
    reply.raise_for_status()
    doc = reply.json()
    return {
        "profile": {f: e.get("value") for f, e in doc.get("profile", {}).items()},
        "notes": [n["text"] for n in doc.get("notes", [])],
        "expiring": {n["text"]: n["expires_at"] for n in doc.get("notes", []) if n.get("expires_at")},
    }


async def conversation(
    server: Any, proxy: RecordingProxy, label: dict[str, Any], context: dict[str, Any], settle_s: float
) -> dict[str, Any]:
    """One labelled conversation through the server; what it stored and what the probes' prompts held."""
    from harness.devserver import client as signed_in
    from harness.devserver import token

    user = "mq-" + re.sub(r"[^A-Za-z0-9_-]", "-", label["id"])
    client = signed_in(server, user)
    context = {**context, "user_id": user}
    thread = (await client.threads.create())["thread_id"]
    turns: list[dict[str, Any]] = []
    starts: list[float] = []
    for text in label["turns"]:
        starts.append(time.time())
        wall = time.monotonic()
        status = await run_to_end(client, thread, text, context, POLL_S)
        turns.append({"status": status, "seconds": round(time.monotonic() - wall, 2)})
    await proxy.wait_idle(settle_s, 600, poll_s=0.2)
    for turn, since, until in zip(turns, starts, [*starts[1:], time.time()], strict=True):
        turn["requests"] = _chat_records(proxy, since, until)  # a turn's write is counted with it
    stored = await _stored(server.url, token(user))
    probes = []
    for probe in label.get("probes", []):
        since = time.time()
        status = await run_to_end(client, (await client.threads.create())["thread_id"], probe["ask"], context, POLL_S)
        prompts = reply_prompts(proxy.records, since)
        probes.append({"ask": probe["ask"], "status": status, "system_prompt": prompts[0] if prompts else None})
    await proxy.wait_idle(min(settle_s, 1.0), 600, poll_s=0.2)  # the probes' own writes end before the next user starts
    return {
        "id": label["id"],
        "lang": label.get("lang"),
        "split": label.get("split"),
        "kind": label.get("kind"),
        **stored,
        "probes": probes,
        "turns": turns,
    }


def run(
    out: Path,
    *,
    server: contextlib.AbstractContextManager[tuple[str, str, dict[str, Any]]],
    data: Path = DEFAULT_SET,
    split: str = "all",
    only: set[str] | None = None,
    api_key: str = "sk-no-key",
    model_timeout_s: float | None = None,
    extraction_timeout_s: float | None = None,
    settle_s: float = 3.0,
) -> dict[str, Any]:
    """Every conversation of ``data`` in ``split`` (or the ids ``only``) against
    the model ``server`` yields; writes and returns the result."""

    started = time.time()
    labels = [c for c in load_set(data, split) if only is None or c["id"] in only]
    if not labels:
        raise SystemExit(f"no conversation of {data} in split {split!r}{' with those ids' if only else ''}")
    context = {} if extraction_timeout_s is None else {"extraction_timeout_s": extraction_timeout_s}
    done: list[dict[str, Any]] = []
    with server as (base_url, name, served), tempfile.TemporaryDirectory(prefix="mnemo-mq-") as tmp:
        model = f"openai:{name}"
        path = out / f"memory_quality_{re.sub(r'[^A-Za-z0-9_.-]', '-', name)}.json"
        about = {
            "model": name,
            "model_fingerprint": {**fingerprint(base_url), **served},
            "commit": commit(),
            "data": {"path": display_path(data), "sha256": digest(data), "split": split, "only": sorted(only or [])},
            "model_timeout_s": model_timeout_s,
            "run_context": context,
        }
        with RecordingProxy(base_url.removesuffix("/v1")) as proxy:
            dev, _ = started_mnemo(Path(tmp), proxy, mnemo_settings(model, api_key, model_timeout_s))
            try:
                for label in progress(labels, desc="memory-quality", unit="conversation"):
                    done.append(asyncio.run(conversation(dev, proxy, label, context, settle_s)))
                    # What a slow model has answered so far survives an interrupted run.
                    partial = {"meta": {**about, "partial": f"{len(done)}/{len(labels)}"}, "conversations": done}
                    timed = timed_requests(list(proxy.records))
                    write_json(path, {**partial, "figures": add_cache_figures(score(labels, done), timed)})
                log = dev.output(tail=10**8)
                timed = timed_requests(list(proxy.records))
            finally:
                dev.stop()
    result = {
        "meta": meta("memory-quality", started, **about),
        "figures": add_cache_figures(score(labels, done), timed),
        "conversations": done,
        "model_requests": timed,
        "server_warnings": server_warnings(log),
    }
    write_json(path, result)
    return result
