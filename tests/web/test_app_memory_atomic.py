"""A /memory route's write is one write, on both stores the server runs: a store
that fails in the middle of it answers 503 with ``Retry-After`` and keeps
nothing of the request (no note, no audit record, no index entry or vector),
and the same request afterwards goes through once.

The failure is injected at every put of the request in turn (the 1st, the
2nd, ... until the request has fewer puts and succeeds):

* ``platform`` (``langgraph dev``'s in-memory store): the call holding that put
  fails, as the store fails a call (it applies a call's puts only after all
  that can fail, its embedding, is done).
* ``postgres``: inside PostgreSQL, at that row of ``store``: a full disk
  (``disk_full``) or the server ending the session (PostgreSQL stopped between
  the statements).

A call interrupted between its statements on the client side (a cancelled
run or request) leaves nothing either: the last test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import psycopg
import pytest
from langgraph.store.base import BaseStore, Op, PutOp, Result
from starlette.applications import Starlette
from starlette.routing import Route

from harness.store_backends import import_platform_store_module, open_platform_store, platform_index, truncate
from mnemo import StoreUnavailableError, User, aremember
from mnemo.access import aexport_user
from mnemo.access.tokens import mint_token
from mnemo.audit import averify
from mnemo.stores.factory import open_store

SECRET = "t" * 40
ALICE = User.of("alice")


class FailsAtPut(BaseStore):
    """The platform's store, failing the call that holds the ``at``-th put it is
    given (counted over calls; ``None``: never)."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner, self.puts = inner, 0
        self.at: int | None = None
        self.supports_ttl, self.ttl_config = inner.supports_ttl, getattr(inner, "ttl_config", None)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise TypeError("async only")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        puts = sum(isinstance(op, PutOp) for op in ops)
        before, self.puts = self.puts, self.puts + puts
        if self.at is not None and before < self.at <= self.puts:
            raise StoreUnavailableError(f"the store failed at put {self.at}")
        return await self.inner.abatch(ops)


#: Fails the ``n``-th row written to ``store`` (counted by a sequence, which a
#: rollback does not roll back), the way ``how`` says.
_TRIGGER = """
CREATE SEQUENCE IF NOT EXISTS test_puts;
CREATE OR REPLACE FUNCTION test_fail_at_put() RETURNS trigger AS $$
BEGIN
  IF nextval('test_puts') = {n} THEN
    {how};
  END IF;
  RETURN COALESCE(NEW, OLD);
END $$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS test_fail_at_put ON store;
CREATE TRIGGER test_fail_at_put BEFORE INSERT OR UPDATE OR DELETE ON store
  FOR EACH ROW EXECUTE FUNCTION test_fail_at_put();
"""
HOW = {
    "disk_full": "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'",
    "stopped": "PERFORM pg_terminate_backend(pg_backend_pid())",
}


class Backend:
    """A store as the server has it, how to fail it at a put, and all it holds."""

    def __init__(
        self, store: BaseStore, arm: Callable[[int | None], Awaitable[None]], dump: Callable[[], Awaitable[Any]]
    ) -> None:
        self.store, self.arm, self.dump = store, arm, dump


@pytest.fixture(params=["platform", "postgres-disk_full", "postgres-stopped"])
async def backend(request, cached_index, tmp_path_factory, tmp_path) -> AsyncIterator[Backend]:
    if request.param == "platform":
        import_platform_store_module(tmp_path_factory.mktemp("langgraph_api"))
        index = platform_index(cached_index["embed"]) | {"dims": cached_index["dims"]}
        async with open_platform_store(index, tmp_path) as platform:
            failing = FailsAtPut(platform)
            inner = platform._store  # type: ignore[attr-defined]  # the BatchedStore's InMemoryStore

            async def arm(n: int | None) -> None:
                failing.at, failing.puts = n, 0

            async def dump() -> Any:
                items = {(ns, k): it.value for ns, by_key in inner._data.items() for k, it in by_key.items()}
                vectors = {(ns, k, p) for ns, by_key in inner._vectors.items() for k, v in by_key.items() for p in v}
                return items, vectors

            yield Backend(failing, arm, dump)
        return
    how = HOW[request.param.split("-", 1)[1]]
    uri = request.getfixturevalue("pg").uri
    async with open_store(postgres_uri=uri, index=cached_index) as store:
        await truncate(uri)

        async def arm(n: int | None) -> None:
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                if n is None:
                    await conn.execute("DROP TRIGGER IF EXISTS test_fail_at_put ON store")
                else:
                    await conn.execute(_TRIGGER.replace("{n}", str(n)).replace("{how}", how))
                    await conn.execute("ALTER SEQUENCE test_puts RESTART")

        async def dump() -> Any:
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                items = await (await conn.execute("SELECT prefix, key, value FROM store ORDER BY 1, 2")).fetchall()
                vectors = await (
                    await conn.execute("SELECT prefix, key, field_name FROM store_vectors ORDER BY 1, 2, 3")
                ).fetchall()
            return items, vectors

        try:
            yield Backend(store, arm, dump)
        finally:
            await arm(None)


