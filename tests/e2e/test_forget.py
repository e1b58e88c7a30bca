"""``forget_note(about=...)`` through a real ``./scripts/dev`` (issue 56): the
stub model remembers two facts in one thread, the second saved in reply to the
first's acknowledgement, then calls ``forget_note(about="cats")``; only the
note about the cats goes."""

from __future__ import annotations

import pytest

from harness.devserver import DevServer, chat, client

pytestmark = pytest.mark.e2e


async def notes_of(sdk, user: str) -> dict[str, dict]:
    found = await sdk.store.search_items([user, "notes"], limit=50)
    return {item["value"]["text"]: item["value"] for item in found["items"]}


async def remember_then_forget(server, user: str, said: list[str], forget: str) -> tuple[str, dict[str, dict]]:
    """In one thread: each of ``said`` (the stub keeps "Remember that X" with
    remember_note, its reply quoting X), then ``forget``; the forget_note answer
    and the notes left, after checking the second note was saved in reply to the first."""
    sdk = client(server, user)
    thread = (await sdk.threads.create())["thread_id"]
    for text in said:
        assert (await chat(sdk, text, user_id=user, thread_id=thread))["status"] == "success"
    notes = await notes_of(sdk, user)
    first, second = (text.removeprefix("Remember that ").rstrip(".") for text in said)
    assert set(notes) == {first, second}
    assert first in notes[second]["context"]  # the precondition: saved in reply to the first one's acknowledgement
    assert (await chat(sdk, forget, user_id=user, thread_id=thread))["status"] == "success"
    messages = (await sdk.threads.get_state(thread))["values"]["messages"]
    (answer,) = [m["content"] for m in messages if m["type"] == "tool" and m["name"] == "forget_note"]
    return answer, await notes_of(sdk, user)


async def test_forgetting_the_cats_keeps_the_note_saved_in_reply_to_them(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        said = ["Remember that I have two cats, Mia and Leo.", "Remember that I live near the old mill."]
        answer, left = await remember_then_forget(server, "u_mill", said, "Forget that cats.")
        assert answer.startswith("Deleted:") and "Mia and Leo" in answer and "old mill" not in answer
        assert set(left) == {"I live near the old mill"}

        said = ["Remember that 我养了两只猫。", "Remember that 我对花生过敏。"]
        answer, left = await remember_then_forget(server, "u_hua", said, "Forget that 我的猫")
        assert answer.startswith("Deleted:") and "我养了两只猫" in answer and "花生" not in answer
        assert set(left) == {"我对花生过敏。"}
    finally:
        server.stop()
