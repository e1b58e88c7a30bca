"""What every node and tool needs from the run: the current user, the models."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langgraph.config import get_config

from mnemo import User, resolve_user

_models: dict[str, BaseChatModel] = {}


def current_user(context: Any, config: Any | None = None) -> User:
    """The user of this run (see :func:`mnemo.resolve_user`); raises
    :class:`mnemo.MissingUserError` when there is none."""
    return resolve_user(context, config if config is not None else get_config())


async def aload_chat_model(spec: str) -> BaseChatModel:
    """``init_chat_model(spec)``, built once per process and off the event loop
    (client construction reads CA certificates from disk)."""
    if spec not in _models:
        _models[spec] = await asyncio.to_thread(init_chat_model, spec, temperature=0)
    return _models[spec]
