"""Shared examples through a real ``./scripts/dev``: a case a user closed
(``POST /feedback``) with their phone number in it, promoted by an admin with
``python -m mnemo promote-episode --url``, reaches other users (the store API,
their prompt) without one digit of the number; the user's own copy is found
by meaning in their next similar case."""

from __future__ import annotations

import pytest

from harness.devserver import DevServer, chat, cli, client, resolved_case, system_prompts

pytestmark = pytest.mark.e2e

SAID = "My purifier makes no air; my phone is +33 6 12 34 56 78."


async def test_a_phone_number_before_a_full_stop_reaches_no_other_user(workdir, server_env, stub):
    import json

    server = DevServer(workdir, server_env)
    server.start()
    try:
        zhou, li = client(server, "u_zhou"), client(server, "u_li")
        episode = await resolved_case(server, "u_zhou", SAID)
        assert episode["text"] == SAID  # the user's own copy, as said
        # The route's episode is indexed: the user's next similar case finds it by meaning.
        run = await chat(zhou, "My purifier makes no air, what should I do?", user_id="u_zhou")
        assert run["status"] == "success", server.output()
        assert [line for line in system_prompts(stub)[-1].splitlines() if "Customer:" in line and SAID in line]

        done = cli("promote-episode", "u_zhou", episode["id"], url=server.url)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["text"] == "My purifier makes no air; my phone is [phone]."

        (shared,) = (await li.store.search_items(["org", "episodes"], limit=10))["items"]
        assert shared["value"]["text"] == "My purifier makes no air; my phone is [phone]."
        assert not any(c.isdigit() for c in json.dumps(shared["value"]["text"]))

        run = await chat(li, "My purifier makes no air, what should I do?", user_id="u_li")
        assert run["status"] == "success", server.output()
        (customer,) = [line for line in system_prompts(stub)[-1].splitlines() if "Customer:" in line]
        assert "my phone is [phone]." in customer  # the shared case is the example Li's model reads
        assert not any(c.isdigit() for c in customer.split("Customer:")[1])
    finally:
        server.stop()


#: Issue 56: writings that once reached another user's prompt (each alone:
#: tests/episodes/test_cases.py, tests/core/test_personal_data.py).
HIDDEN = (
    "My purifier makes no air; card 4111|1111|1111|1111, call 650 dash 253 dash 0000, mail "
    "bob-at-example-dot-com or bob @ example . com, 电话一三八两两一三八两两两, "
    "I live at Baker Street 221B, 建国路第88号."
)
HIDDEN_SHARED = (
    "My purifier makes no air; card [card], call [phone], mail [email] or [email], 电话[phone], "
    "I live at [address], [address]."
)


async def test_personal_data_however_written_reaches_no_other_user(workdir, server_env, stub):
    import json

    server = DevServer(workdir, server_env)
    server.start()
    try:
        li = client(server, "u_li")
        episode = await resolved_case(server, "u_zhou", HIDDEN)
        assert episode["text"] == HIDDEN  # the user's own copy, as said

        done = cli("promote-episode", "u_zhou", episode["id"], url=server.url)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["text"] == HIDDEN_SHARED

        run = await chat(li, "My purifier makes no air, what should I do?", user_id="u_li")
        assert run["status"] == "success", server.output()
        (customer,) = [line for line in system_prompts(stub)[-1].splitlines() if "Customer:" in line]
        assert HIDDEN_SHARED in customer  # positive, first: the shared case is the example Li's model reads
        for data in ("1111", "253", "bob", "example", "一三八", "两两", "221", "88"):
            assert data not in customer, data
    finally:
        server.stop()
