"""The environment variables mnemo reads, declared once, and the only place
that reads them (tests/core/test_env.py scans the product for others).

Each variable is a :class:`Setting` (name, default, one-line doc); callers use
the typed accessors below, which keep each variable's parsing as it was: an
unset or empty value is the default, and a value that cannot be parsed raises
:class:`~mnemo.core.errors.InvalidInputError` naming the variable, except
where noted. Values are read on every call (never cached at import), so a
changed environment takes effect on the next call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mnemo.core.errors import InvalidInputError
from mnemo.core.limits import clamp


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, its default (``""``: none) and what it sets."""

    name: str
    default: str
    doc: str


_DECLARED = (
    Setting("MNEMO_MODEL", "", "the chat model (default: mnemo.models' DEFAULT_MODEL)"),
    Setting("MNEMO_EXTRACTION_MODEL", "", "the model of memory calls (empty: the chat model)"),
    Setting("MNEMO_ALLOWED_MODELS", "", "comma-separated models a run may choose (empty: the configured ones)"),
    Setting("MNEMO_MODEL_TIMEOUT_S", "", "seconds one model call may take in all"),
    Setting("MNEMO_MODEL_MAX_RETRIES", "", "retries of one model call"),
    Setting("MNEMO_MODEL_MAX_TOKENS", "", "the answer cap of chat calls"),
    Setting("MNEMO_MEMORY_MAX_TOKENS", "", "the answer cap of memory calls"),
    Setting("MNEMO_STRUCTURED_OUTPUT", "auto", "the structured-output way to pin (auto: try them)"),
    Setting("OPENAI_BASE_URL", "", "an OpenAI-compatible model server"),
    Setting("OPENAI_API_BASE", "", "the older name of OPENAI_BASE_URL"),
    Setting("MNEMO_LOCAL_MODEL", "", "the local model ./scripts/dev serves when none is configured (off: none)"),
    Setting("MNEMO_CACHE_DIR", "", "where local models are cached (empty: $XDG_CACHE_HOME/mnemo/models)"),
    Setting("XDG_CACHE_HOME", "", "the user's cache directory (empty: ~/.cache)"),
    Setting("OPENAI_API_KEY", "", "the model server's key (the local model's, when ./scripts/dev serves one)"),
    Setting("MNEMO_PGDATA", "", "the embedded PostgreSQL's data directory"),
    Setting("POSTGRES_URI", "", "an external PostgreSQL (instead of the embedded one)"),
    Setting("MNEMO_JWT_SECRET", "", "the secret tokens are signed with"),
    Setting("MNEMO_SOURCE_TOKEN", "", "the token to read a source server's memory with"),
    Setting("MNEMO_URL", "", "the LangGraph server the CLI talks to"),
    Setting("MNEMO_TOKEN", "", "the CLI's bearer token"),
    Setting("MNEMO_MAX_RUNS_PER_USER", "3", "runs one user may have in progress (1-100)"),
    Setting("MNEMO_DEV_LOGIN", "", "1: development sign-in is on"),
    Setting("MNEMO_DEV_LOGIN_CODE", "", "the code development sign-in asks for (empty: nobody signs in)"),
    Setting("MNEMO_DEV_CORS_ORIGINS", "", "more development CORS origins"),
    Setting("CORS_CONFIG", "", "the langgraph server's own CORS configuration"),
)
#: Name -> declaration of every variable mnemo reads.
SETTINGS: dict[str, Setting] = {s.name: s for s in _DECLARED}


def raw(name: str) -> str | None:
    """``name``'s value as set (``None``: unset); ``name`` must be declared.

    Raises:
        KeyError: ``name`` is not in :data:`SETTINGS`.
    """
    return os.environ.get(SETTINGS[name].name)


def text(name: str, *, strip: bool = False) -> str:
    """``name``'s value (``strip``: without surrounding blanks), else its default."""
    value = raw(name) or ""
    if strip:
        value = value.strip()
    return value or SETTINGS[name].default


def number(name: str, default: float, lo: float, hi: float, *, integer: bool = False) -> float:
    """``name`` as a number clamped to ``[lo, hi]`` (unset or empty: ``default``).

    Raises:
        InvalidInputError: not a finite number (the message names ``name``).
    """
    return clamp(name, raw(name) or default, lo, hi, integer=integer)


def names(name: str) -> set[str]:
    """``name`` as a comma-separated set (blanks dropped)."""
    return {part.strip() for part in text(name).split(",") if part.strip()}


def choice(name: str, allowed: tuple[str, ...]) -> str:
    """``name`` (stripped; unset: its default), one of ``allowed``.

    Raises:
        InvalidInputError: another value (the message names ``name``).
    """
    value = (raw(name) or SETTINGS[name].default).strip()
    if value not in allowed:
        raise InvalidInputError(f"{name} is one of {', '.join(allowed)}; got {value!r}")
    return value


def bounded_int(name: str, lo: int, hi: int) -> int:
    """``name`` as an int within ``[lo, hi]``; an unreadable value is the default
    (lenient, unlike :func:`number`: a server keeps serving with a typo here)."""
    default = int(SETTINGS[name].default)
    try:
        return min(max(int(raw(name) or default), lo), hi)
    except ValueError:
        return default


def flag(name: str) -> bool:
    """Whether ``name`` is exactly ``1``."""
    return raw(name) == "1"
