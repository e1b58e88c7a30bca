"""Text shaped like a tool call: the one detector of it.

A model served without its tool-call template writes its calls as text:
``{"name": "remember_note", "arguments": {...}}``, bare, in a fenced block
(```` ```json ````) or in a ``<tool_call>`` element (the Qwen and Hermes
templates' markup). :func:`reply_call` reads a reply that is nothing but one
such call (``mnemo.models.recover_tool_calls`` runs it, if nothing else
forbids); :func:`calls_in` finds every call written anywhere in a text, quoted
data included (a JSON string literal holding one is read too), so a call a
reply copies from the prompt's data is recognised; :func:`tool_call_text`
says what in a text is shaped like a call, which text that crosses users
(a shared case, shared instructions) may not carry. docs/security.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The keys of a call object: its tool and its arguments (either name).
CALL_KEYS = frozenset({"name", "arguments", "parameters"})
#: A fenced block, or a ``<tool_call>`` element (the Qwen and Hermes templates' markup) or
#: a ``<tools>`` one (the tag of the template's list of tools, which Qwen2.5-Coder-1.5B
#: copied round its call on the local model, issue 55), holding one JSON object.
_BLOCK = re.compile(r"```(?:json)?\s*(\{.*\})\s*```|<(tool_call|tools)>\s*(\{.*\})\s*</\2>", re.DOTALL)
#: The markup of a call, also escaped as the prompt's quoting writes it.
_MARKUP = re.compile(r"</?tool(?:_call|s)>|\\u003c/?tool(?:_call|s)\\u003e", re.IGNORECASE)
#: A call's two keys side by side (either order, quotes escaped or not): a call
#: even when its object is cut short and no longer parses.
_Q = r'\\*"'
_KEYS = re.compile(
    rf"{_Q}name{_Q}\s*:\s*{_Q}[^\"\\]{{1,80}}{_Q}\s*,\s*{_Q}(?:arguments|parameters){_Q}\s*:"
    rf"|{_Q}(?:arguments|parameters){_Q}\s*:.{{0,400}}?{_Q}name{_Q}\s*:\s*{_Q}[^\"\\]{{1,80}}{_Q}",
    re.DOTALL,
)
#: A JSON string literal (a quoted value of the prompt, a tool's JSON result).
_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
#: Where a call object can start: its first key is one of its own.
_START = re.compile(r'\{\s*"(?:name|arguments|parameters)"\s*:')
#: Objects tried per text, at most (a text of such starts costs no more than this;
#: :func:`tool_call_text` still sees the keys past them).
MAX_OBJECTS = 1000
_DECODER = json.JSONDecoder()


def call_shape(obj: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` when ``obj`` is a call object: ``{"name", "arguments"
    | "parameters"}`` and nothing else, the arguments an object or the wire form's
    JSON string of one; else ``None``."""
    if not isinstance(obj, dict) or set(obj) - CALL_KEYS or not {"arguments", "parameters"} & set(obj):
        return None
    name, args = obj.get("name"), obj.get("arguments", obj.get("parameters"))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    if not isinstance(name, str) or not name or not isinstance(args, dict):
        return None
    return name, args


def canonical(name: str, args: dict[str, Any]) -> str:
    """One spelling of a call, whatever its key order, spacing or escapes."""
    return json.dumps([name, args], sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def reply_call(text: str) -> tuple[Any, str] | None:
    """The JSON value and form (``fenced``, ``element`` or ``bare``) when
    ``text`` is nothing but one fenced block, one ``<tool_call>`` element or one
    bare object, with only whitespace around it; ``None`` otherwise."""
    stripped = text.strip()
    if m := _BLOCK.fullmatch(stripped):
        body, form = (m.group(1), "fenced") if m.group(1) is not None else (m.group(3), "element")
    elif stripped.startswith("{") and stripped.endswith("}"):
        body, form = stripped, "bare"
    else:
        return None
    try:
        return json.loads(body), form
    except ValueError:  # two blocks, text between them, or not JSON: not one call
        return None


def _walk(value: Any, found: list[tuple[str, dict[str, Any]]]) -> None:
    if (shape := call_shape(value)) is not None:
        found.append(shape)
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        _walk(child, found)


def _objects(text: str, found: list[tuple[str, dict[str, Any]]]) -> None:
    end = 0
    for tried, m in enumerate(_START.finditer(text)):
        if tried == MAX_OBJECTS:
            break
        if m.start() < end:  # inside an object already read (_walk saw what it holds)
            continue
        try:
            value, end = _DECODER.raw_decode(text, m.start())
        except ValueError:
            continue
        _walk(value, found)


def calls_in(text: str, *, depth: int = 2) -> list[tuple[str, dict[str, Any]]]:
    """Every call object written in ``text``: as it stands, and inside the JSON
    string literals it holds (``depth`` levels of quoting), as ``(name, arguments)``."""
    found: list[tuple[str, dict[str, Any]]] = []
    if "{" not in text:
        return found
    _objects(text, found)
    if depth > 0 and "\\" in text:
        for m in _LITERAL.finditer(text):
            if "{" in m.group(0):
                try:
                    inner = json.loads(m.group(0))
                except ValueError:
                    continue
                found.extend(calls_in(inner, depth=depth - 1))
    return found


def tool_call_text(text: str) -> str | None:
    """The first piece of ``text`` shaped like a tool call (a call object, quoted
    or not, a call's keys side by side though its object is cut short, or the
    ``<tool_call>`` markup), or ``None`` when it holds none."""
    if found := calls_in(text):
        return canonical(*found[0])[:120]
    if m := _KEYS.search(text) or _MARKUP.search(text):
        return m.group(0)[:120]
    return None
