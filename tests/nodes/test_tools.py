"""nodes.tools through the compiled graph (scripted chat model, real embedder):
what ``forget_note(about=...)`` answers when a note is named clearly and when not."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from harness.scripted import tool_call
from mnemo import User, alist_notes, aremember_many
from tests.agent_harness import say

CATS, MILL, EMAIL = "I have two cats, Mia and Leo.", "I live near the old mill.", "I prefer to be contacted by email."


async def test_forget_note_by_description_deletes_a_clear_match_and_otherwise_asks_which(agent, model, store, script):
    user = User.of("u_zhou")
    await aremember_many(store, user, [CATS, MILL, EMAIL], contexts=[None, "Two cats! Do Mia and Leo get along?", None])
    ids = {n["text"]: n["id"] for n in await alist_notes(store, user)}
    steps = iter(
        [
            tool_call("forget_note", about="my dog"),
            AIMessage(content="Which one?"),
            tool_call("forget_note", about="cats"),
            AIMessage(content="Done."),
        ]
    )
    script.chat = lambda messages: next(steps)
    answer = (await say(agent, "Forget my dog."))["messages"][-2].content
    assert answer.startswith("No note clearly says that; nothing was deleted. Ask the user which one they mean")
    assert ids[CATS] in answer and answer.endswith("</user_memory>")  # the candidates, quoted, with full ids
    assert len(await alist_notes(store, user)) == 3
    answer = (await say(agent, "Forget my cats."))["messages"][-2].content
    assert answer.startswith("Deleted:") and "Mia and Leo" in answer and "old mill" not in answer
    assert {n["text"] for n in await alist_notes(store, user)} == {MILL, EMAIL}
