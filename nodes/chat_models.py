"""Chat models of the run, built once per process (``init_chat_model``).

Only models of ``MNEMO_ALLOWED_MODELS`` can be built, and every client has a request
timeout (``MNEMO_MODEL_TIMEOUT_S``) and a retry limit (``MNEMO_MODEL_MAX_RETRIES``).
"""

from __future__ import annotations

import asyncio
import os

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

from mnemo.core import InvalidInputError, clamp
from nodes.context import configured_model

#: ``provider:model`` -> the model built for it (tests register scripted models here).
_models: dict[str, BaseChatModel] = {}

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2


def allowed_models() -> set[str]:
    """The models a run may choose (``MNEMO_ALLOWED_MODELS``, else the configured ones)."""
    listed = {m.strip() for m in os.environ.get("MNEMO_ALLOWED_MODELS", "").split(",") if m.strip()}
    if listed:
        return listed
    configured = {configured_model(), os.environ.get("MNEMO_EXTRACTION_MODEL", "")}
    return {m for m in configured if m}


def client_settings() -> dict[str, float | int]:
    """``timeout`` and ``max_retries`` for every chat client (from the environment)."""
    timeout = clamp("MNEMO_MODEL_TIMEOUT_S", os.environ.get("MNEMO_MODEL_TIMEOUT_S") or DEFAULT_TIMEOUT_S, 1, 600)
    retries = clamp(
        "MNEMO_MODEL_MAX_RETRIES", os.environ.get("MNEMO_MODEL_MAX_RETRIES") or DEFAULT_MAX_RETRIES, 0, 10, integer=True
    )
    return {"timeout": timeout, "max_retries": int(retries)}


async def aload_chat_model(spec: str) -> BaseChatModel:
    """``init_chat_model(spec)``, built once per process and off the event loop
    (client construction reads CA certificates from disk).

    Raises:
        InvalidInputError: ``spec`` is not on the allow list.
    """
    if spec not in _models:
        if spec not in allowed_models():
            raise InvalidInputError(
                f"model {spec!r} is not allowed on this server; allowed: {', '.join(sorted(allowed_models()))} "
                "(the operator sets MNEMO_ALLOWED_MODELS)"
            )
        settings = client_settings()
        _models[spec] = await asyncio.to_thread(
            lambda: init_chat_model(
                spec, temperature=0, timeout=settings["timeout"], max_retries=int(settings["max_retries"])
            )
        )
    return _models[spec]
