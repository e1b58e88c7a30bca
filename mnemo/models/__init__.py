"""Chat models as mnemo uses them: one way to build them (allow list,
timeouts, retries, output cap), a deadline for every call, and structured
answers from whatever server is configured (docs/models.md)."""

from mnemo.models.bounds import Bound
from mnemo.models.build import (
    DEFAULT_MODEL,
    MODELS,
    allowed_models,
    aload_chat_model,
    cap_arguments,
    client_settings,
    configured_extraction_model,
    configured_memory_model,
    configured_model,
    memory_model,
    model_timeout_s,
    with_tools,
    within_deadline,
)
from mnemo.models.structured import (
    WAYS,
    Structured,
    StructuredOutputError,
    attempt,
    pinned_way,
    ways_for,
)
from mnemo.models.text_calls import recover_tool_calls
from mnemo.models.unavailable import last_reason, setup_problem

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "WAYS",
    "Bound",
    "Structured",
    "StructuredOutputError",
    "allowed_models",
    "aload_chat_model",
    "attempt",
    "cap_arguments",
    "client_settings",
    "configured_extraction_model",
    "configured_memory_model",
    "configured_model",
    "last_reason",
    "memory_model",
    "model_timeout_s",
    "pinned_way",
    "recover_tool_calls",
    "setup_problem",
    "ways_for",
    "with_tools",
    "within_deadline",
]
