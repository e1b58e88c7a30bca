"""mnemo against a real model server, on demand (issue 29; never in CI).

``python -m bench real-model [--model NAME]`` starts the local model server of
``./scripts/dev`` (llama.cpp in process, :mod:`bench.llama_server`) with one of
:data:`bench.llama_server.MODELS` (SmolLM2-135M-Instruct, the weak-model profile,
or Qwen2.5-Coder-1.5B-Instruct), asks it directly what
mnemo's model calls depend on (:func:`bench.model_probe.probe`), then starts
``./scripts/dev`` in a copy of the project (the e2e harness,
``harness/devserver.py``) pointed at it as a user would (``OPENAI_BASE_URL``,
``MNEMO_MODEL=openai:<alias>``, a dummy key), through a recording proxy (:mod:`bench.model_proxy`) that
keeps every request mnemo sent and every answer. A user then says their name,
their city and "allergic to peanuts" in three turns of one thread, and asks a
new thread what mnemo knows. Reported: requests accepted, structured answers
parsed (per way: forced call, response format...), memory in the store
afterwards (the REST store routes, as the user), which facts reached the
second thread's system prompt, seconds per turn, the server's WARNING lines,
and ``python -m mnemo doctor`` when the checkout has it. The other memory
calls are tried too (:mod:`bench.real_model_cases`): a consolidation pass and an
instruction rewrite from feedback.

A 135M model answers badly: the check is that mnemo's requests are understood
and its memory path runs end to end, not the quality of the replies.
Results: ``<out>/real_model.json`` for SmolLM2, ``<out>/real_model_<model>.json``
for another model (default ``bench/results``), and beside it
``real_model_<model>_tool_calls.json``: a few of the agent's requests that offered
tools, as sent, with the answer as it came back.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT, meta, write_json
from bench.llama_server import DEFAULT_MODEL, MODELS, prepare, runtime, serve
from bench.model_probe import probe
from bench.model_proxy import RecordingProxy, mnemo_settings, reply_prompts, started_mnemo
from bench.provenance import load_average
from bench.real_model_cases import CASES, timed_turn, tool_call_examples
from bench.real_model_report import llama_timings, plain_lines, report, request_summary, tally, warning_lines

USER = "real-model-user"
THREAD_ONE = ("Hi, I'm Ingrid.", "I live in Lisbon.", "I'm allergic to peanuts.")
THREAD_TWO = "What do you know about me?"
#: The facts said in thread one, as a case-insensitive pattern each.
FACTS = {"name": r"ingrid", "city": r"lisbon", "note": r"peanut"}


def facts_in(text: str) -> dict[str, bool]:
    return {fact: re.search(pattern, text, re.IGNORECASE) is not None for fact, pattern in FACTS.items()}


async def _stored(client: Any) -> dict[str, Any]:
    profile = (await client.store.search_items((USER, "profile"), limit=50))["items"]
    notes = (await client.store.search_items((USER, "notes"), limit=100))["items"]
    fields = {i["key"]: i["value"] for i in profile}
    texts = [str(i["value"].get("text", i["value"])) for i in notes]
    return {"profile": fields, "notes": texts, "facts": facts_in(json.dumps(fields) + " " + " ".join(texts))}


async def _conversation(server: Any, proxy: RecordingProxy, context: dict[str, Any]) -> dict[str, Any]:
    from harness.devserver import client as signed_in

    client = signed_in(server, USER)
    turns = []
    first = (await client.threads.create())["thread_id"]
    for text in THREAD_ONE:
        turns.append(await timed_turn(client, first, text, context, user_id=USER))
    await proxy.wait_idle(15, cap_s=300)  # a write still running after the run (background mode) ends first
    stored = await _stored(client)
    second_started = time.time()
    second = (await client.threads.create())["thread_id"]
    turns.append(await timed_turn(client, second, THREAD_TWO, context, user_id=USER))
    prompts = reply_prompts(proxy.records, second_started)
    reached = {fact: any(facts_in(p)[fact] for p in prompts) for fact in FACTS}
    return {
        "turns": turns,
        "stored_after_thread_one": stored,
        "second_thread_prompts": len(prompts),
        "reached": reached,
    }


def _doctor(workdir: Path, env: dict[str, str]) -> dict[str, Any] | None:
    python = str(workdir / ".venv" / "bin" / "python")
    usage = subprocess.run([python, "-m", "mnemo", "--help"], cwd=workdir, env=env, capture_output=True, text=True)
    if "doctor" not in usage.stdout + usage.stderr:
        return None
    started = time.monotonic()
    done = subprocess.run(
        [python, "-m", "mnemo", "doctor"], cwd=workdir, env=env, capture_output=True, text=True, timeout=1800
    )
    return {
        "exit_code": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "output": (done.stdout + done.stderr)[-4000:],
    }


def results_name(model: str) -> str:
    """The results file of ``model``: SmolLM2's keeps the name it always had."""
    return "real_model.json" if model == "smollm2-135m" else f"real_model_{model}.json"


