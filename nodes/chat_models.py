"""Chat models of the run, built once per process (``init_chat_model``)."""

from __future__ import annotations

import asyncio

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

#: ``provider:model`` -> the model built for it (tests register scripted models here).
_models: dict[str, BaseChatModel] = {}


async def aload_chat_model(spec: str) -> BaseChatModel:
    """``init_chat_model(spec)``, built once per process and off the event loop
    (client construction reads CA certificates from disk)."""
    if spec not in _models:
        _models[spec] = await asyncio.to_thread(init_chat_model, spec, temperature=0)
    return _models[spec]
