"""mnemo.models.unavailable: a model that is missing or wrong fails with a
ModelUnavailableError that says what to set, through the real client
(langchain-openai against a local server), never the provider's bare error."""

from __future__ import annotations

import importlib.util

import pytest
from langchain_core.messages import HumanMessage

from harness.devserver import free_port
from harness.stub_openai import StubServer
from mnemo import ModelUnavailableError
from mnemo.models import within_deadline
from mnemo.models.build import build_chat_model

SECRET_KEY = "sk-secret-0123456789abcdef"


@pytest.fixture
def env(monkeypatch):
    for name in ("MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE", "MNEMO_MODEL_MAX_RETRIES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MNEMO_MODEL_MAX_RETRIES", "0")
    return monkeypatch


async def _call(spec: str = "openai:stub-model") -> str:
    model = build_chat_model(spec)
    with pytest.raises(ModelUnavailableError) as caught:
        await within_deadline(model.ainvoke([HumanMessage("hi")]))
    return str(caught.value)


def test_nothing_configured_says_what_to_set(env):
    with pytest.raises(ModelUnavailableError) as caught:
        build_chat_model("openai:gpt-4o-mini")
    said = str(caught.value)
    assert said.startswith("no chat model is configured")
    assert "OPENAI_API_KEY" in said and "OPENAI_BASE_URL" in said and "mnemo doctor" in said


def test_a_configured_model_without_its_key_names_the_key(env):
    env.setenv("MNEMO_MODEL", "openai:gpt-4o-mini")
    with pytest.raises(ModelUnavailableError, match="has no key: set its provider's key"):
        build_chat_model("openai:gpt-4o-mini")


def test_a_provider_whose_package_is_missing_says_to_install_it(env):
    # langchain-anthropic is not a dependency of mnemo: init_chat_model raises ImportError.
    if importlib.util.find_spec("langchain_anthropic") is not None:
        pytest.skip("langchain-anthropic is installed here")
    with pytest.raises(ModelUnavailableError, match="needs its provider's package"):
        build_chat_model("anthropic:claude-x")


async def test_a_refused_key_is_named_and_never_shown(env):
    with StubServer() as stub:
        stub.refuse, stub.refuse_status = "model", 401  # every request carries "model": all refused
        env.setenv("OPENAI_API_KEY", SECRET_KEY)
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        said = await _call()
        assert stub.requests, "the request reached the server"
    assert "refused the key (HTTP 401)" in said and stub.base_url in said
    assert SECRET_KEY not in said and SECRET_KEY[:8] not in said


async def test_a_model_the_server_does_not_serve_is_named(env):
    with StubServer() as stub:
        stub.refuse, stub.refuse_status = "model", 404
        env.setenv("OPENAI_API_KEY", "k")
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        said = await _call("openai:no-such-model")
    assert "does not serve the model 'no-such-model' (HTTP 404)" in said and "MNEMO_MODEL" in said


async def test_a_server_nobody_answers_names_the_url(env):
    url = f"http://127.0.0.1:{free_port()}/v1"
    env.setenv("OPENAI_API_KEY", "k")
    env.setenv("OPENAI_BASE_URL", url)
    said = await _call()
    assert said.startswith(f"nobody answers at the model server {url}")
    assert "OPENAI_BASE_URL" in said


async def test_other_failures_are_left_as_they_are(env):
    # A 400 is about the request (a parameter the server does not know), not the configuration.
    with StubServer() as stub:
        stub.refuse = "model"  # status 400
        env.setenv("OPENAI_API_KEY", "k")
        env.setenv("OPENAI_BASE_URL", stub.base_url)
        model = build_chat_model("openai:stub-model")
        with pytest.raises(Exception) as caught:
            await within_deadline(model.ainvoke([HumanMessage("hi")]))
    assert getattr(caught.value, "status_code", None) == 400
    assert not isinstance(caught.value, ModelUnavailableError)
