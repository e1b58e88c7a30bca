"""End to end through ``./scripts/dev`` against the stub's profiles of the model
servers users run (harness/stub_openai.py, issue 29): llama.cpp's (memory is
written and recalled), one with no structured output at all (a WARNING says
so and the turn still answers), one whose tool calls come back as text
(they still run, a WARNING says what to do), and a model that never stops (the run ends
at its deadline, every request capped)."""

from __future__ import annotations

import asyncio

import pytest

from harness.devserver import DevServer, chat, client, system_prompts, write_dotenv

pytestmark = pytest.mark.e2e

INTRO = "Hi, I'm Lin and I live in Suzhou. I am allergic to peanuts."


def served(workdir, server_env, stub, profile: str, **settings: str) -> DevServer:
    stub.profile = profile
    write_dotenv(workdir, stub, **settings)
    server = DevServer(workdir, server_env)
    server.start()
    return server


async def test_with_llama_cpps_server_what_a_user_said_reaches_the_next_thread(workdir, server_env, stub):
    server = served(workdir, server_env, stub, "llamacpp")
    try:
        lin = client(server, "u_lin")
        run = await chat(lin, INTRO, user_id="u_lin")
        assert run["status"] == "success", server.output()
        run = await chat(lin, "What can I eat tonight?", user_id="u_lin")
        assert run["status"] == "success", server.output()
        prompt = system_prompts(stub)[-1]
        assert 'name: "Lin"' in prompt and 'city: "Suzhou"' in prompt, prompt
        assert "The user is allergic to peanuts." in prompt, prompt
        # Asked the way llama.cpp enforces: a json_schema response format.
        extractions = [r for r in stub.requests if r.get("response_format")]
        assert extractions and extractions[0]["response_format"]["json_schema"]["name"] == "MemoryExtraction"
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


async def test_with_no_structured_output_a_warning_says_why_and_the_turn_answers(workdir, server_env, stub):
    server = served(workdir, server_env, stub, "nostructured")
    try:
        lin = client(server, "u_lin")
        run = await chat(lin, INTRO, user_id="u_lin")
        assert run["status"] == "success", server.output()
        state = await lin.threads.get_state(run["thread_id"])
        assert state["values"]["messages"][-1]["content"] == "ok"
        log = server.output(tail=10**8)
        warned = [line for line in log.splitlines() if "the model server gave no usable structured answer" in line]
        assert warned, log[-4000:]
        assert "warning" in warned[0].lower() and "python -m mnemo doctor" in warned[0], warned[0]
        assert "returned nothing" not in log
    finally:
        server.stop()


async def test_a_tool_call_written_as_text_still_runs_and_the_log_says_what_to_do(workdir, server_env, stub):
    """Qwen2.5-Coder on llama-server (issue 42): the call comes back as a fenced JSON block."""
    server = served(workdir, server_env, stub, "textcalls")
    try:
        lin = client(server, "u_lin")
        run = await chat(lin, "Remember that I keep bees.", user_id="u_lin")
        assert run["status"] == "success", server.output()
        answered = [
            r for r in stub.requests if any(t["function"]["name"] == "remember_note" for t in r.get("tools", []))
        ]
        assert answered  # the precondition: the model was offered the tool (and answered it as text)
        exported = await lin.http.get("/memory/export")
        assert [n["text"] for n in exported["notes"]] == ["I keep bees"], exported["notes"]
        state = await lin.threads.get_state(run["thread_id"])
        assert "remember_note" not in str(state["values"]["messages"][-1]["content"])  # the user reads no JSON
        log = server.output(tail=10**8)
        warned = [line for line in log.splitlines() if "as text instead of tool_calls" in line]
        assert warned and "llama-server --jinja" in warned[0], log[-4000:]
    finally:
        server.stop()


async def test_a_model_that_never_stops_cannot_hold_the_run(workdir, server_env, stub):
    server = served(workdir, server_env, stub, "looping", MNEMO_MODEL_TIMEOUT_S="2")
    try:
        lin = client(server, "u_lin")
        thread = await lin.threads.create()

        async def streamed() -> None:
            async for _ in lin.runs.stream(
                thread["thread_id"],
                "agent",
                input={"messages": [{"role": "user", "content": "Tell me a story."}]},
                context={"user_id": "u_lin"},
                stream_mode="messages-tuple",
            ):
                pass

        # Without a deadline the stream never ends: this guard then fails the test.
        await asyncio.wait_for(streamed(), timeout=120)
        (run,) = await lin.runs.list(thread["thread_id"])
        assert run["status"] == "error", run
        assert "MNEMO_MODEL_TIMEOUT_S" in server.output(tail=10**8)
        assert stub.requests and all(r.get("max_tokens") == 2048 for r in stub.requests), stub.requests[:1]
    finally:
        server.stop()
