"""Tests of mnemo.writing, and what several of them share."""

from __future__ import annotations

from typing import Any

from harness.scripted import ScriptedChatModel, tool_call
from mnemo.audit import Origin

#: ``aextract_messages``'s keyword arguments in these tests: no failure yet, the extractor's origin.
EXTRACT: dict[str, Any] = {"failures": 0, "said_at": None, "timeout_s": 30, "origin": Origin(source="extractor")}


async def load_nothing_extracted() -> ScriptedChatModel:
    """An extractor that answers an empty extraction, as the real model did when it dropped a fact."""
    return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction"))


async def assert_quoted_once(store, user, first: str, again: str, note: str) -> None:
    """A fact read in code from ``first`` is kept as ``note`` though the extractor dropped it, and
    ``again``, saying it once more, adds no second copy (the note is shown to the extraction)."""
    from langchain_core.messages import HumanMessage

    from mnemo import alist_notes
    from mnemo.writing import aextract_messages

    thread = [HumanMessage(first, id="h1")]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (1, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == [note]
    thread.append(HumanMessage(again, id="h2"))
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT) == (2, 0)
    assert len(await alist_notes(store, user)) == 1
