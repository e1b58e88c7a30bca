"""mnemo.models.structured: a structured answer by the way the server honours,
learned per model, pinned by MNEMO_STRUCTURED_OUTPUT, and a WARNING (once per
cause, with what the server did and the fix) when no way gives one; against
the stub's profiles of real servers (harness/stub_openai.py)."""

from __future__ import annotations

import json
import logging

import openai
import pytest
from langchain.chat_models import init_chat_model
from langchain_core.messages import AIMessage, SystemMessage

from harness.scripted import ScriptedChatModel, tool_call
from harness.stub_openai import StubServer
from mnemo import InvalidInputError
from mnemo.models import WAYS, StructuredOutputError, ways_for
from mnemo.models.structured import astructured
from mnemo.profile import MAX_FIELD_CHARS
from mnemo.writing import MemoryExtraction, extraction_messages

SAID = extraction_messages(["I'm Lin and I live in Suzhou. I am allergic to peanuts."], [])


def client(stub: StubServer):
    return init_chat_model("openai:stub", base_url=stub.base_url, api_key="not-a-key", max_retries=0)


def asked(stub: StubServer) -> list[str]:
    """How each request asked for structure."""
    out = []
    for r in stub.requests:
        if r.get("response_format"):
            out.append(r["response_format"]["type"])
        elif isinstance(r.get("tool_choice"), dict):
            out.append("named tool_choice")
        else:
            out.append(str(r.get("tool_choice") or "text"))
    return out


async def test_llama_cpp_is_asked_by_the_json_schema_it_enforces():
    with StubServer(profile="llamacpp") as stub:
        model = client(stub)
        found = await astructured(model, MemoryExtraction, SAID, what="memory extraction")
        assert (found.name, found.city, found.notes) == ("Lin", "Suzhou", ["The user is allergic to peanuts."])
        assert asked(stub) == ["json_schema"]


async def test_a_way_the_server_ignores_is_left_for_the_next_and_the_one_that_worked_is_kept(monkeypatch):
    # The default stub ignores response_format (answers "ok") and honours a named tool_choice.
    with StubServer() as stub:
        model = client(stub)
        assert ways_for(model)[0] == "json_schema"
        for _ in range(2):
            assert (await astructured(model, MemoryExtraction, SAID, what="x")).city == "Suzhou"
        assert asked(stub) == ["json_schema", "named tool_choice", "named tool_choice"]
        assert ways_for(model)[0] == "function_calling"


