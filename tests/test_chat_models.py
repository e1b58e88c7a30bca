"""nodes.chat_models: only allowed models are built (the cache is bounded by
the allow list), and every client gives up on a server that never answers."""

from __future__ import annotations

import asyncio

import pytest

from mnemo import InvalidInputError
from nodes import chat_models
from nodes.chat_models import allowed_models, aload_chat_model


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setattr(chat_models, "_models", {})
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    for name in ("MNEMO_ALLOWED_MODELS", "MNEMO_MODEL", "MNEMO_EXTRACTION_MODEL", "MNEMO_MODEL_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


async def test_only_models_on_the_allow_list_are_built(env):
    env.setenv("MNEMO_MODEL", "openai:gpt-4o-mini")
    assert allowed_models() == {"openai:gpt-4o-mini"}
    await aload_chat_model("openai:gpt-4o-mini")
    for i in range(50):
        with pytest.raises(InvalidInputError, match="not allowed"):
            await aload_chat_model(f"openai:model-{i}")
    assert list(chat_models._models) == ["openai:gpt-4o-mini"]
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:model-7, openai:gpt-4o-mini")
    await aload_chat_model("openai:model-7")
    assert len(chat_models._models) == 2


async def test_a_model_server_that_never_answers_fails_the_call(env):
    accepted: list[asyncio.StreamWriter] = []

    async def accept_and_say_nothing(reader, writer):
        accepted.append(writer)

    server = await asyncio.start_server(accept_and_say_nothing, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    env.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:silent")
    env.setenv("MNEMO_MODEL_TIMEOUT_S", "1")
    env.setenv("MNEMO_MODEL_MAX_RETRIES", "0")
    try:
        model = await aload_chat_model("openai:silent")
        # Without a client timeout this waits forever (the guard below ends the test).
        with pytest.raises(Exception, match="(?i)timed out") as raised:
            await asyncio.wait_for(model.ainvoke("hello"), timeout=60)
        assert not isinstance(raised.value, TimeoutError)  # the client's own timeout, not the guard's
        assert accepted  # the precondition: the request reached the silent server
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("configured", [None, ""])
def test_without_a_configured_model_runs_and_the_allow_list_share_one_default(env, configured):
    from nodes.context import DEFAULT_MODEL, Context

    if configured is not None:
        env.setenv("MNEMO_MODEL", configured)  # as .env.example leaves it
    assert Context(user_id="u").model == DEFAULT_MODEL
    assert allowed_models() == {DEFAULT_MODEL}
    env.setenv("MNEMO_MODEL", "openai:model-7")
    assert Context(user_id="u").model == "openai:model-7" and allowed_models() == {"openai:model-7"}
