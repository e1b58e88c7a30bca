"""What the graph tests share: a scripted "model" that answers by rule and
extracts like a credulous model would, one turn through the compiled agent,
the prompts the model saw, and a stand-in for the LangGraph server's
scheduling. The fixtures built on them (``script``, ``model``, ``agent``,
``fake_platform``) are in ``conftest.py``."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from harness.scripted import tool_call
from nodes.context import Context

#: What a run needs to count as started by a LangGraph server (nodes.background_writer.on_platform).
ON_PLATFORM = {"langgraph_request_id": "req-1"}

CITY = re.compile(r"(?:live in|住在)\s*([A-Z][a-z]+|[\u4e00-\u9fff]{2})")
NAME = re.compile(r"(?:I'm|I am|我叫)\s*([A-Z][a-z]+|[\u4e00-\u9fff]{2})")


def naive_extraction(messages, tool_names) -> AIMessage:
    """Extracts whatever the prompt shows, like a credulous model would: if an
    assistant's words reached it, their city would be taken too."""
    text = messages[-1].text
    args = {}
    if m := CITY.search(text):
        args["city"] = m.group(1)
    if m := NAME.search(text):
        args["name"] = m.group(1)
    if "forget where I live" in text:
        args["forget_fields"] = ["city"]
    if "allergic to peanuts" in text:
        args["notes"] = ["The user is allergic to peanuts."]
    return tool_call("MemoryExtraction", **args)


class Script:
    """Chat replies by rule; extraction by ``extract`` (replaceable per test)."""

    def __init__(self):
        self.extract = naive_extraction
        self.chat = lambda messages: AIMessage(content="ok")

    def __call__(self, messages, tool_names):
        if "MemoryExtraction" in tool_names:
            return self.extract(messages, tool_names)
        return self.chat(messages)


async def say(agent, text, *, user="u_zhou", thread="t1", config=None, **ctx):
    cfg = {"configurable": {"thread_id": thread, **(config or {})}}
    return await agent.ainvoke(
        {"messages": [HumanMessage(text)]}, cfg, context=Context(user_id=user, model="scripted", **ctx)
    )


def is_summary_call(messages) -> bool:
    """A request of the summariser (mnemo.turn.history), not a chat turn."""
    return isinstance(messages[0], SystemMessage) and messages[0].text.startswith("You maintain the running summary")


def is_memory_work(messages) -> bool:
    """A summary or instructions-rewrite request: memory work, not a chat turn."""
    return isinstance(messages[0], SystemMessage) and messages[0].text.startswith("You maintain the ")


def chat_prompts(model) -> list[str]:
    """System prompts of the calls that were chat turns (not extraction, summaries or rewrites)."""
    return [
        c["messages"][0].text
        for c in model.calls
        if isinstance(c["messages"][0], SystemMessage)
        and not is_memory_work(c["messages"])
        and "MemoryExtraction" not in c["tool_names"]
    ]


def memory_block(prompt: str) -> str:
    """The body of the ``<user_memory>`` block of a system prompt."""
    return prompt.split("<user_memory>\n", 1)[1].split("\n</user_memory>", 1)[0]


def extraction_prompts(model) -> list[str]:
    return [c["messages"][-1].text for c in model.calls if "MemoryExtraction" in c["tool_names"]]


def said_in(prompt: str) -> list[str]:
    """The user's words an extraction request carried, in order (quoted data, one line each)."""
    return re.findall(r'^- "(.*)"$', prompt.split("<user_messages>")[1].split("</user_messages>")[0], re.M)


class FakeServer:
    """What the writer needs from the LangGraph server: scheduling (each
    request recorded with its arguments, nothing run: the server's
    ``rollback`` debounce, in which the latest schedule replaces a waiting
    one, is exercised end to end by tests/e2e/test_background.py) and reading
    a thread's state (from the agent's checkpointer)."""

    def __init__(self, agent):
        self.agent = agent
        self.scheduled: list[dict] = []
        self.threads = self
        self.runs = self

    async def create(self, thread_id, assistant_id, **kwargs):
        self.scheduled.append({"thread_id": thread_id, "assistant_id": assistant_id, **kwargs})
        return {"run_id": f"r{len(self.scheduled)}"}

    async def get_state(self, thread_id):
        snapshot = await self.agent.aget_state({"configurable": {"thread_id": thread_id}})
        return {"values": snapshot.values}
