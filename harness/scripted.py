"""A scripted chat model for tests (never imported by production code).

It answers through a function of the messages it receives, records every
call, and supports ``bind_tools`` / ``with_structured_output`` the way real
chat models do (structured output arrives as a tool call that LangChain's own
parser turns into the pydantic object), so the graph runs unchanged.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field

Responder = Callable[[list[BaseMessage], list[str]], AIMessage]
_ids = itertools.count()


class ScriptedChatModel(BaseChatModel):
    """``respond(messages, tool_names) -> AIMessage`` decides every answer."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    respond: Any
    calls: list[dict] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Runnable:
        from langchain_core.utils.function_calling import convert_to_openai_tool

        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def _generate(
        self, messages, stop=None, run_manager: CallbackManagerForLLMRun | None = None, **kwargs
    ) -> ChatResult:
        tool_names = kwargs.get("tool_names", [])
        self.calls.append({"messages": list(messages), "tool_names": tool_names})
        message = self.respond(list(messages), tool_names)
        if message.tool_calls:
            for call in message.tool_calls:
                call.setdefault("id", f"call_{next(_ids)}")
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self, messages, stop=None, run_manager: AsyncCallbackManagerForLLMRun | None = None, **kwargs
    ) -> ChatResult:
        # In a thread, as a real client's request would not hold the event
        # loop: a slow scripted answer can then be timed out and cancelled.
        return await asyncio.to_thread(self._generate, messages, stop=stop, **kwargs)


def tool_call(name: str, /, **args: Any) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": f"call_{next(_ids)}", "type": "tool_call"}]
    )


def schema_nodes(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Every sub-schema of the JSON schema ``schema`` once (its ``$defs`` included)."""
    found, todo = [], [schema]
    while todo:
        node = todo.pop()
        found.append(node)
        for value in node.values():
            todo.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict))
    return found


def unbounded(schema: dict[str, Any]) -> tuple[int, int, list[dict[str, Any]]]:
    """How many free strings (no ``enum``) and lists ``schema`` has, and those
    of them without a ``maxLength`` / ``maxItems``."""
    nodes = schema_nodes(schema)
    strings = [n for n in nodes if n.get("type") == "string" and "enum" not in n]
    lists = [n for n in nodes if n.get("type") == "array"]
    missing = [n for n in strings if not isinstance(n.get("maxLength"), int)]
    missing += [n for n in lists if not isinstance(n.get("maxItems"), int)]
    return len(strings), len(lists), missing
