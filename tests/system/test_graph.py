"""The compiled agent graph with a scripted chat model and the real embedder."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from graphs.agent import builder
from harness.scripted import tool_call
from mnemo import MissingUserError, User, aget_profile, alist_notes
from tests.agent_harness import chat_prompts, extraction_prompts, memory_block, naive_extraction, said_in, say


async def test_thread_two_sees_what_thread_one_learned(agent, model, store):
    await say(agent, "Hi, I'm Zhou and I live in Hangzhou.", thread="t1")
    assert "no profile yet" in chat_prompts(model)[0]
    await say(agent, "What's the shipping time to my city?", thread="t2")
    assert 'city: "Hangzhou"' in chat_prompts(model)[-1]
    assert 'name: "Zhou"' in chat_prompts(model)[-1]


async def test_users_are_isolated(agent, model, store):
    await say(agent, "I live in Hangzhou.", user="alice", thread="a1")
    assert (await aget_profile(store, User.of("alice")))["city"]["value"] == "Hangzhou"  # it was stored
    await say(agent, "Where do I live?", user="bob", thread="b1")
    assert "no profile yet" in chat_prompts(model)[-1]  # bob's memory loaded, and it is empty
    assert "Hangzhou" not in chat_prompts(model)[-1]
    assert await aget_profile(store, User.of("bob")) == {}


async def test_an_assistant_guess_never_becomes_a_user_fact(agent, model, store, script):
    script.chat = lambda messages: AIMessage(content="Since you live in Shanghai, delivery takes 2 days.")
    await say(agent, "How long does delivery take? I'm Zhou.")
    await say(agent, "Thanks!")
    prompts = extraction_prompts(model)
    assert prompts and "I'm Zhou" in prompts[0]  # the extractor ran on this turn's user words
    assert all("Shanghai" not in p for p in prompts)
    profile = await aget_profile(store, User.of("u_zhou"))
    assert profile["name"]["value"] == "Zhou" and "city" not in profile


async def test_only_this_turns_user_messages_are_extracted(agent, model):
    await say(agent, "I live in Hangzhou.")
    assert "I live in Hangzhou." in extraction_prompts(model)[-1]  # a turn's words do reach its extraction
    await say(agent, "Thanks!")
    prompts = extraction_prompts(model)
    assert len(prompts) == 2 and "Thanks!" in prompts[-1]
    assert "Hangzhou" not in prompts[-1]


async def test_forgetting_a_field_through_the_graph(agent, model, store):
    await say(agent, "I live in Hangzhou. I'm Zhou.")
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    await say(agent, "Please forget where I live.")
    profile = await aget_profile(store, User.of("u_zhou"))
    assert "city" not in profile and profile["name"]["value"] == "Zhou"  # only the field asked for


@pytest.mark.parametrize("failure", ["none", "exception", "timeout"])
async def test_extractor_failure_skips_the_write_and_the_turn_succeeds(agent, model, store, script, failure):
    def broken(messages, tool_names):
        if failure == "exception":
            raise RuntimeError("extractor down")
        if failure == "timeout":
            # A valid extraction that arrives too late must still be cut off.
            # (The scripted model runs on the event loop: a blocking sleep
            # would hold the timeout too, so it sleeps in a thread.)
            return slow_valid_extraction(messages, tool_names)
        return AIMessage(content="no tool call at all")  # structured output -> None

    def slow_valid_extraction(messages, tool_names):
        import time

        time.sleep(1.0)
        return naive_extraction(messages, tool_names)

    script.extract = broken
    out = await say(agent, "I live in Hangzhou.", extraction_timeout_s=0.2)
    assert out["messages"][-1].content == "ok"
    assert await aget_profile(store, User.of("u_zhou")) == {}
    assert out.get("memory_cursor", 0) == 0  # pending: retried next turn
    script.extract = naive_extraction
    await say(agent, "Thanks!")
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"


async def test_missing_user_id_fails_at_once(agent, model):
    with pytest.raises(MissingUserError, match="user_id"):
        await say(agent, "hello", user="")
    assert model.calls == []


async def test_authenticated_identity_wins(agent, model, store):
    real = {"langgraph_auth_user_id": "real", "langgraph_auth_user": {"identity": "real", "role": "user"}}
    await say(agent, "I live in Hangzhou.", user="spoofed", config=real)
    assert (await aget_profile(store, User.of("real")))["city"]["value"] == "Hangzhou"
    assert await aget_profile(store, User.of("spoofed")) == {}


async def test_email_user_ids_work_end_to_end(agent, model, store):
    await say(agent, "I live in Hangzhou.", user="zhou.wang@x.com")
    await say(agent, "hi", user="zhou.wang@x.com", thread="t2")
    assert "Hangzhou" in chat_prompts(model)[-1]


async def test_tools_remember_recall_forget_and_policy(agent, model, store, script):
    steps = iter(
        [
            tool_call("remember_note", text="The user is allergic to peanuts."),
            AIMessage(content="Noted."),
            tool_call("search_policy", query="how long is the refund window?"),
            AIMessage(content="30 days."),
            tool_call("recall_notes", query="food allergies"),
            AIMessage(content="Peanuts."),
            tool_call("forget_note", about="peanut allergy"),
            AIMessage(content="Forgotten."),
        ]
    )
    script.chat = lambda messages: next(steps)
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    out = await say(agent, "Remember that I'm allergic to peanuts.")
    # The tool answers at once; the note is written after the reply, in the same run.
    assert "Will be remembered" in out["messages"][-2].content
    assert not out.get("pending_notes")
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user is allergic to peanuts."]
    out = await say(agent, "What is the refund window?")
    answer = json.loads(out["messages"][-2].content)  # compact: title and text, read again by the model
    assert any(h["title"] == "Refund window" for h in answer) and all(set(hit) == {"title", "text"} for hit in answer)
    assert "\n" not in out["messages"][-2].content
    out = await say(agent, "What am I allergic to?")
    assert "peanuts" in out["messages"][-2].content
    out = await say(agent, "Forget my peanut allergy.")
    assert "Deleted" in out["messages"][-2].content
    assert await alist_notes(store, User.of("u_zhou")) == []


async def test_malformed_tool_arguments_are_reported_to_the_model(agent, model, store, script):
    steps = iter(
        [
            tool_call("remember_note", wrong_arg=1),
            AIMessage(content="sorry"),
            tool_call("remember_note", text="x" * 5000),
            AIMessage(content="sorry"),
        ]
    )
    script.chat = lambda messages: next(steps)
    out = await say(agent, "remember this")
    errors = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert errors and "text" in errors[0].content and out["messages"][-1].content == "sorry"
    out = await say(agent, "remember this long thing")
    assert "limited to" in [m for m in out["messages"] if isinstance(m, ToolMessage)][-1].content
    assert await alist_notes(store, User.of("u_zhou")) == []


def test_no_tool_shows_a_user_field_to_the_model():
    from nodes.tools import MODEL_TOOLS

    for t in MODEL_TOOLS:
        props = t.tool_call_schema.model_json_schema().get("properties", {})
        assert props, t.name
        assert not {p for p in props if "user" in p.lower() or p == "runtime"}, (t.name, props)


async def test_a_failing_store_costs_memory_not_the_answer(model):
    from langgraph.store.memory import InMemoryStore

    class UnreachableStore(InMemoryStore):
        """Fails on every call, as a dropped database connection would."""

        async def abatch(self, ops):
            raise ConnectionError("store unreachable")

    agent = builder.compile(checkpointer=InMemorySaver(), store=UnreachableStore())
    out = await say(agent, "I live in Hangzhou.")
    assert out["messages"][-1].content == "ok"
    assert "unavailable" in chat_prompts(model)[-1]
    assert out.get("memory_cursor", 0) == 0  # the write will be retried


async def test_a_failing_embedder_loses_nothing(model, index):
    """The embedder dies mid-conversation: the turn still answers, and what the
    user said is written once the embedder is back."""
    from langchain_core.embeddings import Embeddings
    from langgraph.store.memory import InMemoryStore

    class Flaky(Embeddings):
        broken = False

        def embed_documents(self, texts):
            if self.broken:
                raise ConnectionError("embedding service down")
            return index["embed"].embed_documents(texts)

        def embed_query(self, text):
            if self.broken:
                raise ConnectionError("embedding service down")
            return index["embed"].embed_query(text)

    flaky = Flaky()
    store = InMemoryStore(index={**index, "embed": flaky})
    agent = builder.compile(checkpointer=InMemorySaver(), store=store)
    await say(agent, "I'm Zhou.")
    flaky.broken = True
    out = await say(agent, "I live in Hangzhou and I'm allergic to peanuts.")
    assert out["messages"][-1].content == "ok"
    assert "unavailable" in chat_prompts(model)[-1]
    assert await alist_notes(store, User.of("u_zhou")) == []  # the note could not be written yet
    flaky.broken = False
    await say(agent, "Thanks!")
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user is allergic to peanuts."]


async def test_orders_refunds_and_payments_are_never_remembered(agent, model, store, script):
    """The extractor's output and the remember_note tool alike: a business
    record is dropped (or refused to the model), the other facts are kept."""
    script.extract = lambda m, t: tool_call(
        "MemoryExtraction", notes=["My order #8841 was refunded.", "The user is allergic to peanuts."]
    )
    await say(agent, "My order #8841 was refunded. Also I'm allergic to peanuts.")
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user is allergic to peanuts."]

    steps = iter(
        [
            tool_call("remember_note", text="The user's refund for order 8841 was approved."),
            AIMessage(content="I cannot keep that."),
        ]
    )
    script.chat = lambda messages: next(steps)
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    out = await say(agent, "Remember that my refund was approved.")
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
    assert "order system" in refused.content
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user is allergic to peanuts."]


async def test_a_note_the_model_offers_in_other_words_than_the_users_is_refused_to_it(agent, model, store, script):
    """remember_note holds the model's text to the extractor's rule (issue 42:
    Qwen2.5-Coder-1.5B kept "请记住我对花生过敏" as "I'm allergic to peanuts")."""
    steps = iter(
        [
            tool_call("remember_note", text="I'm allergic to peanuts"),
            tool_call("remember_note", text="用户对花生过敏。"),
            AIMessage(content="好的。"),
        ]
    )
    script.chat = lambda messages: next(steps)
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    out = await say(agent, "请记住我对花生过敏。")
    answers = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "user's own words" in answers[0] and "用户对花生过敏" in answers[1]
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["用户对花生过敏。"]


async def test_a_backlog_left_by_a_store_outage_is_written_oldest_first_over_turns(
    agent, model, store, script, monkeypatch
):
    """However long the store was down, every pending message is written once
    it is back: oldest first, at most MAX_EXTRACTION_CALLS bounded calls per turn."""
    from mnemo.writing import pipeline
    from mnemo.writing.pipeline import MAX_EXTRACTION_CALLS, MESSAGES_PER_CALL

    async def store_down(*args, **kwargs):
        raise RuntimeError("the store is down")

    written = pipeline.aapply_extraction
    monkeypatch.setattr(pipeline, "aapply_extraction", store_down)
    backlog = [f"message number {i}" for i in range(MESSAGES_PER_CALL * MAX_EXTRACTION_CALLS + 2)]
    for text in backlog:
        out = await say(agent, text)
    assert len(extraction_prompts(model)) == len(backlog)  # one failed call per turn, no more
    assert out["memory_cursor"] == 0 and out["memory_failures"] == 0  # a store failure counts against no message
    monkeypatch.setattr(pipeline, "aapply_extraction", written)

    tried = len(extraction_prompts(model))
    out = await say(agent, "I live in Hangzhou.")
    calls = [said_in(p) for p in extraction_prompts(model)[tried:]]
    assert calls == [
        backlog[i : i + MESSAGES_PER_CALL] for i in range(0, len(calls) * MESSAGES_PER_CALL, MESSAGES_PER_CALL)
    ]
    assert len(calls) == MAX_EXTRACTION_CALLS
    assert 0 < out["memory_cursor"] < len(out["messages"])  # past what was written, before the rest
    assert await aget_profile(store, User.of("u_zhou")) == {}  # the newest words wait their turn

    out = await say(agent, "Thanks!")
    last = [said_in(p) for p in extraction_prompts(model)[tried + MAX_EXTRACTION_CALLS :]]
    assert last == [[*backlog[MESSAGES_PER_CALL * MAX_EXTRACTION_CALLS :], "I live in Hangzhou.", "Thanks!"]]
    assert out["memory_cursor"] == len(out["messages"])
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"


async def test_a_message_the_extractor_keeps_failing_on_is_given_up_alone(agent, model, store, script, monkeypatch):
    """Batches shrink after each extractor failure (10, 5, 2, 1 messages); the
    message that fails alone is given up, and what came after it is written."""
    # One way of structured output: one model call per extraction (a failed one would try them all).
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "function_calling")

    def picky(messages, tool_names):
        if "poison" in messages[-1].text:
            return AIMessage(content="no tool call")  # -> None: a failed extraction
        return naive_extraction(messages, tool_names)

    script.extract = picky
    said = ["A poison pill.", "I'm Zhou.", "I live in Hangzhou.", "hello", "one more"]
    for text in said[:-1]:
        out = await say(agent, text)
    assert await aget_profile(store, User.of("u_zhou")) == {}  # held up behind the failing message
    assert out["memory_cursor"] == 0 and out["memory_failures"] == 4
    out = await say(agent, said[-1])
    assert [said_in(p) for p in extraction_prompts(model)] == [said[:1], said[:2], said[:2], said[:1], said[1:]]
    profile = await aget_profile(store, User.of("u_zhou"))
    assert profile["name"]["value"] == "Zhou" and profile["city"]["value"] == "Hangzhou"
    assert out["memory_cursor"] == len(out["messages"]) and out["memory_failures"] == 0


async def test_one_failed_extraction_is_forgotten_once_its_messages_are_written(agent, model, store, script):
    script.extract = lambda m, t: AIMessage(content="no tool call")
    out = await say(agent, "I'm Zhou.")
    assert out["memory_failures"] == 1 and out["memory_cursor"] == 0
    script.extract = naive_extraction
    out = await say(agent, "I live in Hangzhou.")
    assert said_in(extraction_prompts(model)[-1]) == ["I'm Zhou.", "I live in Hangzhou."]
    assert out["memory_failures"] == 0 and out["memory_cursor"] == len(out["messages"])


async def test_context_knobs_shape_the_prompt(agent, model, store, script):
    """recall_limit, recent_limit and memory_char_budget reach load_memory."""
    from mnemo.notes.writes import aremember_many

    facts = [f"The user owns a {thing}." for thing in ("parrot", "bicycle", "piano", "tent", "kayak", "drone")]
    await aremember_many(store, User.of("u_zhou"), facts)
    await say(agent, "Tell me about my parrot.", recall_limit=5, recent_limit=3)
    full = chat_prompts(model)[-1]
    assert "The user owns a parrot." in full.split("Notes relevant to the latest message:")[1]

    await say(agent, "Tell me about my parrot.", recall_limit=0, recent_limit=0)
    assert "Notes: (none)" in chat_prompts(model)[-1] and "parrot" not in chat_prompts(model)[-1].split("Profile:")[1]

    await say(agent, "Tell me about my parrot.", recall_limit=5, recent_limit=3, memory_char_budget=200)
    tight = memory_block(chat_prompts(model)[-1])
    assert len(tight.strip()) <= 200 < len(memory_block(full).strip())
    assert tight.count("The user owns") < full.count("The user owns")


async def test_a_thread_belongs_to_the_user_of_its_first_run(agent, model, store):
    await say(agent, "Hi, I'm Zhou and I live in Hangzhou.", user="alice", thread="t1")
    assert (await aget_profile(store, User.of("alice")))["city"]["value"] == "Hangzhou"
    calls = len(model.calls)
    from nodes.load_memory import ForeignThreadError

    with pytest.raises(ForeignThreadError, match="another user"):
        await say(agent, "Where do I live?", user="bob", thread="t1")
    assert len(model.calls) == calls  # refused before any model call
    assert await aget_profile(store, User.of("bob")) == {}  # alice's words never reach bob's memory
    await say(agent, "Thanks!", user="alice", thread="t1")  # the owner goes on


async def test_an_admin_identity_acts_for_the_user_the_run_names(agent, model, store):
    admin = {"langgraph_auth_user_id": "backend", "langgraph_auth_user": {"identity": "backend", "role": "admin"}}
    await say(agent, "I live in Hangzhou.", user="alice", config=admin)
    assert (await aget_profile(store, User.of("alice")))["city"]["value"] == "Hangzhou"
    assert await aget_profile(store, User.of("backend")) == {}
    with pytest.raises(MissingUserError):  # naming nobody: no default user, admin or not
        await say(agent, "hello", user="", config=admin, thread="t2")


async def test_a_note_carries_what_the_user_replied_to_never_as_the_fact(agent, model, store, script):
    from mnemo.core import NOTES

    question = "Before I book the hamper: do you have any food allergies?"
    script.chat = lambda messages: AIMessage(content=question)
    await say(agent, "I'd like to order a gift hamper.")
    script.chat = lambda messages: AIMessage(content="Noted, no peanuts.")
    await say(agent, "Yes, I'm allergic to peanuts.")
    prompts = extraction_prompts(model)
    assert len(prompts) == 2 and "allergic to peanuts" in prompts[1]
    assert all("food allergies" not in p for p in prompts)  # the extractor saw only the user
    (item,) = await store.asearch(User.of("u_zhou").namespace(NOTES))
    assert item.value["text"] == "The user is allergic to peanuts." and item.value["context"] == question

    await say(agent, "What can I eat?", thread="t2")
    block = memory_block(chat_prompts(model)[-1])
    assert "allergic to peanuts" in block  # the note was loaded...
    assert "food allergies" not in block  # ...as the user's fact alone


async def test_a_note_the_model_saves_carries_what_the_user_replied_to(agent, model, store, script):
    from mnemo.core import NOTES

    question = "Do you have any pets at home?"
    script.chat = lambda messages: AIMessage(content=question)
    await say(agent, "Hi", memory_write_mode="hot")
    steps = iter([tool_call("remember_note", text="The user has a cat called Mia."), AIMessage(content="Noted.")])
    script.chat = lambda messages: next(steps)
    await say(agent, "Yes, a cat called Mia.", memory_write_mode="hot")
    (item,) = await store.asearch(User.of("u_zhou").namespace(NOTES))
    assert item.value["text"] == "The user has a cat called Mia." and item.value["context"] == question
