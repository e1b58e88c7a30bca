"""Chat models of the run: mnemo's one way to build them (:mod:`mnemo.models`:
allow list, timeouts, retries, output caps; built once per process), and the
memory model of a run."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from mnemo.app import allowed_models, aload_chat_model, client_settings, memory_model

__all__ = ["allowed_models", "aload_chat_model", "aload_memory_model", "client_settings"]


async def aload_memory_model(ctx: Any) -> BaseChatModel:
    """The client of the run's memory calls (extraction, summaries, rewrites):
    ``ctx.extraction_model``, else the chat model, with the memory calls' output cap."""
    return await aload_chat_model(memory_model(ctx.model, ctx.extraction_model), memory=True)
