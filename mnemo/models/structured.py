"""Structured answers from whatever model server is configured.

Servers honour different ways of asking for a structured answer: llama.cpp
enforces a ``json_schema`` response format but ignores a named ``tool_choice``;
Ollama ignores ``tool_choice``; OpenAI and vLLM honour both. :func:`astructured`
tries the ways of :data:`WAYS` in order, tells an answer it can use from one
the server did not honour (text where a call was forced, text that is not the
schema, a 4xx refusal of the parameter), moves to the next way, and remembers
per model and base URL the way that worked (process-level). ``MNEMO_STRUCTURED_OUTPUT``
pins one. When no way gives a usable answer, one WARNING per cause says what
the server did and the fix (docs/models.md).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, NamedTuple, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.output_parsers import PydanticOutputParser
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from mnemo.core import env
from mnemo.models.build import made_once

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

#: The ways, in the order tried. ``json_schema`` first: where a server has it
#: (OpenAI, vLLM, llama.cpp, Ollama) generation is constrained to the schema,
#: whatever the model's tool-calling skill or chat template; it is also
#: langchain-openai's own default. Then a forced (named) function call, which
#: every tool-calling provider of ``init_chat_model`` has; then
#: ``tool_choice="required"`` for servers that honour that but not a name; last
#: the schema in the instructions and JSON parsed from the text, which needs
#: nothing of the server. (``json_mode``'s ``json_object`` is left out: it
#: carries no schema, and the servers that have it have ``json_schema``.)
WAYS = ("json_schema", "function_calling", "tool_required", "text")
ENV = "MNEMO_STRUCTURED_OUTPUT"

#: Model key -> the way that last gave a usable answer.
_worked: dict[str, str] = {}
#: Causes already logged at WARNING (later ones go to DEBUG).
_warned: set[tuple[str, ...]] = set()


class StructuredOutputError(Exception):
    """No way gave a usable structured answer; ``causes`` says, per way, what the server did."""

    def __init__(self, what: str, key: str, causes: Sequence[tuple[str, str]]) -> None:
        self.what, self.key, self.causes = what, key, list(causes)
        tried = "; ".join(f"{way}: {cause}" for way, cause in causes)
        super().__init__(f"{what}: the model server gave no usable structured answer ({key}); {tried}")


class Attempt(NamedTuple):
    """One way's result: the parsed answer, or why there is none."""

    parsed: BaseModel | None
    cause: str | None


def model_key(model: BaseChatModel) -> str:
    """What the learned way is remembered by: the client type, model and base URL."""
    name = getattr(model, "model_name", None) or getattr(model, "model", None) or ""
    base = getattr(model, "openai_api_base", None) or getattr(model, "base_url", None) or ""
    return f"{type(model).__name__}:{name}@{base}"


def pinned_way() -> str | None:
    """The way ``MNEMO_STRUCTURED_OUTPUT`` pins (``None``: automatic).

    Raises:
        InvalidInputError: not one of :data:`WAYS` (or ``auto``).
    """
    value = env.choice(ENV, ("auto", *WAYS))
    return None if value == "auto" else value


def ways_for(model: BaseChatModel) -> list[str]:
    """The ways to try for ``model``, in order: the pinned one alone, else the
    one that worked last first."""
    if (pinned := pinned_way()) is not None:
        return [pinned]
    first = _worked.get(model_key(model))
    return [first, *(w for w in WAYS if w != first)] if first else list(WAYS)


def _excerpt(message: Any) -> str:
    text = message.text if isinstance(message, BaseMessage) else str(message or "")
    text = " ".join(text.split())
    return repr(text[:60] + ("..." if len(text) > 60 else ""))


def _refused(exc: Exception) -> bool:
    """The server refused the way itself (a parameter it does not know), not
    the request: a 4xx other than auth, not found and rate limits."""
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500 and status not in (401, 403, 404, 408, 429)


def _cut_at_cap(exc: Exception) -> bool:
    """The answer reached the request's output cap before it ended: the OpenAI
    client refuses to parse it (``finish_reason: "length"``), an answer that
    cannot be used, not a failure of the server."""
    try:
        from openai import LengthFinishReasonError
    except ImportError:  # another provider's client
        return False
    return isinstance(exc, LengthFinishReasonError)


def _from_tool_call(raw: Any, schema: type[M]) -> Attempt:
    made = getattr(raw, "tool_calls", None) or []
    calls = [c for c in made if c.get("name") == schema.__name__]
    if not calls and made:  # another function's arguments are no (empty) answer
        return Attempt(None, f"called {made[0].get('name')!r} instead of the function {schema.__name__}")
    if not calls:
        return Attempt(None, f"answered in text instead of calling the function ({_excerpt(raw)})")
    try:
        return Attempt(schema.model_validate(calls[0]["args"]), None)
    except Exception as exc:
        return Attempt(None, f"called the function with arguments not in the schema ({type(exc).__name__})")


def _read(out: Any, schema: type[M], way: str) -> Attempt:
    """The answer of ``with_structured_output(..., include_raw=True)``: its
    ``parsed``, checked against ``schema`` (a client that ignores
    ``include_raw`` and returns the answer itself is read too)."""
    raw = out.get("raw") if isinstance(out, dict) and "parsed" in out else None
    parsed = out.get("parsed") if isinstance(out, dict) and "parsed" in out else out
    if isinstance(parsed, schema):
        return Attempt(parsed, None)
    if isinstance(parsed, dict):
        try:
            return Attempt(schema.model_validate(parsed), None)
        except Exception as exc:
            return Attempt(None, f"answered JSON not of the schema ({type(exc).__name__})")
    if way == "function_calling" and raw is not None:  # a named tool_choice
        return _from_tool_call(raw, schema)
    shown = _excerpt(raw) if raw is not None else type(parsed).__name__
    return Attempt(None, f"answered, but not with the schema ({shown})")


