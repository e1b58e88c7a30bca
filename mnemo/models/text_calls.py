"""Tool calls a model wrote as text, recovered as the calls they are.

Some servers hand back a model's tool call as the answer's text instead of
``tool_calls``: Qwen2.5-Coder on llama.cpp answered "```json\\n{"name":
"remember_note", "arguments": {...}}\\n```" (issue 42), so the tool never ran
and the user read JSON. :func:`recover_tool_calls` turns such an answer into
the calls it spells, only when every block it holds is a JSON object naming a
tool the model was offered, with arguments that tool accepts; anything else
is left as the text it is. Recovered calls are logged (at WARNING once per
process): the server should return them itself (docs/models.md).
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

logger = logging.getLogger(__name__)

#: A fenced block (```json ... ``` or ``` ... ```), a ``<tool_call>`` element
#: (the Qwen and Hermes templates' own markup) or a ``<tools>`` element (the tag
#: of the template's list of tools, which Qwen2.5-Coder-1.5B copied round its call
#: on the local model, issue 55), holding one JSON object.
_BLOCK = re.compile(
    r"```(?:json)?\s*(\{.*?\})\s*```|<(tool_call|tools)>\s*(\{.*?\})\s*</\2>",
    re.DOTALL,
)
#: Longest text looked at (an answer longer than this is an answer).
MAX_CHARS = 8000

_warned = False


def _call(obj: Any, tools: dict[str, BaseTool]) -> dict[str, Any] | None:
    """The tool call ``obj`` spells (``{"name", "arguments" | "parameters"}``),
    or ``None`` when it names no offered tool or its arguments do not fit."""
    if not isinstance(obj, dict) or set(obj) - {"name", "arguments", "parameters"}:
        return None
    name, args = obj.get("name"), obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):  # the OpenAI wire form: arguments as a JSON string
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(name, str) or name not in tools or not isinstance(args, dict):
        return None
    schema = tools[name].tool_call_schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        try:
            schema.model_validate(args)
        except ValidationError:
            return None
    return {"name": name, "args": args, "id": f"call_text_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def _objects(text: str) -> tuple[list[Any], str] | None:
    """The JSON objects of ``text``'s blocks (or of the whole text, a bare
    object) and the text around them; ``None`` when one does not parse."""
    blocks = list(_BLOCK.finditer(text))
    found = [m.group(1) or m.group(3) for m in blocks]
    rest = _BLOCK.sub("", text).strip()
    if not blocks:
        stripped = text.strip()
        if not (stripped.startswith("{") and stripped.endswith("}")):
            return None
        found, rest = [stripped], ""
    try:
        return [json.loads(f) for f in found], rest
    except ValueError:
        return None


def recover_tool_calls(message: Any, tools: Sequence[BaseTool]) -> Any:
    """``message`` with the tool calls its text spells made real calls (the text
    around them kept), when it has none of its own; else ``message`` unchanged."""
    global _warned
    text = message.content if isinstance(message, AIMessage) else None
    if not tools or not isinstance(text, str) or message.tool_calls or len(text) > MAX_CHARS or "{" not in text:
        return message
    parsed = _objects(text)
    if parsed is None:
        return message
    objects, rest = parsed
    by_name = {t.name: t for t in tools}
    calls = [_call(o, by_name) for o in objects]
    if not calls or any(c is None for c in calls):
        return message
    logger.log(
        logging.INFO if _warned else logging.WARNING,
        "the model wrote its tool call(s) %s as text instead of tool_calls; mnemo ran them. The server should "
        "return tool calls itself (llama.cpp: llama-server --jinja, a model with a tool-call template): "
        "run `python -m mnemo doctor` and see docs/models.md",
        [c["name"] for c in calls if c],
    )
    _warned = True
    return message.model_copy(update={"content": rest, "tool_calls": calls})
