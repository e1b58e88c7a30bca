"""What went wrong with the model, said so that whoever reads it can fix it.

A provider's client fails with its own exceptions (``openai.AuthenticationError``,
``APIConnectionError``, ``NotFoundError``, a ``Missing credentials`` error when
the client is made), which the server hides behind "An internal error occurred".
:func:`explain_call` and :func:`explain_setup` turn the ones caused by the
configuration into :class:`~mnemo.core.ModelUnavailableError`, whose message
names the setting to change; every model call goes through them
(:func:`mnemo.models.within_deadline` and :func:`mnemo.models.aload_chat_model`),
so every client of the server reads the same sentence. Providers are told apart
by what their exceptions carry (an HTTP status, the request's URL), not by
importing each provider's package. A key is never part of a message.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mnemo.core import ModelUnavailableError, env

#: Where every message ends: how to check a fix before users see it.
CHECK = "then restart the server; `python -m mnemo doctor` checks the model as mnemo calls it (docs/models.md)"
#: What a checkout with nothing configured can do instead.
LOCAL = "in a checkout, ./scripts/dev with none of them set serves a local model: MNEMO_LOCAL_MODEL"

#: What the process last said a model lacked (:func:`last_reason`).
_last_reason: str | None = None

_KEY_WORDS = re.compile(r"api[_ -]?key|credential|auth(?:entication|orization)? token", re.IGNORECASE)


def _names(exc: BaseException) -> set[str]:
    return {c.__name__ for c in type(exc).__mro__}


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)  # openai's and anthropic's errors
    if status is None:  # httpx's HTTPStatusError
        status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _request(exc: BaseException) -> Any:
    """The HTTP request that failed (httpx's, which every provider's client uses), or ``None``."""
    try:
        request = getattr(exc, "request", None)
    except RuntimeError:  # httpx raises when an error carries none
        return None
    return request if hasattr(request, "url") and hasattr(request, "content") else None


def _server(exc: BaseException) -> str:
    """The server the failed request went to (scheme, host, port and path up to the API's root)."""
    if (request := _request(exc)) is not None:
        url = request.url
        root = re.sub(r"/(chat/)?completions$|/messages$|/models(/.*)?$", "", url.path)
        return f"{url.scheme}://{url.netloc.decode()}{root}"
    return env.text("OPENAI_BASE_URL") or "the provider's API"


def _model_asked(exc: BaseException) -> str:
    if (request := _request(exc)) is not None:
        try:
            return str(json.loads(request.content or b"{}").get("model") or "")
        except Exception:  # a body not read (streamed) or not JSON: the model is left unnamed
            return ""
    return ""


def _said(error: ModelUnavailableError) -> ModelUnavailableError:
    global _last_reason
    _last_reason = str(error)
    return error


def last_reason() -> str:
    """What this process last found the model lacking, for answers made of an error's type
    alone (A2A's ``message/send``, MCP: :mod:`server.model_errors`); a pointer to the
    doctor when it found nothing yet (the failure happened in another process)."""
    return _last_reason or (
        "the chat model cannot be used as configured; `python -m mnemo doctor`, run where the server runs, says why"
    )


def explain_call(exc: BaseException) -> ModelUnavailableError | None:
    """``exc``, raised by a model call, as the configuration problem it shows;
    ``None`` when it is not one (a bug, a refusal of this request's content)."""
    explained = _explain_call(exc)
    return None if explained is None else _said(explained)


def _explain_call(exc: BaseException) -> ModelUnavailableError | None:
    names, status, server = _names(exc), _status(exc), _server(exc)
    if names & {"APITimeoutError", "TimeoutException"}:  # openai's, anthropic's; httpx's
        return ModelUnavailableError(
            f"the model server at {server} did not answer in time (MNEMO_MODEL_TIMEOUT_S bounds each wait): "
            f"a slow local server may need a longer timeout or a smaller model; {CHECK}"
        )
    if names & {"APIConnectionError", "TransportError"}:
        return ModelUnavailableError(
            f"nobody answers at the model server {server}: start it, or set OPENAI_BASE_URL in .env to a server "
            f"that answers; {CHECK}"
        )
    if status in (401, 403):
        return ModelUnavailableError(
            f"the model server at {server} refused the key (HTTP {status}): set a valid key in .env "
            f"(OPENAI_API_KEY for an openai: model, the provider's own key otherwise); {CHECK}"
        )
    if status == 404:
        asked = _model_asked(exc)
        what = f"the model {asked!r}" if asked else "the model asked for"
        return ModelUnavailableError(
            f"the model server at {server} does not serve {what} (HTTP 404): set MNEMO_MODEL to a model it serves "
            f"(provider:model, e.g. openai:<name listed by its /models>), or fix OPENAI_BASE_URL if it lacks its "
            f"/v1; {CHECK}"
        )
    if status == 429:
        return ModelUnavailableError(
            f"the model server at {server} refuses requests for now (HTTP 429: rate limit or quota of the key); "
            "try again later, or raise the key's quota"
        )
    return None


def _nothing_configured() -> bool:
    return not (env.text("MNEMO_MODEL") or env.text("OPENAI_BASE_URL") or env.text("OPENAI_API_BASE"))


def _no_model_message() -> str:
    return (
        "no chat model is configured: set OPENAI_API_KEY in .env (OpenAI), or OPENAI_BASE_URL and "
        f"MNEMO_MODEL=openai:<model> for any OpenAI-compatible server; {CHECK}; {LOCAL}"
    )


def setup_problem(spec: str) -> str | None:
    """What is missing for ``spec`` that the environment alone shows (an ``openai:``
    model with no key and no server to send it to), else ``None``; said at the
    server's start-up, before any run fails for it. Other providers are judged
    when their client is made (:func:`explain_setup`)."""
    if not spec.startswith("openai:") or env.text("OPENAI_API_KEY"):
        return None
    if _nothing_configured():
        return _no_model_message()
    if not (env.text("OPENAI_BASE_URL") or env.text("OPENAI_API_BASE")):
        return f"the chat model {spec!r} has no key: set OPENAI_API_KEY in .env; {CHECK}"
    return None  # a local server may need no key: langchain's client still wants one, said when it is made


def explain_setup(exc: BaseException, spec: str) -> ModelUnavailableError:
    """``exc``, raised while the client of ``spec`` was made, as what to configure."""
    return _said(_explain_setup(exc, spec))


def _explain_setup(exc: BaseException, spec: str) -> ModelUnavailableError:
    if isinstance(exc, ImportError):
        return ModelUnavailableError(
            f"the chat model {spec!r} needs its provider's package, which is not installed ({exc}); "
            f"install it in the server's environment, or choose another MNEMO_MODEL; {CHECK}"
        )
    if _KEY_WORDS.search(str(exc)):
        if _nothing_configured():
            return ModelUnavailableError(_no_model_message())
        return ModelUnavailableError(
            f"the chat model {spec!r} has no key: set its provider's key in .env (OPENAI_API_KEY for openai:; "
            f"any value for a local server that needs none); {CHECK}"
        )
    return ModelUnavailableError(f"the chat model {spec!r} could not be set up ({type(exc).__name__}: {exc}); {CHECK}")
