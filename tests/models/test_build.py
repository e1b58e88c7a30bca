"""mnemo.models.build (through nodes.chat_models): only allowed models are built
(the cache is bounded by the allow list), every client gives up on a server that
never answers, every request carries an output cap, and a call that streams
forever ends at its deadline."""

from __future__ import annotations

import asyncio
import time

import pytest

from mnemo import InvalidInputError
from mnemo.models import within_deadline
from mnemo.models.build import DEFAULT_MAX_TOKENS, MODELS, ModelDeadlineError
from nodes.chat_models import allowed_models, aload_chat_model


@pytest.fixture
def env(monkeypatch):
    saved = dict(MODELS)
    MODELS.clear()
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    for name in (
        "MNEMO_ALLOWED_MODELS",
        "MNEMO_MODEL",
        "MNEMO_EXTRACTION_MODEL",
        "MNEMO_MODEL_TIMEOUT_S",
        "MNEMO_MODEL_MAX_TOKENS",
        "OPENAI_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch
    MODELS.clear()
    MODELS.update(saved)


async def test_only_models_on_the_allow_list_are_built(env):
    env.setenv("MNEMO_MODEL", "openai:gpt-4o-mini")
    assert allowed_models() == {"openai:gpt-4o-mini"}
    await aload_chat_model("openai:gpt-4o-mini")
    for i in range(50):
        with pytest.raises(InvalidInputError, match="not allowed"):
            await aload_chat_model(f"openai:model-{i}")
    assert list(MODELS) == ["openai:gpt-4o-mini"]
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:model-7, openai:gpt-4o-mini")
    await aload_chat_model("openai:model-7")
    assert len(MODELS) == 2


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


async def test_a_stream_may_be_silent_as_long_as_the_deadline_allows(env):
    """langchain-openai's own limit on a silent stream (120 s) would end a reply
    a CPU server is still reading the prompt of (issue 55): mnemo's deadline governs."""
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:slow")
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    env.setenv("MNEMO_MODEL_TIMEOUT_S", "300")
    model = await aload_chat_model("openai:slow")
    assert model.stream_chunk_timeout == 300


@pytest.mark.parametrize("configured", [None, ""])
def test_without_a_configured_model_runs_and_the_allow_list_share_one_default(env, configured):
    from nodes.context import DEFAULT_MODEL, Context

    if configured is not None:
        env.setenv("MNEMO_MODEL", configured)  # as .env.example leaves it
    assert Context(user_id="u").model == DEFAULT_MODEL
    assert allowed_models() == {DEFAULT_MODEL}
    env.setenv("MNEMO_MODEL", "openai:model-7")
    assert Context(user_id="u").model == "openai:model-7" and allowed_models() == {"openai:model-7"}


async def test_every_request_carries_an_output_cap(env, stub):
    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:capped")
    await (await aload_chat_model("openai:capped")).ainvoke("hello")
    env.setenv("MNEMO_MODEL_MAX_TOKENS", "300")
    MODELS.clear()
    model = await aload_chat_model("openai:capped")
    await model.ainvoke("hello")
    async for _ in model.astream("hello"):
        pass
    # OpenAI-compatible servers (llama.cpp, Ollama) read max_tokens, not max_completion_tokens.
    assert [r.get("max_tokens") for r in stub.requests] == [DEFAULT_MAX_TOKENS, 300, 300]


async def test_memory_calls_carry_their_own_smaller_cap_and_a_registered_model_serves_them(env, stub):
    from mnemo.models.build import DEFAULT_MEMORY_MAX_TOKENS
    from nodes.chat_models import aload_memory_model

    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:capped")
    reply = await aload_chat_model("openai:capped")
    memory = await aload_memory_model(type("Ctx", (), {"model": "openai:capped", "extraction_model": ""})())
    await reply.ainvoke("hello")
    await memory.ainvoke("hello")
    assert DEFAULT_MEMORY_MAX_TOKENS < DEFAULT_MAX_TOKENS
    assert [r.get("max_tokens") for r in stub.requests] == [DEFAULT_MAX_TOKENS, DEFAULT_MEMORY_MAX_TOKENS]
    registered = object()
    MODELS["openai:mine"] = registered
    assert await aload_chat_model("openai:mine", memory=True) is registered


async def test_a_memory_call_is_neither_streamed_nor_in_the_runs_messages_stream(env, stub):
    """A run streamed in ``messages`` mode (every web UI) shows the reply, never
    the extraction's JSON; the memory client's request is not streamed."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    from nodes.chat_models import aload_memory_model

    env.setenv("OPENAI_BASE_URL", stub.base_url)
    env.setenv("MNEMO_ALLOWED_MODELS", "openai:both")

    async def node(state: MessagesState) -> dict:
        memory = await aload_memory_model(type("Ctx", (), {"model": "openai:both", "extraction_model": ""})())
        await memory.ainvoke("the memory call")
        return {"messages": [await (await aload_chat_model("openai:both")).ainvoke("the reply")]}

    graph = StateGraph(MessagesState).add_node("node", node).add_edge(START, "node").add_edge("node", END).compile()
    streamed = [
        (chunk.id, meta.get("tags"))
        async for chunk, meta in graph.astream({"messages": []}, stream_mode="messages")
        if meta["langgraph_node"] == "node"
    ]
    asked = {r["messages"][-1]["content"]: r for r in stub.requests}
    assert set(asked) == {"the memory call", "the reply"}
    assert asked["the reply"].get("stream") is True and streamed  # the precondition: the reply is streamed, and seen
    assert not asked["the memory call"].get("stream")
    assert len({chunk_id for chunk_id, _ in streamed}) == 1  # one message: the reply's chunks, none of the memory call


def test_openais_own_api_gets_its_own_cap_name(env):
    from mnemo.models.build import cap_arguments

    assert cap_arguments("openai:gpt-4o-mini", 100) == {"max_tokens": 100}  # sent as max_completion_tokens
    env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert cap_arguments("openai:local", 100) == {"extra_body": {"max_tokens": 100}}
    assert cap_arguments("anthropic:claude", 100) == {"max_tokens": 100}


async def test_a_model_that_streams_forever_ends_at_the_deadline(env):
    from harness.stub_openai import StubServer

    env.setenv("MNEMO_ALLOWED_MODELS", "openai:looping")
    env.setenv("MNEMO_MODEL_TIMEOUT_S", "1")
    env.setenv("MNEMO_MODEL_MAX_TOKENS", "100000")  # the cap is far: the deadline ends it
    with StubServer(profile="looping") as looping:
        env.setenv("OPENAI_BASE_URL", looping.base_url)
        model = await aload_chat_model("openai:looping")
        chunks = []

        async def stream() -> None:
            async for chunk in model.astream("hello"):
                chunks.append(chunk)

        # The client's own timeout never fires: a word arrives every 0.05 s.
        with pytest.raises(ModelDeadlineError, match="MNEMO_MODEL_TIMEOUT_S"):
            await asyncio.wait_for(within_deadline(stream()), timeout=60)  # the guard ends the test otherwise
        assert len(chunks) > 1  # the precondition: it was streaming when cut off


@pytest.mark.parametrize(
    ("variable", "base", "sent"),
    [
        (None, None, "max_completion_tokens"),
        ("OPENAI_BASE_URL", "https://api.openai.com/v1", "max_completion_tokens"),
        ("OPENAI_API_BASE", "https://api.openai.com/v1", "max_completion_tokens"),
        ("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1", "max_tokens"),
        ("OPENAI_API_BASE", "http://localhost:11434/v1", "max_tokens"),
    ],
)
def test_openais_own_api_is_sent_max_completion_tokens_and_other_servers_max_tokens(env, variable, base, sent):
    from langchain_core.messages import HumanMessage

    from mnemo.models.build import build_chat_model

    env.delenv("OPENAI_API_BASE", raising=False)
    if variable:
        env.setenv(variable, base)
    env.setenv("MNEMO_MODEL_MAX_TOKENS", "300")
    payload = build_chat_model("openai:gpt-4o-mini")._get_request_payload([HumanMessage("hello")])
    body = {**payload, **payload.pop("extra_body", {})}  # the openai client merges extra_body into the body
    assert {k: v for k, v in body.items() if k in ("max_tokens", "max_completion_tokens")} == {sent: 300}


async def test_a_call_given_a_later_deadline_still_ends_at_mnemo_model_timeout_s(env):
    env.setenv("MNEMO_MODEL_TIMEOUT_S", "1")
    started = time.monotonic()
    # A memory call's own deadline (extraction_timeout_s) above the global one.
    with pytest.raises(ModelDeadlineError, match=r"within 1s"):
        await asyncio.wait_for(within_deadline(asyncio.sleep(60), timeout_s=30), timeout=6)  # the guard
    assert time.monotonic() - started < 5
    # And its own when it is the sooner.
    with pytest.raises(ModelDeadlineError, match=r"within 0.2s"):
        await within_deadline(asyncio.sleep(60), timeout_s=0.2)


def _counting_conversions(monkeypatch) -> list[str]:
    """Names of the tools and schemas langchain-openai converts to its format, as it does them."""
    import langchain_openai.chat_models.base as openai_base

    done: list[str] = []
    convert = openai_base.convert_to_openai_tool

    def counting(tool, *args, **kwargs):
        out = convert(tool, *args, **kwargs)
        done.append(out["function"]["name"])
        return out

    monkeypatch.setattr(openai_base, "convert_to_openai_tool", counting)
    return done


def test_tools_are_bound_to_a_model_once_whatever_the_calls(monkeypatch):
    from langchain_openai import ChatOpenAI

    from mnemo.models import with_tools
    from nodes.tools import MODEL_TOOLS

    done = _counting_conversions(monkeypatch)
    model = ChatOpenAI(model="m", api_key="not-a-key", base_url="http://127.0.0.1:9")
    first = with_tools(model, MODEL_TOOLS)
    assert sorted(done) == sorted(t.name for t in MODEL_TOOLS)  # bound: every tool converted
    assert with_tools(model, MODEL_TOOLS) is first and len(done) == len(MODEL_TOOLS)  # not again
    fewer = with_tools(model, MODEL_TOOLS[:1])  # another list is its own binding, with its tools only
    assert fewer is not first and [t["function"]["name"] for t in fewer.kwargs["tools"]] == [MODEL_TOOLS[0].name]
    other = ChatOpenAI(model="m", api_key="not-a-key", base_url="http://127.0.0.1:9")  # equal, not the same
    assert with_tools(other, MODEL_TOOLS) is not first


def test_a_structured_answer_is_asked_through_one_runnable_per_model_schema_and_way(monkeypatch):
    from langchain_openai import ChatOpenAI

    from mnemo.models.structured import _runnable
    from mnemo.writing import MemoryExtraction

    done = _counting_conversions(monkeypatch)
    model = ChatOpenAI(model="m", api_key="not-a-key", base_url="http://127.0.0.1:9")
    made = _runnable(model, MemoryExtraction, "function_calling")
    converted = len(done)
    assert converted and set(done) == {"MemoryExtraction"}  # made: the schema converted
    assert _runnable(model, MemoryExtraction, "function_calling") is made and len(done) == converted  # not again
    assert _runnable(model, MemoryExtraction, "tool_required") is not made  # another way, its own


def test_what_is_made_of_models_is_kept_within_its_bound():
    from mnemo.models import build

    models = [object() for _ in range(build.MADE_KEPT + 10)]
    for m in models:
        build.made_once((m, "x"), lambda: "made")
    assert len(build._made) <= build.MADE_KEPT
    calls = []
    build.made_once((models[-1], "x"), lambda: calls.append(1))  # the newest is still kept
    assert calls == []
