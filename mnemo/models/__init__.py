"""Chat models as mnemo uses them: one way to build them (allow list,
timeouts, retries, output cap), a deadline for every call, and structured
answers from whatever server is configured, and the local model ``./scripts/dev``
serves when none is (docs/models.md)."""

from mnemo.models import local_server
from mnemo.models.bounds import Bound
from mnemo.models.build import (
    DEFAULT_MODEL,
    allowed_models,
    aload_chat_model,
    client_settings,
    configured_extraction_model,
    configured_memory_model,
    configured_model,
    memory_model,
    model_timeout_s,
    with_tools,
    within_deadline,
)
from mnemo.models.local_weights import (
    LOCAL_MODELS,
    LocalModel,
    configured_local_model,
    local_cache_dir,
)
from mnemo.models.local_weights import cached_model as cached_local_model
from mnemo.models.local_weights import prepare as prepare_local_model
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
    "LOCAL_MODELS",
    "WAYS",
    "Bound",
    "LocalModel",
    "Structured",
    "StructuredOutputError",
    "allowed_models",
    "aload_chat_model",
    "attempt",
    "cached_local_model",
    "client_settings",
    "configured_extraction_model",
    "configured_local_model",
    "configured_memory_model",
    "configured_model",
    "last_reason",
    "local_cache_dir",
    "local_server",
    "memory_model",
    "model_timeout_s",
    "pinned_way",
    "prepare_local_model",
    "recover_tool_calls",
    "setup_problem",
    "ways_for",
    "with_tools",
    "within_deadline",
]
