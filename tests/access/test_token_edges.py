"""mnemo.access.tokens at its edges (mutmut survivors of scripts/mutation):
the shortest secret and ttl accepted, the clock skew tolerated and no more,
the claims a token carries, a dev secret under a missing directory, and the
reasons a refusal gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import jwt
import pytest

from mnemo.access.tokens import (
    LEEWAY,
    MIN_SECRET_LENGTH,
    InvalidTokenError,
    SecretError,
    ensure_dev_secret,
    mint_token,
    parse_ttl,
    verify_token,
)

SECRET = "s" * MIN_SECRET_LENGTH  # the shortest secret accepted


def test_the_shortest_secret_and_ttl_are_accepted():
    assert verify_token(mint_token("u1", secret=SECRET), secret=SECRET).user_id == "u1"
    with pytest.raises(SecretError, match=f"use at least {MIN_SECRET_LENGTH} random characters"):
        mint_token("u1", secret=SECRET[1:])
    assert parse_ttl("1") == timedelta(seconds=1) and parse_ttl("1d") == timedelta(days=1)


def test_a_token_carries_its_times_and_is_signed_with_hs256():
    issued = datetime(2030, 1, 1, tzinfo=UTC)
    token = mint_token("u1", secret=SECRET, ttl=timedelta(hours=2), now=issued)
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims == {"sub": "u1", "role": "user", "iat": 1893456000, "exp": 1893456000 + 7200}


def test_clock_skew_is_tolerated_up_to_the_leeway():
    just_expired = datetime.now(UTC) - timedelta(minutes=1) - LEEWAY / 2
    assert verify_token(mint_token("u1", secret=SECRET, ttl=timedelta(minutes=1), now=just_expired), secret=SECRET)
    long_expired = datetime.now(UTC) - timedelta(minutes=1) - LEEWAY * 3
    with pytest.raises(InvalidTokenError) as refused:
        verify_token(mint_token("u1", secret=SECRET, ttl=timedelta(minutes=1), now=long_expired), secret=SECRET)
    assert str(refused.value) == "Token expired: mint a new one"


def test_refusals_give_their_reason():
    with pytest.raises(InvalidTokenError) as wrong:
        verify_token(mint_token("u1", secret="o" * MIN_SECRET_LENGTH), secret=SECRET)
    assert str(wrong.value) == "Token signature does not match this server's secret"
    empty_sub = jwt.encode({"sub": " ", "exp": 4102444800}, SECRET, algorithm="HS256")
    with pytest.raises(InvalidTokenError) as empty:
        verify_token(empty_sub, secret=SECRET)
    assert str(empty.value) == "Token 'sub' (the user id) is empty"
    with pytest.raises(SecretError) as unset:
        mint_token("u1", secret="")
    advice = "must carry a signed token). For development, start with ./scripts/dev, which creates a local secret in"
    assert advice in str(unset.value)


def test_the_dev_secret_is_made_under_missing_directories_and_kept(tmp_path):
    path = tmp_path / "a" / "b" / "jwt-secret"
    secret = ensure_dev_secret(path)
    path.unlink()  # the directories stay: making the secret again must not fail on them
    again = ensure_dev_secret(path)
    assert again != secret and ensure_dev_secret(path) == again