@asynccontextmanager
async def routes(monkeypatch, store: BaseStore) -> AsyncIterator[httpx.AsyncClient]:
    """The /memory routes and operator commands on ``store`` as the server's own store."""
    monkeypatch.setenv("MNEMO_JWT_SECRET", SECRET)
    import langgraph_sdk

    import web.server_store
    from web.app_memory import ROUTES
    from web.operator import operator

    async def own_store():
        return store

    monkeypatch.setattr(web.server_store, "get", own_store)
    monkeypatch.setattr(langgraph_sdk, "get_client", lambda **kw: None)
    app = Starlette(
        routes=[
            *(Route(p, e, methods=m) for p, e, m in ROUTES),
            Route("/memory/operator/{name}", operator, methods=["POST"]),
        ]
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://mnemo") as http:
        yield http


def auth(*, admin: bool = False) -> dict[str, str]:
    who = mint_token("crm", secret=SECRET, role="admin") if admin else mint_token("alice", secret=SECRET)
    return {"authorization": f"Bearer {who}"}


#: Each route's request: (method, path, body, admin), with ``{id}`` the id of a note alice has.
REQUESTS = {
    "add note": ("POST", "/memory/notes", {"text": "Prefers e-mail over phone."}, False),
    "patch note": ("PATCH", "/memory/notes/{id}", {"text": "Has two dogs, Rex and Bella."}, False),
    "invalidate note": ("POST", "/memory/notes/{id}/invalidate", {}, False),
    "patch profile": ("PATCH", "/memory/profile", {"city": "Hangzhou", "name": "Zhou"}, False),
    "import": ("POST", "/memory/operator/import", None, True),
    "migration": (
        "POST",
        "/memory/operator/migrate-langgraph",
        {
            "user_id": "alice",
            "namespace_template": "memories/{user_id}",
            "items": [
                {"key": "m1", "value": {"content": "Lives in Lyon.", "context": "intro"}, "created_at": "2026-01-01"},
                {"key": "p1", "value": {"user_name": "Alice", "occupation": "nurse"}, "created_at": "2026-01-02"},
            ],
        },
        True,
    ),
}


@pytest.mark.parametrize("name", list(REQUESTS))
async def test_a_write_failing_at_any_of_its_puts_is_503_keeps_nothing_and_a_retry_goes_through_once(
    monkeypatch, backend, name
):
    method, path, body, admin = REQUESTS[name]
    store = backend.store
    (note,) = [await aremember(store, ALICE, "Has a dog named Rex.")]
    if name == "import":  # another user's memory, exported: the document alice imports
        bob = User.of("bob")
        await aremember(store, bob, "Speaks Cantonese at home.")
        body = {"user_id": "alice", "document": await aexport_user(store, bob)}
    path = path.replace("{id}", note["note"]["id"])
    async with routes(monkeypatch, store) as http:
        before = await backend.dump()
        for n in range(1, 200):
            await backend.arm(n)
            res = await http.request(method, path, json=body, headers=auth(admin=admin))
            if res.status_code != 503:
                break
            assert res.headers["retry-after"] == "5", res.text
            assert await backend.dump() == before, f"put {n} failed and part of the request stayed"
        await backend.arm(None)
        assert res.status_code in (200, 201), res.text
        assert n > 2, f"the request wrote {n - 1} puts: the failure was not in the middle of it"
        after = await backend.dump()
        assert after != before  # the request went through, once...
        if name == "add note":
            assert res.json()["status"] == "stored"
            again = await http.request(method, path, json=body, headers=auth(admin=admin))
            assert again.json()["status"] == "duplicate"  # ...and nothing of a failed try is left to repeat
    # The audit trail is whole: the failed tries left no record and broke no link.
    verified = await averify(store, ALICE)
    assert verified["ok"], verified


async def test_a_postgres_call_interrupted_between_its_statements_keeps_nothing(monkeypatch, cached_index, pg):
    """The client side stops a call after its first write statement (a
    cancelled run or request): the statements sent are rolled back."""
    async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
        await truncate(pg.uri)
        await store.aput(("alice", "t"), "old", {"text": "old"})
        real = psycopg.AsyncCursor.execute
        statements: list[str] = []

        async def execute(self, query, *args, **kwargs):
            sql = str(query)
            if "INSERT INTO store" in sql or "DELETE FROM store" in sql:
                statements.append(sql)
                if len(statements) == 2:
                    raise asyncio.CancelledError("interrupted between statements")
            return await real(self, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.AsyncCursor, "execute", execute)
        ops = [PutOp(("alice", "t"), "old", None), PutOp(("alice", "t"), "new", {"text": "new"})]
        with pytest.raises(asyncio.CancelledError):
            await store.abatch(ops)
        monkeypatch.setattr(psycopg.AsyncCursor, "execute", real)
        assert len(statements) == 2  # the delete was sent, the insert was not
        assert await store.aget(("alice", "t"), "old") is not None
        assert await store.aget(("alice", "t"), "new") is None
