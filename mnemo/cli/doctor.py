"""``python -m mnemo doctor``: the configured model server, checked as mnemo uses it.

Each check is a call mnemo makes (a plain answer, a streamed one, tools offered,
each way of :data:`mnemo.models.WAYS` asked for a memory extraction), built the
one way mnemo builds models and bounded by its deadline; the table says what
works, how long it took and the way memory will be written. Exit status 1
when memory cannot be written with this server (docs/models.md).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from mnemo.cli.command_line import arg, command
from mnemo.core import InvalidInputError, ModelUnavailableError, env

#: What the structured-output checks ask the model to extract from.
SAID = "Hi, my name is Lin and I live in Suzhou."


@tool
def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return "shipped"


async def _plain(model: BaseChatModel) -> str:
    reply = await model.ainvoke([HumanMessage("Say hello in one word.")])
    if not reply.text.strip():
        raise ValueError("an empty answer")
    return repr(reply.text.strip()[:40])


async def _streamed(model: BaseChatModel) -> str:
    chunks = [c async for c in model.astream([HumanMessage("Count from 1 to 5.")])]
    if not "".join(c.text for c in chunks).strip():
        raise ValueError("no text streamed")
    return f"{len(chunks)} chunks"


class Degraded(Exception):
    """A check that works only thanks to a workaround: shown as WARN, with what to do."""


async def _tools(model: BaseChatModel) -> str:
    from mnemo.models import recover_tool_calls  # deferred: python -m mnemo loads every command

    reply = await model.bind_tools([lookup_order]).ainvoke([HumanMessage("Where is my order A-1234? Look it up.")])
    if getattr(reply, "tool_calls", None):
        return f"called {reply.tool_calls[0]['name']}"
    if recover_tool_calls(reply, [lookup_order]).tool_calls:
        raise Degraded(
            "tool calls come back as text, not tool_calls (mnemo recovers a block naming an offered tool); "
            "serve with llama-server --jinja or a model whose chat template has tool calls (docs/models.md)"
        )
    raise ValueError(f"answered in text, no tool call ({reply.text.strip()[:40]!r}): the agent's tools go unused")


def _structured(way: str) -> Callable[[BaseChatModel], Awaitable[str]]:
    async def check(model: BaseChatModel) -> str:
        from mnemo.models import attempt  # deferred: python -m mnemo loads every command
        from mnemo.writing import (
            MemoryExtraction,
            extraction_messages,
        )  # deferred: python -m mnemo loads every command

        parsed, cause = await attempt(model, MemoryExtraction, extraction_messages([SAID], []), way)
        if parsed is None:
            raise ValueError(cause)
        found = {k: v for k, v in parsed.model_dump(exclude_defaults=True).items() if v}
        return f"parsed {found}"[:60]

    return check


async def _run(check: Callable[[BaseChatModel], Awaitable[str]], model: BaseChatModel) -> tuple[str, str, float]:
    """``("ok" | "WARN" | "FAIL", detail, seconds)`` of one check."""
    from mnemo.models import within_deadline  # deferred: python -m mnemo loads every command

    started = time.perf_counter()
    try:
        detail, status = await within_deadline(check(model)), "ok"
    except Degraded as exc:
        detail, status = str(exc), "WARN"
    except Exception as exc:
        status, detail = "FAIL", _failure(exc)
    return status, _shown(status, detail), time.perf_counter() - started


def _failure(exc: Exception) -> str:
    """What a failed check shows: a check's own ``ValueError`` and mnemo's errors as
    said (they say what to do), anything else with its type."""
    if type(exc) is ValueError or isinstance(exc, ModelUnavailableError | InvalidInputError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _shown(status: str, detail: str) -> str:
    # A warning's or a configuration failure's detail says what to do: kept whole.
    whole = status == "WARN" or "mnemo doctor" in detail or "MNEMO_ALLOWED_MODELS" in detail
    return " ".join(detail.split())[: 400 if whole else 110]


async def _model(spec: str, *, memory: bool) -> BaseChatModel | str:
    """The client mnemo builds for ``spec``, or why it cannot be built (a FAIL line, never a traceback)."""
    from mnemo.models import aload_chat_model  # deferred: python -m mnemo loads every command

    try:
        return await aload_chat_model(spec, memory=memory)
    except (ModelUnavailableError, InvalidInputError) as exc:
        return str(exc)


def _load_dotenv() -> None:
    # As `langgraph dev` does (python-dotenv, installed with the server); the shell's values win.
    try:
        from dotenv import load_dotenv
    except ImportError:
        return
    load_dotenv(Path(".env"), override=False)


@command(
    "doctor",
    "check the model server as mnemo uses it: answers, streaming, tools, structured output (exit 1: no memory)",
    arg("--model", help="provider:model to check (default: $MNEMO_MODEL and $MNEMO_EXTRACTION_MODEL)"),
    arg(
        "--brief",
        action="store_true",
        help="one line: whether the chat model answers a plain question (./scripts/dev says it at start-up)",
    ),
)
async def doctor(args: argparse.Namespace) -> int:
    _load_dotenv()
    from mnemo.models import (  # deferred: python -m mnemo loads every command
        WAYS,
        client_settings,
        configured_memory_model,
        configured_model,
    )

    chat = args.model or configured_model()
    if args.brief:
        return await _brief(chat)
    memory = args.model or configured_memory_model()
    settings = client_settings()
    print(f"model server: {env.text('OPENAI_BASE_URL') or '(the provider default)'}")
    print(
        f"chat model {chat}, memory model {memory}; "
        + ", ".join(f"{k}={v:g}" for k, v in settings.items())
        + f"; memory calls max_tokens={client_settings(memory=True)['max_tokens']}"
    )
    rows: list[tuple[str, str, str, str, float]] = []
    clients = {(chat, False): await _model(chat, memory=False), (memory, True): await _model(memory, memory=True)}
    checks: list[tuple[str, str, Callable[[BaseChatModel], Awaitable[str]]]] = [
        (chat, "plain answer", _plain),
        (chat, "streaming", _streamed),
        (chat, "tools offered", _tools),
        *((memory, f"structured: {way}", _structured(way)) for way in WAYS),
    ]
    for spec, what, check in checks:  # structured answers as memory calls ask them (their output cap)
        model = clients[spec, what.startswith("structured")]
        if isinstance(model, str):  # cannot be built: one line says why, its checks are not run
            if not any(r[0] == spec and r[1] == "model setup" for r in rows):
                rows.append((spec, "model setup", "FAIL", _shown("FAIL", model), 0.0))
            continue
        rows.append((spec, what, *await _run(check, model)))
    width = max(len(r[1]) for r in rows)
    for spec, what, status, detail, seconds in rows:
        print(f"{status:<4}  {what:<{width}}  {seconds:6.1f}s  {spec}  {detail}")
    return _verdict(rows, clients[memory, True])


def _verdict(rows: list[tuple[str, str, str, str, float]], memory_client: BaseChatModel | str) -> int:
    """The last line of ``doctor``, from its ``rows``: which way memory is
    written by (0), or why memory cannot be written (1)."""
    from mnemo.models import WAYS, pinned_way, ways_for  # deferred: python -m mnemo loads every command

    working = [w for w in WAYS if any(r[1] == f"structured: {w}" and r[2] != "FAIL" for r in rows)]
    usable = [] if isinstance(memory_client, str) else [w for w in ways_for(memory_client) if w in working]
    plain_ok = any(r[1] == "plain answer" and r[2] != "FAIL" for r in rows)
    if usable and plain_ok:
        print(f"memory is written by: {usable[0]}")
        return 0
    if any(r[1] == "model setup" for r in rows):
        print("the model cannot be used as configured (the FAIL line above says what to set)")
    elif not plain_ok:
        print("the model server does not answer: mnemo cannot chat or write memory with it")
    elif (pinned := pinned_way()) is not None and working:
        print(
            f"memory cannot be written with this server: MNEMO_STRUCTURED_OUTPUT pins {pinned}, which failed above; "
            f"it works with {', '.join(working)}: pin that, or unset it (docs/models.md)"
        )
    else:
        print(
            "memory cannot be written with this server: no way of asking for a structured answer worked. "
            "Serve a model with response_format json_schema or tool calls (llama.cpp: llama-server --jinja), "
            "or pin a way with MNEMO_STRUCTURED_OUTPUT (docs/models.md)"
        )
    return 1


async def _brief(spec: str) -> int:
    """``doctor --brief``: one line saying whether ``spec`` answers, and if not what to set."""
    model = await _model(spec, memory=False)
    if isinstance(model, str):
        status, detail, seconds = "FAIL", model, 0.0
    else:
        status, detail, seconds = await _run(_plain, model)
    if status == "FAIL":
        print(f"mnemo: the chat model {spec} cannot be used: {' '.join(detail.split())}")
        return 1
    print(f"mnemo: the chat model {spec} answers ({seconds:.1f} s)")
    return 0
