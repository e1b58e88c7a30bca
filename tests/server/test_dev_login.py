"""The development sign-in (server/dev_login.py) without a server, behind the
layer ``web/app.py`` mounts ahead of it. Served: tests/server/test_auth.py."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

from server.body_bounds import DEV_TOKEN_BODY_BYTES, BodyBounds

CODE = "the-code-of-this-start"
OWN = {"origin": "http://127.0.0.1", "host": "127.0.0.1", "content-type": "application/json"}


@pytest.fixture
def sign_in(monkeypatch) -> TestClient:
    monkeypatch.setenv("MNEMO_JWT_SECRET", "d" * 40)
    monkeypatch.setenv("MNEMO_DEV_LOGIN", "1")
    monkeypatch.setenv("MNEMO_DEV_LOGIN_CODE", CODE)
    from server.dev_login import dev_token

    app = Starlette(routes=[Route("/ui/dev-token", dev_token, methods=["POST"])], middleware=[Middleware(BodyBounds)])
    return TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 50000))


def test_the_sign_in_reads_a_small_body_and_answers_a_bad_one_with_a_4xx(sign_in):
    ok = sign_in.post("/ui/dev-token", json={"user_id": "carol", "code": CODE}, headers=OWN)
    assert ok.status_code == 200 and ok.json()["user_id"] == "carol"  # the precondition: it signs in
    assert sign_in.post("/ui/dev-token", json={"user_id": "carol"}, headers=OWN).status_code == 403
    deep = "[" * 2000 + "]" * 2000  # within the bound, nested past the parser
    assert len(deep) < DEV_TOKEN_BODY_BYTES
    res = sign_in.post("/ui/dev-token", content=deep, headers=OWN)
    assert res.status_code == 400 and "nested too deeply" in res.json()["error"]
    long = {"user_id": "carol", "code": CODE, "pad": "x" * DEV_TOKEN_BODY_BYTES}
    assert sign_in.post("/ui/dev-token", json=long, headers=OWN).status_code == 413
