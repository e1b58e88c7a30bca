"""The one way mnemo builds a chat model: the run's, the writer's and every
operator command's (``init_chat_model``, built once per process).

Only models of ``MNEMO_ALLOWED_MODELS`` can be built; every client has a
request timeout (``MNEMO_MODEL_TIMEOUT_S``), a retry limit
(``MNEMO_MODEL_MAX_RETRIES``) and an output cap (``MNEMO_MODEL_MAX_TOKENS``),
and :func:`within_deadline` bounds a whole call, streamed or not (docs/models.md).
A memory call's client never streams and is hidden from the run's ``messages``
stream (:data:`MEMORY_CALLS`): its answer is read whole, by mnemo, not by the user.
What is made of a client per call (tools bound, structured output) is made once
(:func:`made_once`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.constants import TAG_NOSTREAM

from mnemo.core import InvalidInputError, env
from mnemo.models.unavailable import explain_call, explain_setup

#: The chat model when the operator configures none (``MNEMO_MODEL``).
DEFAULT_MODEL = "openai:gpt-4o-mini"

#: ``provider:model`` -> the model built for it (tests register scripted models here).
MODELS: dict[str, BaseChatModel] = {}

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
#: Tokens one answer may have: a reply, an extraction or a rewrite fits in far
#: fewer; a model that repeats itself stops here (issue 29: 712 tokens and going).
DEFAULT_MAX_TOKENS = 2048
#: Tokens one memory call's answer may have (extraction, consolidation,
#: rewrites, summaries): above what the bounded schemas allow (about 3,700
#: characters for an extraction, :mod:`mnemo.models.bounds`), below the reply's,
#: so a model that loops costs half the time before its cause is logged.
DEFAULT_MEMORY_MAX_TOKENS = 1024

#: What a memory-call client is built with: no streamed request (a client
#: streams whenever the run streams ``messages``, chunk by chunk through every
#: callback), and LangGraph's tag that keeps its answer out of that stream
#: (a web UI would otherwise receive the extraction's JSON).
MEMORY_CALLS: dict[str, Any] = {"disable_streaming": True, "tags": [TAG_NOSTREAM]}

#: The key of a spec's memory-call client in :data:`MODELS`.
MEMORY_SUFFIX = " (memory calls)"
#: Key -> the client mnemo built for it (any other in MODELS was registered).
_built: dict[str, BaseChatModel] = {}
#: What was made of a model (tools bound, a structured-output runnable), by the
#: identities of what it was made from; the oldest go past :data:`MADE_KEPT`.
_made: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}
_made_lock = threading.Lock()
MADE_KEPT = 256

T = TypeVar("T")


def configured_model() -> str:
    """The operator's chat model: ``MNEMO_MODEL``, else :data:`DEFAULT_MODEL`."""
    return env.text("MNEMO_MODEL") or DEFAULT_MODEL


def configured_extraction_model() -> str:
    """The operator's model for memory calls (``MNEMO_EXTRACTION_MODEL``; ``""``: the chat model)."""
    return env.text("MNEMO_EXTRACTION_MODEL", strip=True)


def memory_model(chat: str, extraction: str) -> str:
    """The model of memory calls: ``extraction``, else the chat model (the one place this is chosen)."""
    return extraction or chat


def configured_memory_model() -> str:
    """The model memory calls use when a run chooses none: :func:`configured_extraction_model`, else the chat model."""
    return memory_model(configured_model(), configured_extraction_model())


def allowed_models() -> set[str]:
    """The models a run may choose (``MNEMO_ALLOWED_MODELS``, else the configured ones)."""
    listed = env.names("MNEMO_ALLOWED_MODELS")
    if listed:
        return listed
    configured = {configured_model(), configured_extraction_model()}
    return {m for m in configured if m}


def model_timeout_s() -> float:
    """Seconds one model call may take in all, retries and streaming included (``MNEMO_MODEL_TIMEOUT_S``)."""
    return env.number("MNEMO_MODEL_TIMEOUT_S", DEFAULT_TIMEOUT_S, 1, 600)


def client_settings(*, memory: bool = False) -> dict[str, float | int]:
    """``timeout``, ``max_retries`` and ``max_tokens`` for every chat client (from the
    environment); ``memory``: the cap of memory calls (``MNEMO_MEMORY_MAX_TOKENS``)."""
    cap = ("MNEMO_MEMORY_MAX_TOKENS", DEFAULT_MEMORY_MAX_TOKENS)
    if not memory:
        cap = ("MNEMO_MODEL_MAX_TOKENS", DEFAULT_MAX_TOKENS)
    return {
        "timeout": model_timeout_s(),
        "max_retries": int(env.number("MNEMO_MODEL_MAX_RETRIES", DEFAULT_MAX_RETRIES, 0, 10, integer=True)),
        "max_tokens": int(env.number(*cap, 16, 65536, integer=True)),
    }


def _openai_compatible_base() -> str:
    return env.text("OPENAI_BASE_URL") or env.text("OPENAI_API_BASE")


