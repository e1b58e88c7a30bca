"""A tool call that deletes or ends memory runs only on the user's own word.

Each tool the model may call declares what it does to memory
(:func:`declare`: ``reads``, ``writes`` or ``ends``, in the tool's
``metadata``); a tool that declares nothing counts as ``ends``. A call of a
tool that ends memory runs only when the user's latest message asks to forget
(:func:`asks_to_end`: forget, delete, remove, erase, don't remember, 忘记,
删除, 删掉, 去掉, 不要记..., a negated one such as "don't forget" or 不要忘记
excepted), or when that message confirms (:func:`confirms`: yes, confirm,
是的, 确认, 删吧...) the very call (same tool, same arguments) that was held
for confirmation in the turn before. :func:`consent_refusal` says why a call
waits; the tool node's gate answers with it (``nodes/tool_gate.py``), so a call
the model made itself, one recovered from text and one a past case or a note
put in its mouth are held alike. docs/security.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool

from mnemo.core import canonical

Effect = Literal["reads", "writes", "ends"]
#: The key of a tool's ``metadata`` that holds its :data:`Effect`.
MEMORY_EFFECT = "memory_effect"
EFFECTS: tuple[Effect, ...] = ("reads", "writes", "ends")
#: The key of a held call's ``ToolMessage.artifact`` (never shown to the model,
#: never written by a client or a tool): the call the user is asked to confirm.
AWAITING = "awaits_confirmation"

_ENDING = r"forget|forgot|delete|remove|erase|wipe"
#: A negated request ("don't forget", "do not delete my...", 不要忘记, 别删): not a request to end anything.
_NEGATED = re.compile(
    rf"\b(?:don[’']?t|do not|never|not|no need to)\s+(?:\w+\s+){{0,3}}?(?:{_ENDING})\w*"
    r"|(?:不要|别|不用|不能|不会|没有|不想|不希望|不)[^，。！？,.!?\s]{0,4}?(?:忘|删|去掉|清除|移除)",
    re.IGNORECASE,
)
_ASKS = re.compile(
    rf"\b(?:{_ENDING})\w*|\b(?:don[’']?t|do not|stop|no longer)\s+(?:remember|keep)"
    r"|忘记|忘掉|忘了|删除|删掉|删了|删吧|去掉|清除|移除|不要记|别记|不用记",
    re.IGNORECASE,
)
_YES = frozenset({"yes", "yeah", "yep", "y", "sure", "ok", "okay", "confirm", "confirmed", "correct"})
_YES_WITH = _YES | {"please", "go", "ahead", "do", "it", "i", "that's", "thats", "right", "thanks", "thank", "you"}
_YES_ZH = re.compile(r"(?:是的?|对的?|好的?|嗯|可以|确认|确定|没错|请|删吧|删除吧|删掉吧|删|吧|谢谢)+")
_SEPARATORS = re.compile(r"[\s,.!?;:~，。！？；：、…]+")

T = TypeVar("T", bound=BaseTool)


def declare(effect: Effect) -> Callable[[T], T]:
    """Mark a tool with what it does to memory (a decorator over ``@tool``)."""
    if effect not in EFFECTS:
        raise ValueError(f"a tool's memory effect is one of {EFFECTS}, got {effect!r}")

    def mark(tool: T) -> T:
        tool.metadata = {**(tool.metadata or {}), MEMORY_EFFECT: effect}
        return tool

    return mark


def effect_of(tool: BaseTool) -> Effect:
    """What ``tool`` declared, ``ends`` when it declared nothing (deny by default)."""
    effect = (tool.metadata or {}).get(MEMORY_EFFECT)
    return effect if effect in ("reads", "writes") else "ends"


def asks_to_end(text: str) -> bool:
    """``text`` asks to forget or delete something (English or Chinese), negations aside."""
    return bool(_ASKS.search(_NEGATED.sub(" ", text)))


def confirms(text: str) -> bool:
    """``text`` is a confirmation and nothing else: "yes", "OK, go ahead", "是的", "确认", "好的，删吧"."""
    words = [w for w in _SEPARATORS.split(text.strip().lower()) if w]
    if not words:
        return False
    if all(w in _YES_WITH for w in words) and any(w in _YES for w in words):
        return True
    return bool(_YES_ZH.fullmatch("".join(words)))


def _held(message: BaseMessage, call: Mapping[str, Any]) -> bool:
    artifact = message.artifact if isinstance(message, ToolMessage) else None
    return isinstance(artifact, Mapping) and artifact.get(AWAITING) == held(call)[AWAITING]


def held(call: Mapping[str, Any]) -> dict[str, str]:
    """The artifact of the answer to a held ``call``: what a confirmation must match."""
    return {AWAITING: canonical(str(call.get("name")), dict(call.get("args") or {}))}


def consent_refusal(effect: Effect, call: Mapping[str, Any], messages: Sequence[BaseMessage]) -> str | None:
    """Why ``call`` (a tool of ``effect``) waits for the user's word, or ``None`` when it may run."""
    if effect != "ends":
        return None
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    latest = messages[humans[-1]].text if humans else ""
    if asks_to_end(latest):
        return None
    if len(humans) > 1 and confirms(latest) and any(_held(m, call) for m in messages[humans[-2] : humans[-1]]):
        return None
    name = call.get("name")
    return (
        f"Not done: {name} deletes or ends what is remembered, and the user's latest message does not ask for "
        "that; nothing was changed. Tell the user what you would forget and ask them to confirm; if they "
        f"confirm, call {name} again with the same arguments."
    )