async def test_a_forced_call_asks_for_the_classs_own_tool_and_converts_it_once(monkeypatch):
    """The request offers the function langchain makes of the class, and later
    calls convert nothing again (langchain's tracing metadata did, every call)."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "function_calling")
    with StubServer() as stub:
        model = client(stub)
        assert (await astructured(model, MemoryExtraction, SAID, what="x")).city == "Suzhou"
        made = []
        monkeypatch.setattr(MemoryExtraction, "model_json_schema", lambda *a, **k: made.append(1) or {})
        found = await astructured(model, MemoryExtraction, SAID, what="x")
        assert (found.name, found.city) == ("Lin", "Suzhou") and isinstance(found, MemoryExtraction)
        assert made == []
        monkeypatch.undo()
        assert [r["tools"] for r in stub.requests] == [[convert_to_openai_tool(MemoryExtraction)]] * 2


async def test_a_named_tool_choice_answered_in_text_is_told_apart(monkeypatch, caplog):
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "function_calling")
    with StubServer(profile="llamacpp") as stub:
        with pytest.raises(StructuredOutputError) as raised:
            await astructured(client(stub), MemoryExtraction, SAID, what="memory extraction")
        assert asked(stub) == ["named tool_choice"]  # pinned: nothing else tried
    assert raised.value.causes == [
        ("function_calling", "answered in text instead of calling the function ('Sure, I will keep that in mind.')")
    ]


async def test_a_server_with_no_structured_output_is_warned_about_once_per_cause(caplog):
    caplog.set_level(logging.DEBUG, logger="mnemo.models.structured")
    with StubServer(profile="nostructured") as stub:
        model = client(stub)
        for _ in range(2):
            with pytest.raises(StructuredOutputError):
                await astructured(model, MemoryExtraction, SAID, what="memory extraction")
        assert asked(stub) == ["json_schema", "named tool_choice", "required", "text"] * 2
    records = [r for r in caplog.records if r.name == "mnemo.models.structured"]
    assert [r.levelname for r in records] == ["WARNING", "DEBUG"]
    message = records[0].getMessage()
    for said in (
        "memory extraction: the model server gave no usable structured answer",
        "json_schema: answered, but not with the schema ('ok')",
        "function_calling: answered in text instead of calling the function ('ok')",
        "tool_required: answered in text instead of calling the function ('ok')",
        "text: answered with text that is not JSON of the schema ('ok')",
        "python -m mnemo doctor",
        "MNEMO_STRUCTURED_OUTPUT",
    ):
        assert said in message, message
    assert "returned nothing" not in message


async def test_a_way_the_server_refuses_with_a_4xx_is_left_for_the_next(caplog):
    caplog.set_level(logging.INFO, logger="mnemo.models.structured")
    with StubServer() as stub:
        stub.refuse = "response_format"  # a server that rejects the parameter outright (400)
        found = await astructured(client(stub), MemoryExtraction, SAID, what="x")
        assert found.city == "Suzhou" and asked(stub) == ["json_schema", "named tool_choice"]
    assert "('json_schema', 'refused: OpenAIInvalidRequestError: Error code: 400" in caplog.text


def test_a_pinned_way_that_is_no_way_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "xml")
    with pytest.raises(
        InvalidInputError, match="MNEMO_STRUCTURED_OUTPUT is one of auto, json_schema, function_calling"
    ):
        ways_for(init_chat_model("openai:x", api_key="k"))


async def test_an_answer_cut_at_the_output_cap_is_a_cause_not_a_crash(monkeypatch):
    # A real llama.cpp server with a small model: under the json_schema grammar it
    # repeated itself to the cap, and the client's LengthFinishReasonError failed the write.
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "json_schema")
    with StubServer(profile="looping") as stub:
        model = init_chat_model("openai:stub", base_url=stub.base_url, api_key="k", max_retries=0, max_tokens=4)
        with pytest.raises(StructuredOutputError) as raised:
            await astructured(model, MemoryExtraction, SAID, what="memory extraction")
        cap = stub.requests[0].get("max_tokens") or stub.requests[0].get("max_completion_tokens")
        assert asked(stub) == ["json_schema"] and cap == 4
    ((way, cause),) = raised.value.causes
    assert way == "json_schema" and cause.startswith("the answer reached the output cap before it ended")


async def test_a_remembered_way_that_stops_working_is_tried_once_in_a_call_then_replaced():
    with StubServer() as stub:
        model = client(stub)
        await astructured(model, MemoryExtraction, SAID, what="x")
        assert ways_for(model)[0] == "function_calling"  # the precondition: learned
        stub.requests.clear()
        stub.profile = "nostructured"  # the server changes: nothing works any more
        with pytest.raises(StructuredOutputError) as raised:
            await astructured(model, MemoryExtraction, SAID, what="x")
        assert asked(stub) == ["named tool_choice", "json_schema", "required", "text"]
        assert [way for way, _ in raised.value.causes] == ["function_calling", "json_schema", "tool_required", "text"]
        stub.requests.clear()
        stub.profile = "llamacpp"  # then only json_schema does
        assert (await astructured(model, MemoryExtraction, SAID, what="x")).city == "Suzhou"
        assert asked(stub) == ["named tool_choice", "json_schema"]
        assert ways_for(model)[0] == "json_schema"


async def test_a_pinned_way_holds_for_every_call_also_once_it_worked(monkeypatch):
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "function_calling")
    with StubServer() as stub:
        model = client(stub)
        assert (await astructured(model, MemoryExtraction, SAID, what="x")).city == "Suzhou"
        stub.profile = "llamacpp"  # the pinned way stops working; json_schema would
        for _ in range(2):
            with pytest.raises(StructuredOutputError) as raised:
                await astructured(model, MemoryExtraction, SAID, what="x")
            assert [way for way, _ in raised.value.causes] == ["function_calling"]
        assert asked(stub) == ["named tool_choice"] * 3
    assert ways_for(model) == ["function_calling"]


@pytest.mark.parametrize(
    ("status", "moves_on"),
    [(400, True), (422, True), (401, False), (403, False), (404, False), (408, False), (429, False)],
)
async def test_only_a_refusal_of_the_parameter_moves_to_the_next_way(status, moves_on):
    with StubServer() as stub:
        stub.refuse, stub.refuse_status = "response_format", status
        if moves_on:  # the parameter refused: the next way is asked
            assert (await astructured(client(stub), MemoryExtraction, SAID, what="x")).city == "Suzhou"
            assert asked(stub) == ["json_schema", "named tool_choice"]
            return
        # Auth, not found, timeout, rate limit: no way would fare better.
        with pytest.raises(openai.APIStatusError) as raised:
            await astructured(client(stub), MemoryExtraction, SAID, what="x")
        assert raised.value.status_code == status
        assert asked(stub) == ["json_schema"]


async def test_a_call_of_another_function_is_no_extraction_and_its_way_is_not_remembered(caplog):
    caplog.set_level(logging.INFO, logger="mnemo.models.structured")
    called = "called 'lookup_order' instead of the function MemoryExtraction"
    model = ScriptedChatModel(respond=lambda messages, tools: tool_call("lookup_order", order_id="A-1234"))
    with pytest.raises(StructuredOutputError) as raised:
        await astructured(model, MemoryExtraction, SAID, what="x")
    assert len(model.calls) == len(WAYS)  # the precondition: every way was asked
    assert dict(raised.value.causes)["tool_required"] == called and ways_for(model) == list(WAYS)

    def calls_another(messages, tools):  # offered a function, it calls one it was not offered
        if tools:
            return tool_call("lookup_order", order_id="A-1234")
        return AIMessage('{"name": "Lin", "city": "Suzhou"}')  # the text way: it follows the instructions

    model = ScriptedChatModel(respond=calls_another)
    caplog.clear()
    found = await astructured(model, MemoryExtraction, SAID, what="x")
    assert (found.name, found.city) == ("Lin", "Suzhou")
    assert ways_for(model)[0] == "text"  # the forced call's way is not remembered as working
    assert [c["tool_names"] for c in model.calls] == [["MemoryExtraction"]] * 3 + [[]]
    assert f"('function_calling', \"{called}\"), ('tool_required', \"{called}\")" in caplog.text


@pytest.mark.parametrize(
    "answer",
    [
        {"city": "Suzhou " * 715},  # 5,005 characters
        {"notes": "The user is allergic to peanuts."},  # a string, not a list
        {"city": 7, "notes": []},
    ],
)
async def test_a_json_schema_answer_is_validated_against_the_schema_before_it_is_used(monkeypatch, answer):
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "json_schema")
    with StubServer(profile="llamacpp") as stub:
        stub.schema_answer = json.dumps(answer)
        if "Suzhou" in str(answer.get("city")):  # valid once cut to the schema's maxLength
            found = await astructured(client(stub), MemoryExtraction, SAID, what="x")
            assert len(answer["city"]) > 5000 and found.city == answer["city"][:MAX_FIELD_CHARS]
            return
        with pytest.raises(StructuredOutputError) as raised:
            await astructured(client(stub), MemoryExtraction, SAID, what="x")
        assert asked(stub) == ["json_schema"]  # the precondition: the answer came
    assert raised.value.causes == [("json_schema", "answered JSON not of the schema (ValidationError)")]


async def test_the_last_way_writes_the_schema_into_the_instructions_a_model_can_follow():
    schema = json.dumps(
        {k: v for k, v in MemoryExtraction.model_json_schema().items() if k not in ("title", "type")},
        ensure_ascii=False,
    )

    def follows_instructions(messages, tools):
        # A model with no tool calls or constrained output that does what its instructions say.
        if not tools and isinstance(messages[0], SystemMessage) and schema in messages[0].text:
            return AIMessage('{"name": "Lin", "city": "Suzhou", "notes": ["The user is allergic to peanuts."]}')
        return AIMessage("Sure, I will keep that in mind.")

    model = ScriptedChatModel(respond=follows_instructions)
    found = await astructured(model, MemoryExtraction, SAID, what="x")
    assert (found.name, found.city, found.notes) == ("Lin", "Suzhou", ["The user is allergic to peanuts."])
    assert ways_for(model)[0] == "text"
    assert len(model.calls) == len(WAYS)  # the other ways were asked first
    text_asked = model.calls[-1]["messages"]
    # The schema is in the instructions, the user's words stay the data they were.
    assert text_asked[0].text.startswith(SAID[0].text) and text_asked[1:] == SAID[1:]
