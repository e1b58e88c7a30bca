"""Tests of mnemo.writing, and what several of them share."""

from __future__ import annotations

from harness.scripted import ScriptedChatModel, tool_call
from mnemo.audit import Origin

#: ``aextract_messages``'s keyword arguments in these tests: no failure yet, the extractor's origin.
EXTRACT = {"failures": 0, "said_at": None, "timeout_s": 30, "origin": Origin(source="extractor")}


async def load_nothing_extracted() -> ScriptedChatModel:
    """An extractor that answers an empty extraction, as the real model did when it dropped a fact."""
    return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction"))
