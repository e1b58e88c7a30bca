"""Tool calls a model wrote as text, recovered as the calls they are, and only those.

Some servers hand back a model's tool call as the answer's text instead of
``tool_calls``: Qwen2.5-Coder on llama.cpp answered "```json\\n{"name":
"remember_note", "arguments": {...}}\\n```" (issue 42), so the tool never ran
and the user read JSON. :func:`recover_tool_calls` turns such an answer into
the call it spells, only when the answer is nothing but that one call
(:func:`mnemo.core.reply_call`) naming a tool the model was offered, with
arguments that tool accepts, and the call is not one the prompt's data or the
user's messages already spell (a past case, a note, a policy, the user's own
words: the model would be copying it, issue 56) and the user did not ask for
JSON; anything else is left as the text it is. Recovered calls are logged (at
WARNING once per process): the server should return them itself (docs/models.md).
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from mnemo.core import call_shape, calls_in, canonical, reply_call

logger = logging.getLogger(__name__)

#: Longest text looked at (an answer longer than this is an answer).
MAX_CHARS = 8000
#: The user's latest message asks for JSON: then JSON is the answer, never a call.
ASKS_FOR_JSON = re.compile(r"json", re.IGNORECASE)

_warned = False


def _call(obj: Any, tools: dict[str, BaseTool]) -> dict[str, Any] | None:
    """The tool call ``obj`` spells, or ``None`` when it is not a call object,
    names no offered tool or its arguments do not fit."""
    if (shape := call_shape(obj)) is None or shape[0] not in tools:
        return None
    name, args = shape
    schema = tools[name].tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(args)
        except ValidationError:
            return None
    return {"name": name, "args": args, "id": f"call_text_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def _spelled(prompt: Sequence[BaseMessage]) -> set[str]:
    """Every call the prompt's messages spell, in :func:`mnemo.core.canonical` form."""
    return {canonical(*c) for m in prompt for c in calls_in(m.text)}


def recover_tool_calls(message: Any, tools: Sequence[BaseTool], prompt: Sequence[BaseMessage] = ()) -> Any:
    """``message`` with the one tool call its text spells made a real call, when
    it has no call of its own and nothing forbids it (module docstring); else
    ``message`` unchanged. ``prompt``: the messages the model was given (the
    system prompt with its data blocks, the thread)."""
    global _warned
    text = message.content if isinstance(message, AIMessage) else None
    if not tools or not isinstance(text, str) or message.tool_calls or len(text) > MAX_CHARS or "{" not in text:
        return message
    parsed = reply_call(text)
    call = _call(parsed[0], {t.name: t for t in tools}) if parsed else None
    if call is None:
        return message
    said = [m for m in prompt if isinstance(m, HumanMessage)][-1:]
    if said and ASKS_FOR_JSON.search(said[0].text):
        return message  # the user asked for JSON: this is the answer
    if canonical(call["name"], call["args"]) in _spelled(prompt):
        logger.warning("the model's answer is a %s call the prompt already spells; left as text", call["name"])
        return message
    logger.log(
        logging.INFO if _warned else logging.WARNING,
        "the model wrote its tool call %s as text instead of tool_calls; mnemo ran it. The server should "
        "return tool calls itself (llama.cpp: llama-server --jinja, a model with a tool-call template): "
        "run `python -m mnemo doctor` and see docs/models.md",
        call["name"],
    )
    _warned = True
    return message.model_copy(update={"content": "", "tool_calls": [call]})