def run(
    out: Path,
    *,
    model: str = DEFAULT_MODEL,
    cache: Path | None = None,
    port: int = 0,
    model_timeout_s: float | None = None,
    extraction_timeout_s: float | None = None,
    direct: bool = True,
    only: tuple[str, ...] = ("conversation", *CASES),
) -> dict[str, Any]:
    """Everything above; writes ``<out>/<results_name(model)>`` and returns it. The
    two timeouts, when given, are set as a user of a slow server would
    (``MNEMO_MODEL_TIMEOUT_S`` in ``.env``, ``extraction_timeout_s`` in each
    run's context); unset, mnemo's defaults hold. ``only`` picks the parts run
    through mnemo: the conversation and the cases of :data:`CASES`."""
    from harness.devserver import free_port, server_environment

    started = time.time()
    served = MODELS[model]
    context = {} if extraction_timeout_s is None else {"extraction_timeout_s": extraction_timeout_s}
    gguf = prepare(served, cache)
    spec = f"openai:{served.alias}"
    talk, cases, doctor = None, {}, None
    with tempfile.TemporaryDirectory(prefix="mnemo-real-model-") as tmp:
        llama_log = Path(tmp) / "llama-server.log"
        with serve(served, port or free_port(), llama_log, cache=cache) as base_url:
            asked = probe(base_url, served.alias, llama_log) if direct else {}
            with RecordingProxy(base_url.removesuffix("/v1")) as proxy:
                settings = mnemo_settings(spec, model_timeout_s=model_timeout_s)
                server, workdir = started_mnemo(Path(tmp), proxy, settings)
                try:
                    if "conversation" in only:
                        talk = asyncio.run(_conversation(server, proxy, context))
                    for name, case in CASES.items():
                        if name in only:
                            try:
                                cases[name] = case(server, proxy, workdir, settings, context)
                            except Exception:  # one broken case must not lose the rest of the run
                                cases[name] = {"error": traceback.format_exc()[-2000:]}
                    log = server.output(tail=10**8)
                finally:
                    server.stop()
                chats = [r for r in proxy.records if r["path"].endswith("/chat/completions")]
                summaries = [request_summary(r) for r in chats]
            if "conversation" in only:
                doctor = _doctor(workdir, {**server_environment(), "OPENAI_BASE_URL": base_url, **settings})
            server_log = llama_log.read_text(errors="replace")
    lines = plain_lines(log)
    result = {
        "meta": meta(
            "real-model",
            started,
            runtime=runtime(),
            model=gguf.name,
            model_profile=model,
            served_as=served.alias,
            model_timeout_s=model_timeout_s,
            run_context=context,
            only=list(only),
            load_average=load_average(),
            checkout=subprocess.run(
                ["git", "-C", str(REPO_ROOT), "log", "-1", "--format=%h %s"], capture_output=True, text=True
            ).stdout.strip(),
        ),
        "direct": asked,
        "conversation": talk,
        "cases": cases,
        "requests": tally(summaries),
        "request_log": summaries,
        "server_warnings": warning_lines(lines)[:40],
        "memory_log": [line[:300] for line in lines if "memory" in line.lower()][:40],
        "llama_timings": llama_timings(server_log),
        "doctor": doctor,
    }
    name = results_name(model)
    write_json(out / name, result)
    examples = tool_call_examples(chats)
    if examples:
        write_json(out / name.replace(".json", "_tool_calls.json"), {"meta": result["meta"], "examples": examples})
    print(report(result))
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run it as: python -m bench real-model")