def cap_arguments(spec: str, max_tokens: int) -> dict[str, Any]:
    """The ``init_chat_model`` arguments that cap an answer at ``max_tokens``.

    langchain-openai sends its ``max_tokens`` as ``max_completion_tokens``, which
    OpenAI's own API wants but OpenAI-compatible servers (llama.cpp, Ollama,
    older vLLM) do not read: there the cap goes in the body as ``max_tokens``."""
    if spec.startswith("openai:") and _openai_compatible_base() and "api.openai.com" not in _openai_compatible_base():
        return {"extra_body": {"max_tokens": max_tokens}}
    return {"max_tokens": max_tokens}


def build_chat_model(spec: str, *, memory: bool = False) -> BaseChatModel:
    """A new client for ``spec`` with mnemo's timeout, retries and output cap
    (with ``memory``: the memory calls' cap and :data:`MEMORY_CALLS`; no allow
    list: :func:`aload_chat_model` checks it).

    Raises:
        ModelUnavailableError: the client cannot be made as configured (no key,
            the provider's package missing): the message says what to set.
    """
    settings = client_settings(memory=memory)
    # langchain-openai ends a stream silent for 120 s (stream_chunk_timeout) with a
    # TimeoutError, before MNEMO_MODEL_TIMEOUT_S: a CPU server reads a long prompt
    # in silence (issue 55, the local model). The whole-call deadline governs.
    silence: dict[str, Any] = {"stream_chunk_timeout": settings["timeout"]} if spec.startswith("openai:") else {}
    try:
        return init_chat_model(
            spec,
            temperature=0,
            timeout=settings["timeout"],
            max_retries=int(settings["max_retries"]),
            **cap_arguments(spec, int(settings["max_tokens"])),
            **silence,
            **(MEMORY_CALLS if memory else {}),
        )
    except Exception as exc:
        raise explain_setup(exc, spec) from exc


def made_once(parts: tuple[Any, ...], make: Callable[[], T]) -> T:
    """``make()``, made once for ``parts`` (a model and what is bound to it,
    each compared by identity and kept alive while the result is kept; a
    string by value). Binding tools or a schema converts them to the
    provider's format every time (3-5 ms of CPU a turn, docs/models.md), and
    the result depends on nothing else. Thread-safe (the server runs runs on
    several event loops): two threads may both make it, one result is kept."""
    key = tuple(p if isinstance(p, str) else id(p) for p in parts)
    with _made_lock:
        if (hit := _made.get(key)) is not None:
            return cast(T, hit[1])
    made = make()
    with _made_lock:
        if key not in _made and len(_made) >= MADE_KEPT:
            _made.pop(next(iter(_made)))
        return cast(T, _made.setdefault(key, (parts, made))[1])


def with_tools(model: BaseChatModel, tools: Sequence[BaseTool]) -> Runnable[Any, BaseMessage]:
    """``model.bind_tools(tools)``, bound once per model and tool list (:func:`made_once`)."""
    return made_once((model, *tools), lambda: model.bind_tools(list(tools)))


async def aload_chat_model(spec: str, *, memory: bool = False) -> BaseChatModel:
    """:func:`build_chat_model` for ``spec`` (``memory``: the client of memory
    calls), once per process and off the event loop (client construction reads
    CA certificates from disk). A model registered in :data:`MODELS` under
    ``spec`` by an application or a test serves both.

    Raises:
        InvalidInputError: ``spec`` is not on the allow list.
        ModelUnavailableError: its client cannot be made (:func:`build_chat_model`).
    """
    if memory and spec in MODELS and MODELS[spec] is not _built.get(spec):
        return MODELS[spec]
    key = f"{spec}{MEMORY_SUFFIX}" if memory else spec
    if key not in MODELS:
        if spec not in allowed_models():
            raise InvalidInputError(
                f"model {spec!r} is not allowed on this server; allowed: {', '.join(sorted(allowed_models()))} "
                "(the operator sets MNEMO_ALLOWED_MODELS)"
            )
        MODELS[key] = _built[key] = await asyncio.to_thread(build_chat_model, spec, memory=memory)
    return MODELS[key]


class ModelDeadlineError(TimeoutError):
    """A model call outlived its deadline (and was cancelled)."""


async def within_deadline(call: Awaitable[T], timeout_s: float | None = None) -> T:
    """``call``, cancelled past ``timeout_s`` or ``MNEMO_MODEL_TIMEOUT_S``,
    whichever is sooner.

    The client's own timeout bounds each wait for bytes, so a server that
    streams forever is never timed out by it; this bounds the whole call.

    Raises:
        ModelDeadlineError: the deadline passed.
        ModelUnavailableError: the call failed because of the configuration
            (a key refused, no server at the URL, a model it does not serve):
            the message says what to set (:mod:`mnemo.models.unavailable`).
    """
    limit = model_timeout_s() if timeout_s is None else min(timeout_s, model_timeout_s())
    try:
        return await asyncio.wait_for(call, timeout=limit)
    except TimeoutError as exc:
        if (explained := explain_call(exc)) is not None:  # the client's own timeout, before the deadline
            raise explained from exc
        raise ModelDeadlineError(
            f"the model did not finish within {limit:g}s (MNEMO_MODEL_TIMEOUT_S; the call was cancelled)"
        ) from None
    except Exception as exc:
        if (explained := explain_call(exc)) is not None:
            raise explained from exc
        raise