def _runnable(model: BaseChatModel, schema: type[M], way: str) -> Any:
    """The runnable that asks ``model`` for ``schema`` one ``way``, made once per model, schema and way."""
    return made_once((model, schema, way), lambda: _make_runnable(model, schema, way))


def _make_runnable(model: BaseChatModel, schema: type[M], way: str) -> Any:
    if way == "json_schema":
        # langchain's own way, given the schema as JSON schema: with the class, langchain-openai
        # parses in the client and a text answer raises there, raw answer lost; checked by _read.
        return model.with_structured_output(schema.model_json_schema(), method=way, include_raw=True)
    if way == "function_calling":
        # langchain's own forced call; with the raw answer, "ignored" is told from "malformed".
        # Given as the tool it becomes (the same request): with the class, langchain converts it
        # again on every call for its tracing metadata (2 ms of CPU an extraction); checked by _read.
        return model.with_structured_output(convert_to_openai_tool(schema), method=way, include_raw=True)
    if way == "tool_required":
        # Hand-built: with_structured_output always names the tool; some servers honour only "required".
        return model.bind_tools([schema], tool_choice="required")
    return model


def _with_format(messages: Sequence[BaseMessage], parser: PydanticOutputParser) -> list[BaseMessage]:
    """``messages`` with the schema written into the instructions (the system
    message, so the user's words stay data)."""
    asked, instructions = list(messages), parser.get_format_instructions()
    if asked and isinstance(asked[0], SystemMessage):
        return [SystemMessage(f"{asked[0].text}\n\n{instructions}"), *asked[1:]]
    return [SystemMessage(instructions), *asked]


async def attempt(model: BaseChatModel, schema: type[M], messages: Sequence[BaseMessage], way: str) -> Attempt:
    """Ask for ``schema`` one ``way``. Raises what is no fault of the way
    (timeouts, connection errors, 5xx, 429...)."""
    try:
        runnable = _runnable(model, schema, way)
    except (NotImplementedError, ValueError) as exc:  # this provider has no such method
        return Attempt(None, f"not offered by this client: {type(exc).__name__}: {str(exc)[:120]}")
    # "text": langchain's parser gives the schema's instructions and reads JSON from the answer.
    parser = PydanticOutputParser(pydantic_object=schema)
    try:
        out = await runnable.ainvoke(_with_format(messages, parser) if way == "text" else list(messages))
    except Exception as exc:
        if _refused(exc):
            return Attempt(None, f"refused: {type(exc).__name__}: {str(exc)[:120]}")
        if _cut_at_cap(exc):
            return Attempt(
                None,
                "the answer reached the output cap before it ended (MNEMO_MEMORY_MAX_TOKENS; "
                "a model that repeats itself never ends)",
            )
        raise
    if way in ("json_schema", "function_calling"):
        return _read(out, schema, way)
    if way == "tool_required":
        return _from_tool_call(out, schema)
    try:
        return Attempt(parser.parse(out.text if isinstance(out, AIMessage) else str(out)), None)
    except Exception:
        return Attempt(None, f"answered with text that is not JSON of the schema ({_excerpt(out)})")


async def astructured(model: BaseChatModel, schema: type[M], messages: Sequence[BaseMessage], *, what: str) -> M:
    """``schema`` filled by ``model`` for ``messages``, by the first way of
    :func:`ways_for` that gives a usable answer (remembered for the model).
    No deadline of its own: the caller bounds the call (``within_deadline``).

    Raises:
        StructuredOutputError: no way gave one (logged at WARNING, once per cause).
        InvalidInputError: ``MNEMO_STRUCTURED_OUTPUT`` is not a way.
    """
    key = model_key(model)
    causes: list[tuple[str, str]] = []
    for way in ways_for(model):
        parsed, cause = await attempt(model, schema, messages, way)
        if parsed is not None:
            if causes or _worked.get(key) != way:
                logger.info("%s: structured output by %s for %s (tried before: %s)", what, way, key, causes or "none")
            _worked[key] = way
            return parsed  # type: ignore[return-value]  # an instance of schema (checked by attempt)
        causes.append((way, cause or "no answer"))
    error = StructuredOutputError(what, key, causes)
    signature = (key, *(f"{w}: {c.split(' (')[0]}" for w, c in causes))
    level = logging.DEBUG if signature in _warned else logging.WARNING
    _warned.add(signature)
    logger.log(
        level,
        "%s; nothing is written from this answer. Fix: run `python -m mnemo doctor` to see what this server "
        "honours; serve a model that supports response_format json_schema or tool calls (llama.cpp: "
        "llama-server --jinja), or pin a way that works with %s (docs/models.md)",
        error,
        ENV,
    )
    raise error


class Structured:
    """``astructured`` as a runnable-like object (``ainvoke``), for the memory
    paths that take "an extractor" (tests give them their own)."""

    def __init__(self, model: BaseChatModel, schema: type[BaseModel], *, what: str) -> None:
        self.model, self.schema, self.what = model, schema, what

    async def ainvoke(self, messages: Sequence[BaseMessage]) -> BaseModel:
        return await astructured(self.model, self.schema, messages, what=self.what)
