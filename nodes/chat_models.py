"""Chat models of the run: mnemo's one way to build them (:mod:`mnemo.models`:
allow list, timeouts, retries, output cap; built once per process)."""

from __future__ import annotations

from mnemo.models import MODELS as _models  # tests and benchmarks register scripted models here
from mnemo.models import allowed_models, aload_chat_model, client_settings

__all__ = ["_models", "allowed_models", "aload_chat_model", "client_settings"]
