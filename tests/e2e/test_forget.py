"""``forget_note(about=...)`` through a real ``./scripts/dev`` (issue 56): the
stub model remembers two facts in one thread, the second saved in reply to the
first's acknowledgement, then calls ``forget_note(about="cats")``; only the
note about the cats goes."""

from __future__ import annotations

import pytest

from tests.devserver import DevServer, chat, client

pytestmark = pytest.mark.e2e

USER = "u_mill"


async def notes_of(sdk) -> dict[str, dict]:
    found = await sdk.store.search_items([USER, "notes"], limit=50)
    return {item["value"]["text"]: item["value"] for item in found["items"]}


async def test_forgetting_the_cats_keeps_the_note_saved_in_reply_to_them(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        sdk = client(server, USER)
        thread = (await sdk.threads.create())["thread_id"]
        for said in ("Remember that I have two cats, Mia and Leo.", "Remember that I live near the old mill."):
            assert (await chat(sdk, said, user_id=USER, thread_id=thread))["status"] == "success"
        notes = await notes_of(sdk)
        assert set(notes) == {"I have two cats, Mia and Leo", "I live near the old mill"}
        # The precondition: the mill note's saved context is the reply about the cats.
        assert "two cats" in notes["I live near the old mill"]["context"]

        assert (await chat(sdk, "Forget that cats.", user_id=USER, thread_id=thread))["status"] == "success"
        messages = (await sdk.threads.get_state(thread))["values"]["messages"]
        (answer,) = [m["content"] for m in messages if m["type"] == "tool" and m["name"] == "forget_note"]
        assert answer.startswith("Deleted:") and "Mia and Leo" in answer and "old mill" not in answer
        assert set(await notes_of(sdk)) == {"I live near the old mill"}
    finally:
        server.stop()
