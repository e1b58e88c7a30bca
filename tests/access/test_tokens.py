"""mnemo.access.tokens: minting and verifying the server's bearer tokens (no server); and at
its edges (mutmut survivors of scripts/mutation): the shortest secret and ttl accepted, the
clock skew tolerated and no more, the claims a token carries, a dev secret under a missing
directory, and the reasons a refusal gives."""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta

import jwt
import pytest

from mnemo import MissingUserError
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
from mnemo.core import Caller

SECRET = "s" * 64  # long enough for the HS512 case too
OTHER = "o" * 64
SHORTEST = "s" * MIN_SECRET_LENGTH  # the shortest secret accepted


def test_a_minted_token_verifies_to_its_user_and_role():
    assert verify_token(mint_token("u_alice", secret=SECRET), secret=SECRET) == Caller("u_alice", "user")
    admin = verify_token(mint_token("backend", secret=SECRET, role="admin"), secret=SECRET)
    assert admin.admin and admin.user_id == "backend"
    mapped = verify_token(mint_token("zhou.wang@x.com", secret=SECRET), secret=SECRET)
    assert mapped.label.startswith("~")  # the same mapping as the memory's namespaces


def test_role_defaults_to_user_when_the_claim_is_absent():
    token = jwt.encode({"sub": "u1", "exp": datetime.now(UTC) + timedelta(minutes=5)}, SECRET, algorithm="HS256")
    assert verify_token(token, secret=SECRET) == Caller("u1", "user")


@pytest.mark.parametrize(
    ("claims", "message"),
    [
        ({"sub": "u1"}, "'exp'"),  # never expires: refused
        ({"exp": 4102444800}, "'sub'"),
        ({"sub": "", "exp": 4102444800}, "empty"),
        ({"sub": "u1", "role": "root", "exp": 4102444800}, "role"),
        ({"sub": 42, "exp": 4102444800}, "Malformed"),
    ],
)
def test_claims_mnemo_does_not_accept_are_refused(claims, message):
    valid = verify_token(jwt.encode({"sub": "u1", "exp": 4102444800}, SECRET, algorithm="HS256"), secret=SECRET)
    assert valid.user_id == "u1"  # the same encoding with good claims passes
    with pytest.raises(InvalidTokenError, match=message):
        verify_token(jwt.encode(claims, SECRET, algorithm="HS256"), secret=SECRET)


def test_expired_wrongly_signed_and_malformed_tokens_are_refused_with_the_reason():
    past = datetime.now(UTC) - timedelta(hours=1)
    with pytest.raises(InvalidTokenError, match="expired"):
        verify_token(mint_token("u1", secret=SECRET, ttl=timedelta(minutes=1), now=past), secret=SECRET)
    with pytest.raises(InvalidTokenError, match="signature"):
        verify_token(mint_token("u1", secret=OTHER), secret=SECRET)
    with pytest.raises(InvalidTokenError, match="Malformed"):
        verify_token("not-a-jwt", secret=SECRET)


def test_only_hs256_is_accepted():
    unsigned = jwt.encode({"sub": "u1", "exp": 4102444800}, None, algorithm="none")
    with pytest.raises(InvalidTokenError):
        verify_token(unsigned, secret=SECRET)
    hs512 = jwt.encode({"sub": "u1", "exp": 4102444800}, SECRET, algorithm="HS512")
    with pytest.raises(InvalidTokenError):
        verify_token(hs512, secret=SECRET)


def test_secrets_and_users_are_checked_when_minting():
    with pytest.raises(SecretError, match="MNEMO_JWT_SECRET is not set"):
        mint_token("u1", secret="")
    with pytest.raises(SecretError, match="too short"):
        mint_token("u1", secret="short")
    with pytest.raises(MissingUserError):
        mint_token(" ", secret=SECRET)
    with pytest.raises(ValueError, match="role"):
        mint_token("u1", secret=SECRET, role="root")


def test_the_dev_secret_is_created_once_private_and_stable(tmp_path):
    path = tmp_path / ".mnemo" / "jwt-secret"
    secret = ensure_dev_secret(path)
    assert len(secret) >= 32 and ensure_dev_secret(path) == secret
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800)])
def test_ttl_spellings(text, seconds):
    assert parse_ttl(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "0", "5x", "-1h", "1.5h"])
def test_bad_ttls_are_refused(text):
    with pytest.raises(ValueError, match="invalid ttl"):
        parse_ttl(text)


# --------------------------------------------------------------------------- at the edges


def test_the_shortest_secret_and_ttl_are_accepted():
    assert verify_token(mint_token("u1", secret=SHORTEST), secret=SHORTEST).user_id == "u1"
    with pytest.raises(SecretError, match=f"use at least {MIN_SECRET_LENGTH} random characters"):
        mint_token("u1", secret=SHORTEST[1:])
    assert parse_ttl("1") == timedelta(seconds=1) and parse_ttl("1d") == timedelta(days=1)


def test_a_token_carries_its_times_and_is_signed_with_hs256():
    issued = datetime(2030, 1, 1, tzinfo=UTC)
    token = mint_token("u1", secret=SHORTEST, ttl=timedelta(hours=2), now=issued)
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims == {"sub": "u1", "role": "user", "iat": 1893456000, "exp": 1893456000 + 7200}


def test_clock_skew_is_tolerated_up_to_the_leeway():
    just_expired = datetime.now(UTC) - timedelta(minutes=1) - LEEWAY / 2
    assert verify_token(mint_token("u1", secret=SHORTEST, ttl=timedelta(minutes=1), now=just_expired), secret=SHORTEST)
    long_expired = datetime.now(UTC) - timedelta(minutes=1) - LEEWAY * 3
    with pytest.raises(InvalidTokenError) as refused:
        verify_token(mint_token("u1", secret=SHORTEST, ttl=timedelta(minutes=1), now=long_expired), secret=SHORTEST)
    assert str(refused.value) == "Token expired: mint a new one"


def test_refusals_give_their_reason():
    with pytest.raises(InvalidTokenError) as wrong:
        verify_token(mint_token("u1", secret="o" * MIN_SECRET_LENGTH), secret=SHORTEST)
    assert str(wrong.value) == "Token signature does not match this server's secret"
    empty_sub = jwt.encode({"sub": " ", "exp": 4102444800}, SHORTEST, algorithm="HS256")
    with pytest.raises(InvalidTokenError) as empty:
        verify_token(empty_sub, secret=SHORTEST)
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
